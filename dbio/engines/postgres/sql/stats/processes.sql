-- Server processes: dbio's sessions by pid, and the background processes that do I/O for them.
SELECT pid, backend_type
  FROM pg_stat_activity
 WHERE backend_type <> 'client backend' OR pid = ANY(%(pids)s)
