-- The plan of the work loop's UPDATE (EXPLAIN only: nothing is changed).
PREPARE dbio_explain_update(bigint, bigint, bytea) AS
    UPDATE cf1 SET c2 = c2 + 1, filler = overlay(filler PLACING $3 FROM 1) WHERE custid BETWEEN $1 AND $2
