-- Another run's parts in this database: one of their shared holds on a run key that is not this run's
-- (application_name is NULL when this role may not see the holder's session).
SELECT a.application_name, l.pid
FROM pg_locks l
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = %(k1)s::int::oid AND l.objsubid = 2
  AND l.objid >= %(first)s::int::oid AND l.objid <> %(key)s::int::oid
LIMIT 1
