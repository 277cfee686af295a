-- The primary's WAL position a standby has caught up with once it has replayed this far
SELECT pg_current_wal_flush_lsn()::text
