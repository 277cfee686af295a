-- The I/O workers (io_method = worker, PostgreSQL 18+): they do the backends' reads, so their wait for
-- a CPU lies within the reads the backends time.
SELECT pid
  FROM pg_stat_activity
 WHERE backend_type = 'io worker'
