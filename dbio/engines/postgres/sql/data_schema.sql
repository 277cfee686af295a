CREATE SCHEMA {schema};
COMMENT ON SCHEMA {schema} IS {tag};
