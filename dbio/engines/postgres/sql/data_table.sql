-- One row per 8 KiB block: a ~4 KiB row (filler is stored inline and uncompressed) in a table
-- whose fillfactor (10) stops a second row from being inserted into a block. The free half of
-- each block is kept for in-block (HOT) UPDATEs, so rows never move and the index never changes.
-- Autovacuum stays out of the measured window; the load leaves every row frozen and all-visible.
CREATE TABLE {schema}.{table} (
    custid  bigint NOT NULL,
    c2      bigint NOT NULL,
    filler  bytea NOT NULL
) WITH (fillfactor = 10, autovacuum_enabled = false);
ALTER TABLE {schema}.{table} ALTER COLUMN filler SET STORAGE PLAIN;
COMMENT ON TABLE {schema}.{table} IS {tag};
