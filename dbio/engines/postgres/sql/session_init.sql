-- Every dbio session: its own schema first on the search path (the work loop names its table
-- unqualified, so the loop's SQL is static and its plans are cached), a pinned access path,
-- generic plans (no re-planning per statement), no parallel query (a parallel scan, scan_workers > 0,
-- sets its own settings around it: slice.sql), independent scans.
SELECT set_config('search_path', %(search_path)s, false),
       set_config('enable_bitmapscan', %(enable_bitmapscan)s, false),
       set_config('enable_indexscan', %(enable_indexscan)s, false),
       set_config('plan_cache_mode', 'force_generic_plan', false),
       set_config('max_parallel_workers_per_gather', '0', false),
       set_config('jit', 'off', false),
       set_config('synchronize_seqscans', 'off', false),
       set_config('statement_timeout', '0', false),
       set_config('lock_timeout', '0', false),
       set_config('idle_in_transaction_session_timeout', '0', false),
       set_config('idle_session_timeout', '0', false),
       CASE WHEN current_setting('server_version_num')::int >= 170000
            THEN set_config('transaction_timeout', '0', false) END,
       pg_backend_pid() AS pid
