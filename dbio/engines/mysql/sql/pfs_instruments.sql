-- performance_schema's instruments by class (their names' first three parts), with how many are
-- enabled (probe): the result records which classes the server did not instrument.
SELECT SUBSTRING_INDEX(NAME, '/', 3) AS class, SUM(ENABLED = 'YES'), COUNT(*)
  FROM performance_schema.setup_instruments
 GROUP BY class ORDER BY class
