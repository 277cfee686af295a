-- Planner statistics from 3,000 sampled rows (statistics target 10) rather than 30,000: ANALYZE
-- then reads 3,000 random blocks, not 30,000 (0.1 s instead of 1 s for a 2 GiB table, bench/RESULTS.md).
-- The loop's plans are generic (its key ranges are parameters, so no histogram is consulted),
-- pinned by the session's enable_* settings and checked before every run; the row and block
-- counts come from the whole table whatever the sample.
SET LOCAL default_statistics_target = 10;
ANALYZE {schema}.{table};
