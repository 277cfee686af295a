-- The scattered key's index, built sorted after the load.
ALTER TABLE {table} ADD INDEX custid (custid)
