-- The read probe's connection (run/read_probe.py): the engine's I/O timer on in this session only
-- (a superuser or a role granted SET on track_io_timing may; nothing server-wide changes), and the
-- work loop's access path and plan settings, so that its lookups reach a row as the SELECTs do.
SELECT set_config('track_io_timing', 'on', false),
       set_config('enable_bitmapscan', %(enable_bitmapscan)s, false),
       set_config('enable_indexscan', %(enable_indexscan)s, false),
       set_config('max_parallel_workers_per_gather', '0', false),
       set_config('jit', 'off', false),
       set_config('statement_timeout', '10s', false),
       pg_backend_pid() AS pid
