-- Writes the named tables' dirty pages to their files now (and merges their change buffer), then
-- lets them go. The tables are dbio's data tables, quoted by the caller.
FLUSH TABLES {tables} FOR EXPORT;
UNLOCK TABLES;
