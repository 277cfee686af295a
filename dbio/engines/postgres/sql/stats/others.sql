-- Client sessions on the server that are not this run's and are doing something right now: they
-- share the storage and the CPU with the run (a point count, not a counter). A connection still
-- authenticating has neither an application name nor a user yet (both NULL or empty): its pid and
-- state name it. {this_run} (stats.py): dbio's connections that carry no run's number, and this run's;
-- another dbio run's sessions on the same server (in another database) are other work like any.
SELECT json_build_object('active', count(*),
                         'names', coalesce((array_agg(DISTINCT coalesce(nullif(application_name, ''), usename::text,
                                                                        format('pid %s (%s)', pid, state))))[1:5],
                                           '{}'))
  FROM pg_stat_activity
 WHERE backend_type = 'client backend' AND state IS DISTINCT FROM 'idle' AND pid <> pg_backend_pid()
   AND NOT ({this_run})
