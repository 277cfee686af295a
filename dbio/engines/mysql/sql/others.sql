-- Sessions of the server working now, as a point count (dbio's own are left out by the caller).
SELECT ID, USER, COMMAND FROM information_schema.PROCESSLIST
 WHERE COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump', 'Killed') AND USER <> 'system user'
   AND ID <> CONNECTION_ID()
