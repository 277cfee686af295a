-- What performance_schema instruments and keeps on this server (probe): the InnoDB file
-- instruments dbio times I/O with, the consumers its figures need, and whether every thread is
-- instrumented: setup_actors decides it for each new session (dbio's own, and every other user's),
-- performance_schema.threads says it for each thread now. A thread left out does its I/O untimed
-- and its waits unseen: averages over the status counters would be too low, its samples "CPU".
SELECT CONCAT('instrument:', NAME), CONCAT(ENABLED, '/', TIMED) FROM performance_schema.setup_instruments
 WHERE NAME IN ('wait/io/file/innodb/innodb_data_file', 'wait/io/file/innodb/innodb_log_file')
UNION ALL
SELECT CONCAT('consumer:', NAME), ENABLED FROM performance_schema.setup_consumers
 WHERE NAME IN ('global_instrumentation', 'thread_instrumentation', 'events_waits_current')
UNION ALL
SELECT 'actors:every user', IF(SUM(HOST = '%' AND USER = '%' AND ROLE = '%' AND ENABLED = 'YES') > 0
                                 AND SUM(ENABLED <> 'YES') = 0, 'YES', 'NO')
  FROM performance_schema.setup_actors
UNION ALL
SELECT 'threads:every thread', IF(SUM(INSTRUMENTED <> 'YES') = 0, 'YES', 'NO') FROM performance_schema.threads
