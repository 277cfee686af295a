-- dbio ops recovery and checkpoint: dirty a range of dbio's rows (each row its own block), as the
-- work loop's UPDATE does (an in-block HOT update of the counter), committed by the caller.
UPDATE {schema}.{table} SET c2 = c2 + 1 WHERE custid BETWEEN %(low)s AND %(high)s;
