-- InnoDB's data and redo log file I/O since the server started, every thread's: counts, bytes
-- and wait time (picoseconds). MISC is what is neither a read nor a write: syncs, opens, closes.
SELECT EVENT_NAME, COUNT_READ, SUM_TIMER_READ, SUM_NUMBER_OF_BYTES_READ, COUNT_WRITE, SUM_TIMER_WRITE,
       SUM_NUMBER_OF_BYTES_WRITE, COUNT_MISC, SUM_TIMER_MISC
  FROM performance_schema.file_summary_by_event_name
 WHERE EVENT_NAME IN ('wait/io/file/innodb/innodb_data_file', 'wait/io/file/innodb/innodb_log_file')
