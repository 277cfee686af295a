-- One data table. InnoDB keeps rows in the clustered primary key (id: the load's order) and
-- has no fill factor: the filler makes a row just under half a page (InnoDB's largest row, so
-- any page can take two). Each row gets a page of its own, as PostgreSQL's blocks do, at every
-- page size: it is loaded with a partner row that fills the rest of its page and is deleted after
-- the load; MERGE_THRESHOLD = 20 (percent) keeps InnoDB from merging the pages a partner leaves
-- half empty (its default, 50, would merge them two by two). The work loop reads through the
-- secondary index on custid, whose order is unrelated to id when keys are scattered: every row
-- of a range is a different page, as SLOB's index on its random key.
CREATE TABLE {table} (
    id      BIGINT NOT NULL,
    custid  BIGINT NOT NULL,
    c2      BIGINT NOT NULL,
    filler  VARBINARY({filler_bytes}) NOT NULL,
    PRIMARY KEY (id) COMMENT 'MERGE_THRESHOLD=20'
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC STATS_PERSISTENT = 1 COMMENT = {tag}
