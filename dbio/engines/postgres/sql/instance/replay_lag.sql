-- Each streaming standby's replay lag in time, as the primary measures it (NULL once it has been
-- idle a while: the standby then has nothing left to replay)
SELECT application_name, extract(epoch FROM replay_lag)::float8
  FROM pg_stat_replication
