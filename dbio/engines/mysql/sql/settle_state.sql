-- What an earlier run's UPDATEs left: pages of the buffer pool not yet written (every table's: the
-- server's own count) and, where the server says it here (MariaDB), the undo log records purge
-- has still to discard. Global status needs no privilege.
SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_pages_dirty', 'Innodb_history_list_length')
