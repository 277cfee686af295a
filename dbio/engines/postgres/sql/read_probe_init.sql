-- The read probe's connection (run/read_probe.py): the work loop's access path and plan settings, so
-- that its lookups reach a row as the SELECTs do, its prepared lookups planned once (generic); whether
-- the engine's I/O timer is on here already.
SELECT set_config('enable_bitmapscan', %(enable_bitmapscan)s, false),
       set_config('enable_indexscan', %(enable_indexscan)s, false),
       set_config('max_parallel_workers_per_gather', '0', false),
       set_config('jit', 'off', false),
       set_config('statement_timeout', '10s', false),
       set_config('plan_cache_mode', 'force_generic_plan', false),
       current_setting('track_io_timing') = 'on' AS timed,
       pg_backend_pid() AS pid
