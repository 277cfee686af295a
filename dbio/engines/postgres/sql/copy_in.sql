-- FREEZE: rows arrive frozen and all-visible, so no later reader sets hint bits (which would
-- turn a read-only test into a write test) and no VACUUM pass over the whole table is needed.
COPY {schema}.{table} (custid, c2, filler) FROM STDIN (FORMAT binary, FREEZE)
