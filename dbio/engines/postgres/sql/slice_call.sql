CALL dbio.slice(%(run_id)s::bigint, %(session)s::integer, %(barrier)s::boolean, %(iterations_before)s::bigint,
                %(selects_before)s::bigint, %(max_iterations)s::bigint, %(think_left)s::double precision,
                %(due)s::double precision,
                NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                %(control)s::jsonb)
