-- The single schema's table split over data_dirs: a parent partitioned by ranges of the key, one
-- part per directory (each a data_table.sql table in its own tablespace, attached when loaded).
-- Keys are scattered inside each part as in a whole table; a statement's key range falls in one
-- part (two at a boundary), which the executor picks (run-time pruning of the cached generic plan).
CREATE TABLE {schema}.{table} (
    custid  bigint NOT NULL,
    c2      bigint NOT NULL,
    filler  bytea NOT NULL
) PARTITION BY RANGE (custid);
ALTER TABLE {schema}.{table} ALTER COLUMN filler SET STORAGE PLAIN;
COMMENT ON TABLE {schema}.{table} IS {tag};
