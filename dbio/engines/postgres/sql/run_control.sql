INSERT INTO dbio.run_control (run_id, slice_seconds, scale, work_unit, update_work_unit, update_pct, scan_pct, scan_workers, fill_bytes,
                              hot_lo, hot_rows, hot_every, hot_schema_every, think_every, think_min, think_max,
                              bounds_us, rate_per_s, rate_uniform, latency_limit_us, rate_sessions, client)
VALUES (%(run_id)s, %(slice_seconds)s, %(scale)s, %(work_unit)s, %(update_work_unit)s, %(update_pct)s, %(scan_pct)s, %(scan_workers)s, %(fill_bytes)s,
        %(hot_lo)s, %(hot_rows)s, %(hot_every)s, %(hot_schema_every)s, %(think_every)s, %(think_min)s,
        %(think_max)s, %(bounds_us)s, %(rate_per_s)s, %(rate_uniform)s, %(latency_limit_us)s, %(rate_sessions)s, %(client)s)
