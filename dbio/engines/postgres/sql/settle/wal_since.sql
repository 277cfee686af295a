SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s)::bigint
