-- One second's probe lookups (run/read_probe.py), executed by MariaDB's ANALYZE, whose r_engine_stats give
-- per table of each UNION ALL branch the pages InnoDB read from the data files for it (pages_read_count) and
-- the time those reads took (pages_read_time_ms): each branch one lookup (read_probe_lookup.sql).
ANALYZE FORMAT=JSON {lookups}
