-- The server settings a reader of a result needs to judge it.
SELECT name, setting, unit, source
  FROM pg_settings
 WHERE name IN ('server_version', 'shared_buffers', 'block_size', 'debug_io_direct', 'io_method', 'io_workers',
                'io_combine_limit', 'io_max_concurrency', 'effective_io_concurrency', 'maintenance_io_concurrency',
                'track_io_timing', 'track_wal_io_timing', 'wal_level', 'wal_buffers', 'wal_sync_method',
                'synchronous_commit', 'fsync', 'full_page_writes', 'wal_compression', 'data_checksums',
                'checkpoint_timeout', 'max_wal_size', 'min_wal_size', 'checkpoint_completion_target',
                'bgwriter_delay', 'bgwriter_lru_maxpages', 'autovacuum', 'max_connections', 'huge_pages',
                'huge_pages_status', 'random_page_cost', 'seq_page_cost', 'effective_cache_size',
                'max_parallel_workers_per_gather', 'jit', 'data_directory', 'server_encoding', 'max_worker_processes',
                'wal_segment_size')
 ORDER BY name
