-- The files of dbio's loaded tables and their indexes (main fork): path relative to the data
-- directory, size in bytes, and the segment size that splits a relation into path, path.1, ...
SELECT pg_relation_filepath(c.oid) AS path,
       pg_relation_size(c.oid) AS bytes,
       pg_size_bytes(current_setting('segment_size')) AS segment_bytes
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname ~ '^dbio_[0-9]+$'
  AND c.relkind IN ('r', 'i')
  AND pg_relation_filepath(c.oid) IS NOT NULL
ORDER BY n.nspname, c.relname;
