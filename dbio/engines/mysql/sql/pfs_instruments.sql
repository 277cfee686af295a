-- performance_schema's instruments by class (waits by their names' first three parts, as
-- wait/io/file; the others by two, as statement/sp), with how many are enabled (probe): the
-- result records which classes the server did not instrument.
SELECT IF(NAME LIKE 'wait/%', SUBSTRING_INDEX(NAME, '/', 3), SUBSTRING_INDEX(NAME, '/', 2)) AS class,
       SUM(ENABLED = 'YES'), COUNT(*)
  FROM performance_schema.setup_instruments
 GROUP BY class ORDER BY class
