-- One second's probe lookups (run/read_probe.py), each one row of a data table by its scattered key, through
-- the loop's access path: the statement read_probe_prepare.sql prepared, executed (ANALYZE) with the buffers
-- each of its lookups hit and read and the engine's read time around those reads (track_io_timing), per
-- lookup (each a branch of its Append). TIMING OFF: no per-node clock reads; SUMMARY OFF: no planning time.
EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, FORMAT JSON) EXECUTE dbio_probe ({keys})
