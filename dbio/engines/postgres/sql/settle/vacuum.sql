-- Prunes the row versions UPDATEs left, sets their hint bits and marks the pages all-visible: the
-- work a read-only run's SELECTs would otherwise do (and write) inside the window. A table
-- already at rest is skipped page by page through its visibility map.
VACUUM {table}
