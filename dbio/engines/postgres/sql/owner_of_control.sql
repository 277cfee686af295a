-- The tags of dbio's control schema and of its setup table (NULL: absent), to be checked together.
SELECT obj_description(n.oid, 'pg_namespace') AS schema_tag,
       obj_description(to_regclass('dbio.setup'), 'pg_class') AS record_tag
FROM pg_namespace n
WHERE n.nspname = 'dbio'
