-- The current or last wait events of the given connections (the caller adds the list of ids):
-- END_EVENT_ID is NULL while it waits; a nested one has the higher EVENT_ID. Their command and state
-- come from processlist.sql (performance_schema's tables need no temporary table for this join).
SELECT t.PROCESSLIST_ID, w.EVENT_NAME, w.OPERATION, w.END_EVENT_ID IS NULL, w.EVENT_ID
  FROM performance_schema.threads t
  JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID
 WHERE t.PROCESSLIST_ID IN
