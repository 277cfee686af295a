-- pg_stat_wal (PostgreSQL 18: WAL write and sync counts moved to pg_stat_io).
SELECT json_build_object('wal_records', wal_records, 'wal_fpi', wal_fpi, 'wal_bytes', wal_bytes,
                         'wal_buffers_full', wal_buffers_full)
  FROM pg_stat_wal
