-- The data tables of dbio's load (not the scan table, which no UPDATE touches).
SELECT schema_name, table_name FROM dbio.setup_tables WHERE kind = 'data' ORDER BY schema_name, table_name
