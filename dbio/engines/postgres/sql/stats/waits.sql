-- What each dbio session is doing right now (sampled many times a second).
SELECT pid, state, wait_event_type, wait_event
  FROM pg_stat_activity
 WHERE pid = ANY(%(pids)s)
