-- A part's keys, checked as its rows arrive: ATTACH PARTITION then trusts this constraint and
-- does not read the loaded part again.
ALTER TABLE {schema}.{table} ADD CONSTRAINT {constraint} CHECK (custid >= {first} AND custid <= {last});
COMMENT ON CONSTRAINT {constraint} ON {schema}.{table} IS {tag};
