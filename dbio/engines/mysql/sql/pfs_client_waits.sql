-- Data-file waits of client sessions (threads with a user), those connected now and those that
-- ended alike: the account summary keeps an ended thread's waits. Background threads have no user.
SELECT COALESCE(SUM(COUNT_STAR), 0), COALESCE(SUM(SUM_TIMER_WAIT), 0)
  FROM performance_schema.events_waits_summary_by_account_by_event_name
 WHERE USER IS NOT NULL AND EVENT_NAME = 'wait/io/file/innodb/innodb_data_file'
