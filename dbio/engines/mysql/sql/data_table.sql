-- One data table. InnoDB keeps rows in the clustered primary key (id: the load's order) and
-- has no fill factor: the filler makes a row just under half a page, so a page holds two rows
-- and never a third (InnoDB's largest row is half a page: every page can take two). The work
-- loop reads through the secondary index on custid, whose order is unrelated to id when keys
-- are scattered: every row of a range is a different page, as SLOB's index on its random key.
-- Pages of 8 KiB or less hold one row, as PostgreSQL's blocks do: each row is loaded with a partner
-- row that fills the rest of its page and is deleted after the load; {primary_key_options} then
-- sets MERGE_THRESHOLD low, so that InnoDB never merges the half-empty pages back into full ones.
CREATE TABLE {table} (
    id      BIGINT NOT NULL,
    custid  BIGINT NOT NULL,
    c2      BIGINT NOT NULL,
    filler  VARBINARY({filler_bytes}) NOT NULL,
    PRIMARY KEY (id) {primary_key_options}
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC STATS_PERSISTENT = 1 COMMENT = {tag}
