-- What an online base backup needs of the running server: WAL of replica level, and two WAL senders
-- (pg_basebackup -X stream's base and WAL streams).
SELECT current_setting('wal_level'), current_setting('max_wal_senders');
