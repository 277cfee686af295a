-- The work loop, one slice (about one second) per CALL.
--
-- PostgreSQL publishes a backend's I/O counters only when it goes idle, so sessions return
-- to the client at every boundary of a one-second grid (and the loop forces the flush) so
-- that the engine's own counters give per-second figures. Counters and the latency
-- histogram of the slice come back in the INOUT parameters; the client carries the totals
-- (iterations, selects) from one slice to the next.
--
-- SLOB semantics: random key ranges of work_unit rows; SELECTs read a row column (count(c2)),
-- never only the index; exactly update_pct UPDATEs per 100 iterations, each committed;
-- exactly scan_pct full scans of the scan table per 100 SELECTs (with scan_workers parallel workers
-- each when asked); every hot_every-th statement
-- goes to the hot spot (its SELECTs counted in o_selects but timed as a kind of their own, 4, with their rows in
-- o_hot_rows: the part meant to be served from memory, apart from the storage part), every hot_schema_every-th to schema 1; every think_every-th iteration
-- ends with a think time. The SQL is static: the session's search_path names its own schema, so the plans
-- are prepared once per session and cached. With all of that off (dbio's defaults) the slice runs the plain
-- loop: each iteration its SELECT and timing only, kind 1's sum and maximum in variables of their own.
--
-- With a rate (c.rate_per_s, this session's share of --rate) the loop is open: each statement has an
-- intended start on a schedule (exponential gaps, or equal ones with c.rate_uniform), the loop sleeps until
-- it, and a statement whose time has passed starts at once (never skipped: a queue shows as lag). Kind 5 of
-- the histogram is each statement's latency from its intended start, kind 6 its schedule lag (its actual start
-- less its intended one); the next intended start is carried to the next slice in p_due/o_due. A statement due
-- at or after the slice's end waits for the next slice, however late the session is, so that a slice (and the
-- window, at the deadline) holds only the statements scheduled before its end; o_early counts those a late loop
-- started after the window opened though they were due in the warm-up (its queue carried in: not the window's rate).
-- pg_sleep waits in whole milliseconds (its latch's timeout is the delay rounded up, src/backend/utils/adt/misc.c): a
-- session that waits for an intended start is meant to wake up to 1 ms after it, a lateness of dbio's own that a
-- client's request arriving then would not have. That rounding (known before the wait) is added to the statement's
-- intended start for its two schedule kinds and summed in o_rounding_us; the wake-up's own lateness stays in them.
-- On a primary the node's sessions share one schedule (c.rate_sessions of them, rate_per_s each), as pgbench's
-- clients in one thread do: a free session takes the next arrival k from the run's sequence (no round trip), so
-- the node is one queue served by its sessions (M/G/c), not c queues of one session each, whose waits behind a
-- slow statement are far longer at the same rate. Arrival k is computed from k alone: uniform, k/rate; Poisson,
-- blocks of 1024 arrivals each with 1024/rate seconds, whose arrivals are sorted uniform points of the block
-- (a Poisson process given its count), drawn by hashing (run, k) so that every session computes the same ones.
-- A read-only node (no sequence there) keeps one schedule per session.
--
-- On a read-only node (a hot standby) nothing can be written and the run's control row would
-- have to be replayed from the primary: its sessions pass the run's control in p_control
-- (update_pct 0, the start agreed in advance) and the row is not read.
CREATE OR REPLACE PROCEDURE dbio.slice(
    p_run_id             bigint,
    p_session            integer,
    p_barrier            boolean,    -- first slice: wait for the common start
    p_iterations_before  bigint,     -- iterations this session did in earlier slices
    p_selects_before     bigint,     -- SELECTs (incl. scans) it did in earlier slices
    p_max_iterations     bigint,     -- at most this many iterations in this slice (NULL = no limit)
    p_think_left         double precision,  -- think time the previous slice still owed
    p_due                double precision,  -- with a rate: the next statement's intended start (epoch; NULL: none yet)
    INOUT o_iterations   bigint,
    INOUT o_selects      bigint,     -- random-range SELECTs
    INOUT o_updates      bigint,
    INOUT o_scans        bigint,
    INOUT o_rows         bigint,     -- rows the statements counted or updated
    INOUT o_hot_rows     bigint,     -- of which the hot spot's SELECTs counted
    INOUT o_think_s      double precision,
    INOUT o_think_left   double precision,    -- think time cut at this slice's end, owed by the next
    INOUT o_sum_us       double precision[],  -- per kind (select, update, scan, hot-spot select): summed latency
    INOUT o_max_us       double precision[],  -- per kind: longest statement
    INOUT o_hist         integer[],           -- [kind][bucket]: statement latency histogram
    INOUT o_slice_end    timestamptz,
    INOUT o_done         boolean,
    INOUT o_due          double precision,    -- with a rate: the next intended start, carried to the next slice
    INOUT o_late         bigint,              -- statements later than c.latency_limit_us from their intended start
    INOUT o_early        bigint,              -- statements whose intended start lay before the window opened
    INOUT o_rounding_us  double precision,    -- the waits' own rounding up to whole milliseconds (pg_sleep), summed
    p_control            jsonb)      -- the run's control (a read-only node); NULL: dbio.run_control's row
LANGUAGE plpgsql
AS $$
DECLARE
    c             dbio.run_control%ROWTYPE;
    v_now         timestamptz;
    v_t0          timestamptz;
    v_end         timestamptz;
    v_span        bigint;
    v_update_rows bigint;
    v_hot_span    bigint;
    v_iter        bigint := p_iterations_before;
    v_sel         bigint := p_selects_before;
    v_phase       integer := (p_session * 37) % 100;  -- staggers the UPDATE pattern across sessions
    v_lo          bigint;
    v_hi          bigint;
    v_n           bigint;
    v_kind        integer;
    v_us          double precision;
    v_b           integer;
    v_hot_schema  boolean;
    v_hot         boolean;
    v_pool        bytea;
    v_pool_span   integer;
    v_fill        bytea;
    v_sleep       double precision;
    v_hist        integer[];
    v_sum         double precision[] := ARRAY[0, 0, 0, 0, 0, 0];
    v_max         double precision[] := ARRAY[0, 0, 0, 0, 0, 0];
    v_rate        double precision;
    v_due         double precision;
    v_open        double precision;   -- the window's opening (epoch): statements due before it are the warm-up's
    v_wait        double precision;
    v_round       double precision;   -- this statement's wait's rounding up to the millisecond (seconds)
    v_lag         double precision;
    v_seq         regclass;           -- the node's shared schedule (NULL: each session its own)
    v_node_rate   double precision;
    v_k           bigint;
    v_block       bigint := -1;
    v_block_u     double precision[];
    -- A parallel scan (scan_workers > 0) is planned under these settings, set only around it.
    v_par_names   text[] := ARRAY['max_parallel_workers_per_gather', 'parallel_setup_cost', 'parallel_tuple_cost',
                                  'min_parallel_table_scan_size', 'seq_page_cost'];
    v_par_on      text[];
    v_par_off     text[];
    v_plain       boolean;            -- the plain loop: only random-range SELECTs, timed
    v_wu1         bigint;
    v_h1          integer[];          -- the plain loop's histogram, sum and maximum (kind 1's)
    v_sum1        double precision := 0;
    v_max1        double precision := 0;
BEGIN
    IF p_barrier THEN
        -- The coordinator holds this lock exclusively until every session waits here,
        -- then releases it: all sessions start at the same instant.
        PERFORM pg_advisory_lock_shared(p_run_id);
        PERFORM pg_advisory_unlock_shared(p_run_id);
    END IF;

    IF p_control IS NULL THEN
        SELECT * INTO STRICT c FROM dbio.run_control WHERE run_id = p_run_id;
    ELSE
        c := jsonb_populate_record(NULL::dbio.run_control, p_control);
    END IF;
    -- A start agreed in advance: the barrier opens a little before it, every session starts at it.
    v_now := clock_timestamp();
    IF p_barrier AND v_now < c.started_at THEN
        PERFORM pg_sleep(date_part('epoch', c.started_at - v_now));
    END IF;
    SELECT bytes INTO STRICT v_pool FROM dbio.pool WHERE id = 1;

    -- This slice ends at the next boundary of the grid (or at the deadline).
    v_now := clock_timestamp();
    v_end := c.started_at + make_interval(secs => c.slice_seconds *
             (floor(date_part('epoch', v_now - c.started_at) / c.slice_seconds) + 1));
    IF c.deadline IS NOT NULL AND v_end > c.deadline THEN
        v_end := c.deadline;
    END IF;

    -- A range starts where the wider of the SELECT's and the UPDATE's still fits.
    v_update_rows := coalesce(c.update_work_unit, c.work_unit);
    v_span := c.scale - greatest(c.work_unit, v_update_rows) + 1;
    v_hot_span := greatest(c.hot_rows - greatest(c.work_unit, v_update_rows) + 1, 1);
    v_pool_span := length(v_pool) - c.fill_bytes;
    v_rate := c.rate_per_s;
    v_hist := array_fill(0, ARRAY[CASE WHEN v_rate IS NULL THEN 4 ELSE 6 END, cardinality(c.bounds_us) + 1]);
    v_due := p_due;
    IF v_rate IS NOT NULL AND p_control IS NULL AND coalesce(c.rate_sessions, 0) > 0 THEN
        v_seq := to_regclass(format('dbio.rate_%s', p_run_id));
        v_node_rate := v_rate * c.rate_sessions;
    END IF;
    IF v_seq IS NULL AND v_rate IS NOT NULL AND v_due IS NULL THEN
        -- The schedule starts at the common start: a uniform one at a random phase (the sessions apart).
        v_due := date_part('epoch', c.started_at) + CASE WHEN c.rate_uniform THEN random() / v_rate
                                                         ELSE -ln(1.0 - random()) / v_rate END;
    END IF;
    IF coalesce(c.scan_workers, 0) > 0 THEN
        -- Up to scan_workers workers (fewer on a small table), whatever the costs: with one row per block
        -- the planner sees only I/O, which it does not expect workers to share, and would keep the scan serial.
        v_par_on := ARRAY[c.scan_workers::text, '0', '0', '0', '0'];
        SELECT array_agg(current_setting(n) ORDER BY i) INTO v_par_off
          FROM unnest(v_par_names) WITH ORDINALITY AS s(n, i);
    END IF;
    o_iterations := 0; o_selects := 0; o_updates := 0; o_scans := 0; o_rows := 0; o_hot_rows := 0; o_think_s := 0;
    o_think_left := 0; o_late := 0; o_early := 0; o_rounding_us := 0;
    v_open := date_part('epoch', c.window_open);

    -- Think time never runs past the slice's end (slices keep to the grid); what is cut is owed.
    IF p_think_left > 0 THEN
        v_sleep := least(p_think_left, greatest(date_part('epoch', v_end - v_now), 0));
        PERFORM pg_sleep(v_sleep);
        o_think_s := v_sleep;
        o_think_left := p_think_left - v_sleep;
        v_now := clock_timestamp();
    END IF;

    -- No rate, UPDATEs, scans, hot spot, hot schema or think time (their periods "off": run/plan.NEVER,
    -- 4611686018427387904): the plain loop, which evaluates none of the checks for what is off. PL/pgSQL evaluates
    -- each statement and subscript as an expression of its own, so the general loop's checks cost about as much
    -- as the timing and the histogram (bench/RESULTS.md, bench_callgrind.py: the loop's instructions per read).
    v_plain := v_rate IS NULL AND c.update_pct = 0 AND c.scan_pct = 0 AND c.hot_every >= 4611686018427387904
               AND c.hot_schema_every >= 4611686018427387904 AND c.think_every >= 4611686018427387904;
    IF v_plain THEN
        v_wu1 := c.work_unit - 1;
        v_h1 := array_fill(0, ARRAY[cardinality(c.bounds_us) + 1]);
        WHILE v_now < v_end AND (p_max_iterations IS NULL OR o_iterations < p_max_iterations) LOOP
            v_lo := 1 + floor(random() * v_span)::bigint;
            v_hi := v_lo + v_wu1;
            v_t0 := clock_timestamp();
            SELECT count(c2) INTO v_n FROM cf1 WHERE custid BETWEEN v_lo AND v_hi;
            v_now := clock_timestamp();
            v_us := date_part('epoch', v_now - v_t0) * 1000000;
            v_b := width_bucket(v_us, c.bounds_us) + 1;
            v_h1[v_b] := v_h1[v_b] + 1;
            v_sum1 := v_sum1 + v_us;
            IF v_us > v_max1 THEN
                v_max1 := v_us;
            END IF;
            o_rows := o_rows + v_n;
            o_iterations := o_iterations + 1;
        END LOOP;
        FOR i IN 1 .. cardinality(v_h1) LOOP
            v_hist[1][i] := v_h1[i];
        END LOOP;
        v_sum[1] := v_sum1;
        v_max[1] := v_max1;
        o_selects := o_iterations;  -- every iteration of the plain loop is a random-range SELECT
    END IF;

    WHILE NOT v_plain AND v_now < v_end AND (p_max_iterations IS NULL OR o_iterations < p_max_iterations) LOOP
        -- An open loop waits for the statement's intended start; one due after the slice's end waits there.
        IF v_seq IS NOT NULL AND v_due IS NULL THEN
            -- The next arrival no session has taken yet (its block of arrivals drawn once per slice).
            v_k := nextval(v_seq) - 1;
            IF c.rate_uniform THEN
                v_due := date_part('epoch', c.started_at) + (v_k + 0.5) / v_node_rate;
            ELSE
                IF v_k / 1024 <> v_block THEN
                    v_block := v_k / 1024;
                    SELECT array_agg(u ORDER BY u) INTO v_block_u
                      FROM (SELECT ((hashint8extended(v_block * 1024 + j, p_run_id) >> 11) & 9007199254740991)::float8
                                   / 9007199254740992.0 AS u FROM generate_series(0, 1023) AS j) AS d;
                END IF;
                v_due := date_part('epoch', c.started_at) + (v_block + v_block_u[(v_k % 1024)::integer + 1]) * 1024 / v_node_rate;
            END IF;
        END IF;
        IF v_rate IS NOT NULL THEN
            v_wait := v_due - date_part('epoch', clock_timestamp());
            v_round := 0;
            IF v_due >= date_part('epoch', v_end) THEN
                PERFORM pg_sleep(greatest(date_part('epoch', v_end - clock_timestamp()), 0));
                v_now := clock_timestamp();
                EXIT;
            ELSIF v_wait > 0 THEN
                v_round := ceil(v_wait * 1000.0) / 1000.0 - v_wait;
                PERFORM pg_sleep(v_wait);
            END IF;
        END IF;

        v_iter := v_iter + 1;

        v_hot := v_iter % c.hot_every = 0;
        IF v_hot THEN
            v_lo := c.hot_lo + floor(random() * v_hot_span)::bigint;
        ELSE
            v_lo := 1 + floor(random() * v_span)::bigint;
        END IF;
        v_hi := v_lo + c.work_unit - 1;
        v_hot_schema := v_iter % c.hot_schema_every = 0;

        -- Exactly update_pct of every 100 consecutive iterations UPDATE, spread evenly.
        IF ((v_iter + v_phase) * c.update_pct) / 100 <> ((v_iter + v_phase - 1) * c.update_pct) / 100 THEN
            v_kind := 2;
            v_fill := substring(v_pool FROM 1 + floor(random() * v_pool_span)::integer FOR c.fill_bytes);
            v_t0 := clock_timestamp();
            IF v_hot_schema THEN
                UPDATE dbio_1.cf1 SET c2 = c2 + 1, filler = overlay(filler PLACING v_fill FROM 1)
                 WHERE custid BETWEEN v_lo AND v_lo + v_update_rows - 1;
            ELSE
                UPDATE cf1 SET c2 = c2 + 1, filler = overlay(filler PLACING v_fill FROM 1)
                 WHERE custid BETWEEN v_lo AND v_lo + v_update_rows - 1;
            END IF;
            GET DIAGNOSTICS v_n = ROW_COUNT;
            COMMIT;
            o_updates := o_updates + 1;
        ELSE
            v_sel := v_sel + 1;
            -- Exactly scan_pct of every 100 consecutive SELECTs scan the scan table.
            IF ((v_sel + v_phase) * c.scan_pct) / 100 <> ((v_sel + v_phase - 1) * c.scan_pct) / 100 THEN
                v_kind := 3;
                IF v_par_on IS NULL THEN
                    v_t0 := clock_timestamp();
                    SELECT count(c2) INTO v_n FROM dbio_1.cf2;
                ELSE
                    -- A parallel scan: SELECT INTO never runs in parallel (it may stop after a row), EXECUTE
                    -- ... INTO does; EXECUTE plans it each time under settings set only around it, so the
                    -- range statements' cached plans never see them.
                    PERFORM set_config(n, v, false) FROM unnest(v_par_names, v_par_on) AS s(n, v);
                    v_t0 := clock_timestamp();
                    EXECUTE 'SELECT count(c2) FROM dbio_1.cf2' INTO v_n;
                    PERFORM set_config(n, v, false) FROM unnest(v_par_names, v_par_off) AS s(n, v);
                END IF;
                o_scans := o_scans + 1;
            ELSE
                v_kind := CASE WHEN v_hot THEN 4 ELSE 1 END;
                v_t0 := clock_timestamp();
                IF v_hot_schema THEN
                    SELECT count(c2) INTO v_n FROM dbio_1.cf1 WHERE custid BETWEEN v_lo AND v_hi;
                ELSE
                    SELECT count(c2) INTO v_n FROM cf1 WHERE custid BETWEEN v_lo AND v_hi;
                END IF;
                o_selects := o_selects + 1;
            END IF;
        END IF;

        v_now := clock_timestamp();
        v_us := date_part('epoch', v_now - v_t0) * 1000000;
        v_b := width_bucket(v_us, c.bounds_us) + 1;
        v_hist[v_kind][v_b] := v_hist[v_kind][v_b] + 1;
        v_sum[v_kind] := v_sum[v_kind] + v_us;
        IF v_us > v_max[v_kind] THEN
            v_max[v_kind] := v_us;
        END IF;
        IF v_rate IS NOT NULL THEN
            -- never more than the session was late: a wait ended early (its latch set) had less to round
            v_round := least(v_round, greatest(date_part('epoch', v_t0) - v_due, 0));
            v_us := (date_part('epoch', v_now) - v_due - v_round) * 1000000;
            v_lag := greatest((date_part('epoch', v_t0) - v_due - v_round) * 1000000, 0);
            o_rounding_us := o_rounding_us + v_round * 1000000;
            v_b := width_bucket(v_us, c.bounds_us) + 1;
            v_hist[5][v_b] := v_hist[5][v_b] + 1;
            v_sum[5] := v_sum[5] + v_us;
            v_max[5] := greatest(v_max[5], v_us);
            v_b := width_bucket(v_lag, c.bounds_us) + 1;
            v_hist[6][v_b] := v_hist[6][v_b] + 1;
            v_sum[6] := v_sum[6] + v_lag;
            v_max[6] := greatest(v_max[6], v_lag);
            IF c.latency_limit_us > 0 AND v_us > c.latency_limit_us THEN
                o_late := o_late + 1;
            END IF;
            IF v_due < v_open THEN
                o_early := o_early + 1;
            END IF;
            -- A shared schedule's next arrival is taken when the session is free again (loop's top).
            v_due := CASE WHEN v_seq IS NULL THEN v_due + CASE WHEN c.rate_uniform THEN 1.0 / v_rate
                                                                ELSE -ln(1.0 - random()) / v_rate END END;
        END IF;
        o_rows := o_rows + v_n;
        IF v_kind = 4 THEN
            o_hot_rows := o_hot_rows + v_n;
        END IF;
        o_iterations := o_iterations + 1;

        -- Every think_every-th iteration ends with a think time ("off" is a period never reached).
        IF v_iter % c.think_every = 0 THEN
            v_us := c.think_min + random() * (c.think_max - c.think_min);
            v_sleep := least(v_us, greatest(date_part('epoch', v_end - v_now), 0));
            PERFORM pg_sleep(v_sleep);
            o_think_s := o_think_s + v_sleep;
            o_think_left := v_us - v_sleep;
            v_now := clock_timestamp();
        END IF;
    END LOOP;

    o_hist := v_hist;
    o_sum_us := v_sum;
    o_max_us := v_max;
    o_slice_end := v_now;
    o_due := v_due;
    o_done := (c.deadline IS NOT NULL AND v_now >= c.deadline)
              OR (p_max_iterations IS NOT NULL AND o_iterations >= p_max_iterations);
    -- Publish this backend's I/O counters as soon as the call returns (PostgreSQL 15+).
    PERFORM pg_stat_force_next_flush();
END
$$;
-- dbio tags the procedure for its setup after creating it (workload.install).
