CREATE UNIQUE INDEX {index} ON {schema}.{table} (custid);
COMMENT ON INDEX {schema}.{index} IS {tag};
