-- Sessions waiting at the start barrier (a shared advisory lock request on the run's key).
SELECT count(*)
  FROM pg_locks
 WHERE locktype = 'advisory' AND NOT granted AND mode = 'ShareLock'
   AND classid = %(classid)s AND objid = %(objid)s AND objsubid = 1
   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
