-- pg_stat_wal (PostgreSQL 14 to 17: with WAL write and sync counts and times).
SELECT json_build_object('wal_records', wal_records, 'wal_fpi', wal_fpi, 'wal_bytes', wal_bytes,
                         'wal_buffers_full', wal_buffers_full, 'wal_write', wal_write, 'wal_sync', wal_sync,
                         'wal_write_time', wal_write_time, 'wal_sync_time', wal_sync_time)
  FROM pg_stat_wal
