-- What performance_schema instruments and keeps on this server (probe): the InnoDB file
-- instruments dbio times I/O with, and the consumers its figures need.
SELECT CONCAT('instrument:', NAME), CONCAT(ENABLED, '/', TIMED) FROM performance_schema.setup_instruments
 WHERE NAME IN ('wait/io/file/innodb/innodb_data_file', 'wait/io/file/innodb/innodb_log_file')
UNION ALL
SELECT CONCAT('consumer:', NAME), ENABLED FROM performance_schema.setup_consumers
 WHERE NAME IN ('global_instrumentation', 'thread_instrumentation', 'events_waits_current')
