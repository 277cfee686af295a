-- pg_stat_database of the database dbio works in (PostgreSQL 18: with the parallel query workers
-- its queries planned and those they launched).
SELECT json_build_object('xact_commit', xact_commit, 'xact_rollback', xact_rollback,
                         'blks_read', blks_read, 'blks_hit', blks_hit,
                         'tup_returned', tup_returned, 'tup_fetched', tup_fetched, 'tup_updated', tup_updated,
                         'temp_files', temp_files, 'temp_bytes', temp_bytes, 'deadlocks', deadlocks,
                         'blk_read_time', blk_read_time, 'blk_write_time', blk_write_time,
                         'numbackends', numbackends, 'parallel_workers_to_launch', parallel_workers_to_launch,
                         'parallel_workers_launched', parallel_workers_launched)
  FROM pg_stat_database
 WHERE datname = current_database()
