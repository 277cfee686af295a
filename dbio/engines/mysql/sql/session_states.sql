-- What each of the given connections does now (the caller adds the list of ids), from the
-- processlist alone (no performance_schema wait events).
SELECT ID, COMMAND, STATE, NULL, NULL, NULL, NULL FROM information_schema.PROCESSLIST WHERE ID IN
