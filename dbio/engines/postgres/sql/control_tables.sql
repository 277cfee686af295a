-- dbio's control tables: the setup record, what each loaded table holds, run control, and the
-- random bytes UPDATEs write. A control schema that teardown had to keep (it holds something
-- dbio did not create) keeps its setup table, emptied: the tables missing are made again.
-- Every one is tagged for the current setup, and so are its constraints (a teardown names what
-- goes with a table untagged as not dbio's; a column's default is part of its column).
CREATE TABLE IF NOT EXISTS dbio.setup (
    singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    setup_id      text NOT NULL,
    spec          jsonb NOT NULL,            -- what the load holds: scale, schemas, scan table, key order, row format
    status        text NOT NULL,             -- loading | ready
    started_at    timestamptz NOT NULL,
    finished_at   timestamptz,
    seconds       double precision,          -- wall time of the load, all steps
    loaded_bytes  bigint,
    streams       integer,
    steps         jsonb,                     -- seconds per step (create, load, index, analyze)
    dbio_version  text NOT NULL,
    server_version text NOT NULL
);
COMMENT ON TABLE dbio.setup IS {tag};
COMMENT ON CONSTRAINT setup_pkey ON dbio.setup IS {tag};
COMMENT ON CONSTRAINT setup_singleton_check ON dbio.setup IS {tag};

CREATE TABLE IF NOT EXISTS dbio.setup_tables (
    schema_name   text NOT NULL,
    table_name    text NOT NULL,
    kind          text NOT NULL,             -- data | scan
    rows          bigint NOT NULL,
    blocks        bigint NOT NULL,
    load_seconds  double precision NOT NULL,
    index_seconds double precision NOT NULL,
    analyze_seconds double precision NOT NULL,
    loaded_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schema_name, table_name)
);
COMMENT ON TABLE dbio.setup_tables IS {tag};
COMMENT ON CONSTRAINT setup_tables_pkey ON dbio.setup_tables IS {tag};

-- One row per run: the workload every session reads at the start of each slice.
CREATE TABLE IF NOT EXISTS dbio.run_control (
    run_id           bigint PRIMARY KEY,
    started_at       timestamptz,            -- barrier release: origin of the one-second slice grid
    window_open      timestamptz,            -- end of warm-up
    deadline         timestamptz,            -- NULL when only work_loop ends the run
    slice_seconds    double precision NOT NULL,
    scale            bigint NOT NULL,        -- rows per schema in the active data set
    work_unit        integer NOT NULL,
    update_work_unit integer,               -- rows each UPDATE touches (NULL: work_unit; loads of dbio 0.1)
    update_pct       integer NOT NULL,
    scan_pct         integer NOT NULL,
    scan_workers     integer NOT NULL DEFAULT 0,  -- parallel workers per scan (0: the session alone)
    fill_bytes       integer NOT NULL,       -- bytes each UPDATE rewrites (REDO_STRESS)
    hot_lo           bigint NOT NULL,        -- first key of the hot spot
    hot_rows         bigint NOT NULL,
    -- Frequencies are periods in iterations; "off" is stored as a period no run reaches.
    hot_every        bigint NOT NULL,
    hot_schema_every bigint NOT NULL,
    think_every      bigint NOT NULL,
    think_min        double precision NOT NULL,
    think_max        double precision NOT NULL,
    bounds_us        double precision[] NOT NULL,  -- latency histogram bucket bounds, microseconds
    rate_per_s       double precision,       -- each session's statements/s on a schedule (NULL: a closed loop)
    rate_uniform     boolean NOT NULL DEFAULT false,  -- equal gaps between intended starts (false: exponential)
    latency_limit_us double precision NOT NULL DEFAULT 0,  -- later than this from the intended start: late
    rate_sessions    integer,                -- sessions sharing this node's schedule (sequence dbio.rate_<run_id>)
    client           text                  -- host:pid of the dbio process running it
);
COMMENT ON TABLE dbio.run_control IS {tag};
COMMENT ON CONSTRAINT run_control_pkey ON dbio.run_control IS {tag};

-- Random bytes: UPDATEs copy a random piece of them into the row, so every UPDATE changes it.
CREATE TABLE IF NOT EXISTS dbio.pool (
    id     integer PRIMARY KEY,
    bytes  bytea NOT NULL
);
COMMENT ON TABLE dbio.pool IS {tag};
COMMENT ON CONSTRAINT pool_pkey ON dbio.pool IS {tag};
