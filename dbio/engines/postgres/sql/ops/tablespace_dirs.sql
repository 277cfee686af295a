-- Directories of the tablespaces outside the data directory (a base backup reads them too).
SELECT pg_tablespace_location(oid) FROM pg_tablespace WHERE pg_tablespace_location(oid) <> '' ORDER BY 1;
