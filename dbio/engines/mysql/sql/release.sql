-- The common start (now, or another node's), the end of warm-up and the deadline, committed
-- before the barrier lock is released: every session reads them once it passes the barrier.
UPDATE dbio_run_control
   SET started_at  = %(start)s,
       window_open = %(start)s + %(warmup)s,
       deadline    = IF(%(run_time)s > 0, %(start)s + %(warmup)s + %(run_time)s, NULL)
 WHERE run_id = %(run_id)s
