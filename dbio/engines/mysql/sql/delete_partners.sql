-- The partner rows (negative custid) among ids from the first to before the second parameter:
-- a range of the primary key over pages the load has just written, still in the buffer pool.
DELETE FROM {table} WHERE id >= %s AND id < %s AND custid < 0
