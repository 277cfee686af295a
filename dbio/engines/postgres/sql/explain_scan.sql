-- The plan of the loop's scan of the scan table, under the settings the loop sets only around it
-- when scan_workers > 0 (set here with SET LOCAL, in a transaction of its own). EXPLAIN does not
-- execute the statement.
EXPLAIN (FORMAT JSON, VERBOSE) SELECT count(c2) FROM {schema}.cf2
