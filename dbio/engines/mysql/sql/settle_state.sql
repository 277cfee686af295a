-- What an earlier run's UPDATEs left: undo log records purge has still to discard (the history
-- list) and pages of the buffer pool not yet written (every table's: the server's own count).
SELECT
    (SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len') AS history,
    (SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'buffer_pool_pages_dirty') AS dirty
