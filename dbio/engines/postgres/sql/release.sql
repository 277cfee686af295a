-- Sets the common start (now, or the start another node of the run was released at), the end
-- of warm-up and the deadline; committed before the barrier lock is released, so every session
-- reads them once it passes the barrier.
UPDATE dbio.run_control c
   SET started_at  = t.now,
       window_open = t.now + make_interval(secs => %(warmup)s),
       deadline    = CASE WHEN %(run_time)s > 0 THEN t.now + make_interval(secs => %(warmup)s + %(run_time)s) END
  FROM (SELECT coalesce(to_timestamp(%(start)s::double precision), clock_timestamp()) AS now) t
 WHERE c.run_id = %(run_id)s
RETURNING date_part('epoch', c.started_at), date_part('epoch', c.window_open), date_part('epoch', c.deadline)
