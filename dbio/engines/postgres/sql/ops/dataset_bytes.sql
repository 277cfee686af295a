-- What a base backup copies: every database, and the WAL it streams beside them (an estimate).
SELECT (SELECT sum(pg_database_size(oid)) FROM pg_database)::bigint
       + 4 * pg_size_bytes(current_setting('wal_segment_size'));
