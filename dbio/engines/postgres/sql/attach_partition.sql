-- The loaded part joins its parent (a lock on the parent that waits only for another part's
-- attach, the last step of that part's transaction).
ALTER TABLE {schema}.{parent} ATTACH PARTITION {schema}.{table} FOR VALUES FROM ({first}) TO ({after});
