-- The bodies of dbio's procedures in this database (install compares them with the loop it makes).
SELECT ROUTINE_NAME, ROUTINE_DEFINITION FROM information_schema.ROUTINES
 WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME LIKE 'dbio\_%'
