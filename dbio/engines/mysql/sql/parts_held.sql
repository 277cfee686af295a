-- The parts of runs holding this database: each part holds the lock of its slot (its index) and the
-- lock of its run's slot (its run's key, part count and index), both by its lock connection. One row
-- per slot held: its index, the connection holding it, and whether that connection holds this run's
-- lock for the slot too (then it is a part of this run). GET_LOCK names cannot be listed, so the
-- slots are tried by name, 1 to MAX_PARTS.
WITH RECURSIVE slot(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM slot WHERE i < %(max_parts)s)
SELECT i, IS_USED_LOCK(CONCAT(%(slot)s, i)),
       COALESCE(IS_USED_LOCK(CONCAT(%(mine)s, i)) = IS_USED_LOCK(CONCAT(%(slot)s, i)), 0)
  FROM slot
 WHERE IS_USED_LOCK(CONCAT(%(slot)s, i)) IS NOT NULL
 ORDER BY i
