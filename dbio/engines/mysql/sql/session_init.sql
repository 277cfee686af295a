-- A session's private tables for the loop's latency histogram (MEMORY: no InnoDB I/O):
-- the bucket lower bounds, and the counts of the current slice.
CREATE TEMPORARY TABLE IF NOT EXISTS dbio_bounds (bucket INT NOT NULL PRIMARY KEY, lo_us DOUBLE NOT NULL,
                                                  KEY USING BTREE (lo_us)) ENGINE = MEMORY;
CREATE TEMPORARY TABLE IF NOT EXISTS dbio_hist (kind INT NOT NULL, bucket INT NOT NULL, n BIGINT NOT NULL,
                                                PRIMARY KEY (kind, bucket)) ENGINE = MEMORY;
