-- Data-file waits of the given connections (the caller adds the list of ids).
SELECT COALESCE(SUM(s.COUNT_STAR), 0), COALESCE(SUM(s.SUM_TIMER_WAIT), 0)
  FROM performance_schema.threads t
  JOIN performance_schema.events_waits_summary_by_thread_by_event_name s ON s.THREAD_ID = t.THREAD_ID
 WHERE s.EVENT_NAME = 'wait/io/file/innodb/innodb_data_file' AND t.PROCESSLIST_ID IN
