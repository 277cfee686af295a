-- dbio's data tables and the index dbio made on each (dbio ops index): schema, names, the tag
-- comment that proves the index is dbio's, and the sizes of the table and of the index.
SELECT n.nspname AS schema_name, t.relname AS table_name, i.relname AS index_name,
       obj_description(i.oid, 'pg_class') AS comment,
       pg_relation_size(t.oid) AS table_bytes, pg_relation_size(i.oid) AS index_bytes
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname ~ '^dbio_[0-9]+$' AND t.relname = %(table)s AND i.relname = %(index)s
ORDER BY n.nspname;
