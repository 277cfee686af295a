-- What each of the given connections does now (the caller adds the list of ids): its command and
-- state, and its current or last wait events (END_EVENT_ID is NULL while it waits; a nested one
-- has the higher EVENT_ID).
SELECT p.ID, p.COMMAND, p.STATE, w.EVENT_NAME, w.OPERATION, w.END_EVENT_ID IS NULL, w.EVENT_ID
  FROM information_schema.PROCESSLIST p
  LEFT JOIN performance_schema.threads t ON t.PROCESSLIST_ID = p.ID
  LEFT JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID
 WHERE p.ID IN
