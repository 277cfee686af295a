-- shared_buffers in blocks (its unit is 8 kB).
SELECT setting::bigint FROM pg_settings WHERE name = 'shared_buffers'
