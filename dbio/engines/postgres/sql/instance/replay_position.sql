-- How far a standby has replayed the primary's WAL (NULL when it is not in recovery)
SELECT pg_last_wal_replay_lsn()::text
