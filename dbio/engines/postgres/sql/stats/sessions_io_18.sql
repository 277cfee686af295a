-- Relation I/O of this run's own sessions and of dbio's connections serving the run (control,
-- monitor, wait sampler, read probe, named with the run; PostgreSQL 18: per-backend counters), so that what other
-- client sessions did in the window is what the client backends did besides dbio's, and runs sharing
-- a server (the parts of one run) each count only their own.
SELECT json_build_object('sessions', count(DISTINCT a.pid),
                         'reads', coalesce(sum(b.reads), 0), 'read_bytes', coalesce(sum(b.read_bytes), 0),
                         'writes', coalesce(sum(b.writes), 0), 'write_bytes', coalesce(sum(b.write_bytes), 0),
                         'extends', coalesce(sum(b.extends), 0))
  FROM pg_stat_activity a
 CROSS JOIN LATERAL pg_stat_get_backend_io(a.pid) b
 WHERE (a.application_name LIKE {sessions_like} OR a.application_name IN ({helpers}))
   AND b.object = 'relation'
