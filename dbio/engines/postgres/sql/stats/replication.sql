-- A hot standby's replication, read on the standby itself: the WAL position it has received
-- (cumulative: its rate is the WAL received per second) and replayed, and how far replay lags.
-- The lag in seconds is the age of the last transaction replayed, and 0 when everything received
-- is replayed (an idle primary sends nothing: the last replayed transaction's age is no lag). Never
-- negative (a primary's clock ahead of its standby's): a reading holds no negative number.
SELECT json_build_object(
         'received_bytes', pg_wal_lsn_diff(pg_last_wal_receive_lsn(), '0/0'),
         'replayed_bytes', pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0'),
         'replay_lag_seconds', CASE WHEN pg_last_wal_receive_lsn() IS NULL THEN NULL
                                    WHEN pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
                                    ELSE greatest(0, date_part('epoch', clock_timestamp() - pg_last_xact_replay_timestamp()))
                                    END)
