-- One probe lookup, a branch of read_probe.sql: one row of a data table by its scattered key, through the index
-- the work loop reads by. A range of one key: the index is not unique, so no const lookup done while
-- optimizing, outside the stats.
(SELECT c2 FROM {table} FORCE INDEX (custid) WHERE custid BETWEEN {key} AND {key})
