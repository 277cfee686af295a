INSERT INTO dbio.setup_tables (schema_name, table_name, kind, rows, blocks, load_seconds, index_seconds, analyze_seconds)
VALUES (%(schema)s, %(table)s, %(kind)s, %(rows)s, pg_relation_size(%(qualified)s::regclass) / current_setting('block_size')::int,
        %(load_seconds)s, %(index_seconds)s, %(analyze_seconds)s)
