-- Where WAL is inserted now, in bytes from the start of WAL.
SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn;
