-- The work loop, one slice (about one second) per CALL; the same semantics as PostgreSQL's.
--
-- SLOB semantics: random key ranges of work_unit rows through the scattered index on custid;
-- SELECTs read a row column (COUNT(c2): every row's page is read, never only the index);
-- exactly update_pct UPDATEs per 100 iterations, each committed (the session is in autocommit);
-- exactly scan_pct full scans of the scan table per 100 SELECTs; every hot_every-th statement
-- goes to the hot spot (its SELECTs counted as SELECTs, timed as a kind of their own, 4, their rows in o_hot_rows:
-- the part meant to be served from memory, apart from the storage part), every hot_schema_every-th to schema 1's table; every think_every-th
-- iteration ends with a think time. One procedure per schema table ({procedure} on {table}, made
-- from this template at install): static SQL, so the loop runs no dynamic SQL and binds no user
-- variables. The latency histogram is counted in a string, its bucket found by arithmetic on two
-- strings the session was given (histmap.py: no table statement per iteration); it comes back
-- with the slice's counters in one result set. The barrier is passed before the first CALL (workload.py).
-- With a rate (c_rate, this session's share of --rate) the loop is open, as PostgreSQL's: each statement has an
-- intended start on a schedule (exponential gaps, or equal ones with c_uniform), the loop sleeps until it, and a
-- statement whose time has passed starts at once; kind 5 of the histogram is each statement's latency from its
-- intended start, kind 6 its schedule lag; the next intended start is carried to the next slice (p_due). A statement
-- due at or after the slice's end waits for the next slice however late the session is (a slice, and the window at
-- the deadline, holds only statements scheduled before its end); o_early counts those a late loop started after the
-- window opened though they were due in the warm-up (its queue carried in: not the window's rate).
-- The node's sessions share one schedule (c_sessions of them): a free session takes the next arrival k from
-- dbio_rate_ticket (a MEMORY table: no redo), k's time computed from k alone as PostgreSQL's (uniform, or Poisson
-- in blocks of 1024 sorted points, here CRC32 of (run, index), kept as a string of 10-digit numbers).
CREATE PROCEDURE {procedure}(
    IN p_run_id            BIGINT,
    IN p_session           INT,
    IN p_iterations_before BIGINT,
    IN p_selects_before    BIGINT,
    IN p_max_iterations    BIGINT,
    IN p_think_left        DOUBLE,
    IN p_due               DOUBLE)
SQL SECURITY INVOKER
COMMENT {tag}
BEGIN
    DECLARE c_slice, c_started, c_open, c_deadline, c_think_min, c_think_max DOUBLE;
    DECLARE c_scale, c_hot_lo, c_hot_rows, c_hot_every, c_hot_schema_every, c_think_every BIGINT;
    DECLARE c_work_unit, c_update_rows, c_update_pct, c_scan_pct, c_fill INT;
    DECLARE v_now, v_end, v_t0, v_us, v_sleep, v_think, v_wait_from DOUBLE;
    DECLARE v_span, v_hot_span, v_lo, v_hi, v_n BIGINT;
    DECLARE v_iter BIGINT DEFAULT p_iterations_before;
    DECLARE v_sel BIGINT DEFAULT p_selects_before;
    DECLARE v_phase INT DEFAULT (p_session * 37) % 100;  -- staggers the UPDATE pattern across sessions
    DECLARE v_kind, v_b, v_pos, v_pool_span, v_buckets, v_conflict INT;
    DECLARE v_pool, v_fill, v_map, v_bound, v_hist MEDIUMBLOB;
    DECLARE o_iterations, o_selects, o_updates, o_scans, o_rows, o_hot_rows, o_retries BIGINT DEFAULT 0;
    DECLARE o_think_s, o_think_left DOUBLE DEFAULT 0;
    DECLARE s1, s2, s3, s4, m1, m2, m3, m4, s5, s6, m5, m6 DOUBLE DEFAULT 0;
    DECLARE c_rate, c_limit, v_due, v_lag, v_total DOUBLE;
    DECLARE c_uniform, v_kinds, c_sessions INT;
    DECLARE v_k, v_block BIGINT DEFAULT -1;
    DECLARE v_points MEDIUMBLOB;
    DECLARE o_late, o_early BIGINT DEFAULT 0;

    SELECT slice_seconds, started_at, window_open, deadline, scale, work_unit, COALESCE(update_work_unit, work_unit), update_pct,
           scan_pct, fill_bytes, hot_lo, hot_rows, hot_every, hot_schema_every, think_every, think_min, think_max,
           rate_per_s, rate_uniform, latency_limit_us, rate_sessions
      INTO c_slice, c_started, c_open, c_deadline, c_scale, c_work_unit, c_update_rows, c_update_pct, c_scan_pct, c_fill,
           c_hot_lo,
           c_hot_rows, c_hot_every, c_hot_schema_every, c_think_every, c_think_min, c_think_max,
           c_rate, c_uniform, c_limit, c_sessions
      FROM dbio_run_control WHERE run_id = p_run_id;
    IF c_started IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'dbio: this run is not released (or gone)';
    END IF;
    SELECT bytes INTO v_pool FROM dbio_pool WHERE id = 1;

    SET v_map = @dbio_hist_map, v_bound = @dbio_hist_bounds;
    IF v_map IS NULL OR v_bound IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'dbio: this session has no histogram map (session_init.sql)';
    END IF;
    SET v_buckets = LENGTH(v_bound) DIV {bound_width};
    SET v_kinds = IF(c_rate IS NULL, 4, 6);
    SET v_hist = REPEAT('0', v_kinds * v_buckets * {count_width});

    -- A start agreed in advance (a run of several nodes): the barrier opens a little before it.
    SET v_now = UNIX_TIMESTAMP(SYSDATE(6));
    IF v_now < c_started THEN
        DO SLEEP(c_started - v_now);
    END IF;

    -- This slice ends at the next boundary of the grid (or at the deadline).
    SET v_now = UNIX_TIMESTAMP(SYSDATE(6));
    SET v_end = c_started + c_slice * (FLOOR((v_now - c_started) / c_slice) + 1);
    IF c_deadline IS NOT NULL AND v_end > c_deadline THEN
        SET v_end = c_deadline;
    END IF;
    -- A range starts where the wider of the SELECT's and the UPDATE's still fits.
    SET v_span = c_scale - GREATEST(c_work_unit, c_update_rows) + 1;
    SET v_hot_span = GREATEST(c_hot_rows - GREATEST(c_work_unit, c_update_rows) + 1, 1);
    SET v_pool_span = LENGTH(v_pool) - c_fill;
    -- The schedule starts at the common start: a uniform one at a random phase (the sessions apart).
    IF c_rate IS NOT NULL AND c_sessions > 0 THEN
        SET v_due = p_due, group_concat_max_len = GREATEST(@@group_concat_max_len, 16384);
    ELSEIF c_rate IS NOT NULL THEN
        SET v_due = COALESCE(p_due, c_started + IF(c_uniform, RAND() / c_rate, -LN(1 - RAND()) / c_rate));
    ELSE
        SET c_sessions = NULL;  -- a closed loop: no schedule to share
    END IF;

    -- Think time never runs past the slice's end (slices keep to the grid); what is cut is owed.
    IF p_think_left > 0 THEN
        SET v_sleep = LEAST(p_think_left, GREATEST(v_end - v_now, 0));
        DO SLEEP(v_sleep);
        SET o_think_s = v_sleep, o_think_left = p_think_left - v_sleep;
        SET v_now = UNIX_TIMESTAMP(SYSDATE(6));
    END IF;

    -- Each instruction of the loop costs the server's SQL layer more than its arithmetic (the loop's
    -- instructions besides its statements were 15% of the server's CPU samples, bench_mysql_cpu.py's perf):
    -- counts that follow from others (iterations, SELECTs) are made once after it, tests are inline.
    slices: WHILE v_now < v_end AND (p_max_iterations IS NULL OR v_iter - p_iterations_before < p_max_iterations) DO
        IF c_sessions > 0 AND v_due IS NULL THEN
            -- The next arrival no session has taken yet (its block of arrivals drawn once per slice).
            UPDATE dbio_rate_ticket SET k = LAST_INSERT_ID(k + 1) WHERE run_id = p_run_id;
            IF ROW_COUNT() <> 1 THEN
                SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'dbio: this run has no schedule (dbio_rate_ticket)';
            END IF;
            SET v_k = LAST_INSERT_ID() - 1;
            IF c_uniform THEN
                SET v_due = c_started + (v_k + 0.5) / (c_rate * c_sessions);
            ELSE
                IF v_k DIV 1024 <> v_block THEN
                    SET v_block = v_k DIV 1024;
                    WITH RECURSIVE a (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM a WHERE i < 31)
                    SELECT GROUP_CONCAT(LPAD(CRC32(CONCAT(p_run_id, '/', v_block * 1024 + x.i * 32 + y.i)), 10, '0')
                                        ORDER BY CRC32(CONCAT(p_run_id, '/', v_block * 1024 + x.i * 32 + y.i))
                                        SEPARATOR '')
                      INTO v_points FROM a AS x, a AS y;
                END IF;
                SET v_due = c_started + (v_block + (CAST(SUBSTRING(v_points, (v_k % 1024) * 10 + 1, 10) AS DOUBLE) + 0.5)
                                         / 4294967296) * 1024 / (c_rate * c_sessions);
            END IF;
        END IF;
        -- An open loop waits for the statement's intended start; one due after the slice's end waits there.
        IF c_rate IS NOT NULL THEN
            SET v_now = UNIX_TIMESTAMP(SYSDATE(6));
            IF v_due >= v_end THEN
                DO SLEEP(GREATEST(v_end - v_now, 0));
                SET v_now = UNIX_TIMESTAMP(SYSDATE(6));
                LEAVE slices;
            ELSEIF v_due > v_now THEN
                DO SLEEP(v_due - v_now);
            END IF;
        END IF;
        SET v_iter = v_iter + 1;
        IF v_iter % c_hot_every = 0 THEN
            SET v_lo = c_hot_lo + FLOOR(RAND() * v_hot_span);
        ELSE
            SET v_lo = 1 + FLOOR(RAND() * v_span);
        END IF;
        SET v_hi = v_lo + c_work_unit - 1;

        -- Exactly update_pct of every 100 consecutive iterations UPDATE, spread evenly.
        IF ((v_iter + v_phase) * c_update_pct) DIV 100 <> ((v_iter + v_phase - 1) * c_update_pct) DIV 100 THEN
            SET v_kind = 2;
            SET v_fill = SUBSTRING(v_pool, 1 + FLOOR(RAND() * v_pool_span), c_fill);
            SET v_hi = v_lo + c_update_rows - 1;
            SET v_t0 = UNIX_TIMESTAMP(SYSDATE(6));
            -- A conflict (40001: a deadlock, or on a Galera node a certification failure or a brute-force abort
            -- by another node's write-set) rolled the UPDATE back: it runs again, timed as one, and is counted.
            -- So is one a Galera node refused while outside a primary component (1047, 1180: a node was lost
            -- and the others are forming the cluster again), after a pause; for NONPRIMARY_SECONDS at most.
            SET v_conflict = 1, v_wait_from = NULL;
            WHILE v_conflict > 0 DO
                SET v_conflict = 0;
                BEGIN
                    DECLARE CONTINUE HANDLER FOR SQLSTATE '40001' SET v_conflict = 1;
                    DECLARE CONTINUE HANDLER FOR 1047, 1180 SET v_conflict = 2;
                    IF v_iter % c_hot_schema_every = 0 THEN
                        UPDATE dbio_cf1_1 FORCE INDEX (custid)
                           SET c2 = c2 + 1, filler = INSERT(filler, 1, c_fill, v_fill)
                         WHERE custid BETWEEN v_lo AND v_hi;
                    ELSE
                        UPDATE {table} FORCE INDEX (custid) SET c2 = c2 + 1, filler = INSERT(filler, 1, c_fill, v_fill)
                         WHERE custid BETWEEN v_lo AND v_hi;
                    END IF;
                    SET v_n = ROW_COUNT();
                END;
                IF v_conflict = 2 THEN
                    SET v_wait_from = COALESCE(v_wait_from, UNIX_TIMESTAMP(SYSDATE(6)));
                    IF UNIX_TIMESTAMP(SYSDATE(6)) - v_wait_from > {nonprimary_seconds} THEN
                        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
                            'dbio: this Galera node has been outside a primary component too long: the cluster lost its quorum';
                    END IF;
                    DO SLEEP(0.05);
                END IF;
                SET o_retries = o_retries + (v_conflict > 0);
            END WHILE;
            SET o_updates = o_updates + 1;
        ELSE
            SET v_sel = v_sel + 1;
            -- Exactly scan_pct of every 100 consecutive SELECTs scan the scan table.
            IF ((v_sel + v_phase) * c_scan_pct) DIV 100 <> ((v_sel + v_phase - 1) * c_scan_pct) DIV 100 THEN
                SET v_kind = 3;
                SET v_t0 = UNIX_TIMESTAMP(SYSDATE(6));
                SELECT COUNT(c2) INTO v_n FROM dbio_cf2;
                SET o_scans = o_scans + 1;
            ELSE
                SET v_kind = IF(v_iter % c_hot_every = 0, 4, 1);
                SET v_t0 = UNIX_TIMESTAMP(SYSDATE(6));
                IF v_iter % c_hot_schema_every = 0 THEN
                    SELECT COUNT(c2) INTO v_n FROM dbio_cf1_1 FORCE INDEX (custid) WHERE custid BETWEEN v_lo AND v_hi;
                ELSE
                    SELECT COUNT(c2) INTO v_n FROM {table} FORCE INDEX (custid) WHERE custid BETWEEN v_lo AND v_hi;
                END IF;
            END IF;
        END IF;

        SET v_now = UNIX_TIMESTAMP(SYSDATE(6));
        SET v_us = (v_now - v_t0) * 1000000;
        -- {count VALUE KIND}: VALUE counted in KIND's histogram (workload.COUNT): its bucket (histmap.py), a fine
        -- key, its bucket in the map, one comparison with that bucket's bound (1 when at or above it; + 0e0, not
        -- CAST AS DOUBLE: MySQL < 8.0.17), then its count one more.
        {count v_us (v_kind - 1)}
        CASE v_kind
            WHEN 1 THEN SET s1 = s1 + v_us, m1 = GREATEST(m1, v_us);
            WHEN 2 THEN SET s2 = s2 + v_us, m2 = GREATEST(m2, v_us);
            WHEN 3 THEN SET s3 = s3 + v_us, m3 = GREATEST(m3, v_us);
            ELSE SET s4 = s4 + v_us, m4 = GREATEST(m4, v_us), o_hot_rows = o_hot_rows + v_n;
        END CASE;
        SET o_rows = o_rows + v_n;
        IF c_rate IS NOT NULL THEN
            -- from the intended start (kind 5) and the schedule lag (kind 6), each counted as above
            SET v_total = (v_now - v_due) * 1000000, v_lag = GREATEST((v_t0 - v_due) * 1000000, 0);
            {count v_total 4}
            {count v_lag 5}
            SET s5 = s5 + v_total, m5 = GREATEST(m5, v_total), s6 = s6 + v_lag, m6 = GREATEST(m6, v_lag);
            SET o_late = o_late + (c_limit > 0 AND v_total > c_limit), o_early = o_early + IFNULL(v_due < c_open, 0);
            -- a shared schedule's next arrival is taken when the session is free again (the loop's top)
            SET v_due = IF(c_sessions > 0, NULL, v_due + IF(c_uniform, 1 / c_rate, -LN(1 - RAND()) / c_rate));
        END IF;

        -- Every think_every-th iteration ends with a think time ("off" is a period never reached).
        IF v_iter % c_think_every = 0 THEN
            SET v_think = c_think_min + RAND() * (c_think_max - c_think_min);
            SET v_sleep = LEAST(v_think, GREATEST(v_end - v_now, 0));
            DO SLEEP(v_sleep);
            SET o_think_s = o_think_s + v_sleep, o_think_left = v_think - v_sleep;
            SET v_now = UNIX_TIMESTAMP(SYSDATE(6));
        END IF;
    END WHILE slices;
    SET o_iterations = v_iter - p_iterations_before, o_selects = v_sel - p_selects_before - o_scans;

    -- The counters in one text column (each number as the server writes a DOUBLE or BIGINT in a result, shortest
    -- exact form; an absent next due time empty) and the histogram in a second: the client parses every column's
    -- description of every CALL's result in Python, and 27 of them cost it a tenth of its CPU at 64 sessions
    -- (bench/RESULTS.md; workload.slice_result reads the fields).
    SELECT CONCAT_WS(',', o_iterations, o_selects, o_updates, o_scans, o_rows, o_think_s, o_think_left, s1, s2, s3,
                     m1, m2, m3, s4, m4, o_hot_rows, o_retries, v_now,
                     (c_deadline IS NOT NULL AND v_now >= c_deadline)
                        OR (p_max_iterations IS NOT NULL AND o_iterations >= p_max_iterations),
                     IFNULL(v_due, ''), o_late, s5, m5, s6, m6, o_early), v_hist;
END
