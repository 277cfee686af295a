-- One probe lookup, a branch of read_probe_prepare.sql: one row of a data table by its key (a parameter).
(SELECT c2 FROM {table} WHERE custid = {key})
