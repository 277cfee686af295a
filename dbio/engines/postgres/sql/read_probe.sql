-- One probe lookup: one row of a data table by its scattered key, through the loop's access path,
-- executed (ANALYZE) with the buffers it hit and read and the engine's read time around those reads
-- (track_io_timing). TIMING OFF: no per-node clock reads; SUMMARY OFF: planning is reported apart.
EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT c2 FROM {table} WHERE custid = {key}
