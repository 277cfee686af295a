-- Sessions waiting for the run's barrier lock (their statement names it).
SELECT COUNT(*) FROM information_schema.PROCESSLIST
 WHERE STATE LIKE '%%user lock%%' AND INFO LIKE %(pattern)s AND ID <> CONNECTION_ID()
