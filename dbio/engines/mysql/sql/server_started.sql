-- When the server started, in whole seconds since the epoch: both terms come from the statement's own
-- start (Uptime is counted from it), so every client of one server reads the same instant. MariaDB's
-- status table; MySQL 8 keeps it in performance_schema.global_status instead (server.py tries both).
SELECT CAST(UNIX_TIMESTAMP() - VARIABLE_VALUE AS SIGNED) FROM information_schema.GLOBAL_STATUS
 WHERE VARIABLE_NAME = 'UPTIME'
