-- One probe lookup (run/read_probe.py): one row of a data table by its scattered key, through the index the
-- work loop reads by, executed by MariaDB's ANALYZE, whose r_engine_stats give per table the pages InnoDB
-- read from the data files for it (pages_read_count) and the time those reads took (pages_read_time_ms).
-- A range of one key: the index is not unique, so no const lookup done while optimizing, outside the stats.
ANALYZE FORMAT=JSON SELECT c2 FROM {table} FORCE INDEX (custid) WHERE custid BETWEEN %(key)s AND %(key)s
