-- The plan the work loop's SELECT runs with: the session's settings and a generic plan,
-- as PL/pgSQL caches it. EXPLAIN does not execute the statement.
PREPARE dbio_explain_select(bigint, bigint) AS
    SELECT count(c2) FROM cf1 WHERE custid BETWEEN $1 AND $2
