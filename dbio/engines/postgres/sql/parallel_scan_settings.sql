-- What the loop sets around a parallel scan (slice.sql: v_par_names, v_par_on), for this transaction.
SELECT set_config('max_parallel_workers_per_gather', %(workers)s, true),
       set_config('parallel_setup_cost', '0', true),
       set_config('parallel_tuple_cost', '0', true),
       set_config('min_parallel_table_scan_size', '0', true),
       set_config('seq_page_cost', '0', true)
