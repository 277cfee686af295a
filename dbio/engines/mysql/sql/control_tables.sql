-- dbio's control tables in the load's database; {tag} marks them as this setup's (catalog.py).
CREATE TABLE dbio_setup (
    setup_id        CHAR(12) NOT NULL PRIMARY KEY,
    spec            TEXT NOT NULL,
    status          VARCHAR(16) NOT NULL,
    started_at      VARCHAR(40) NOT NULL,
    finished_at     VARCHAR(40),
    seconds         DOUBLE,
    loaded_bytes    BIGINT,
    streams         INT,
    steps           TEXT,
    dbio_version    VARCHAR(40) NOT NULL,
    server_version  VARCHAR(80) NOT NULL
) ENGINE = InnoDB COMMENT = {tag};
CREATE TABLE dbio_setup_tables (
    table_name      VARCHAR(64) NOT NULL PRIMARY KEY,
    kind            VARCHAR(8) NOT NULL,
    schema_index    INT NOT NULL,
    `rows`          BIGINT NOT NULL,
    rows_per_page   INT NOT NULL,
    page_size       INT NOT NULL,
    load_seconds    DOUBLE,
    index_seconds   DOUBLE,
    analyze_seconds DOUBLE,
    loaded_at       VARCHAR(40)
) ENGINE = InnoDB COMMENT = {tag};
CREATE TABLE dbio_run_control (
    run_id           BIGINT NOT NULL PRIMARY KEY,
    slice_seconds    DOUBLE NOT NULL,
    scale            BIGINT NOT NULL,
    work_unit        INT NOT NULL,
    update_work_unit INT,
    update_pct       INT NOT NULL,
    scan_pct         INT NOT NULL,
    fill_bytes       INT NOT NULL,
    hot_lo           BIGINT NOT NULL,
    hot_rows         BIGINT NOT NULL,
    hot_every        BIGINT NOT NULL,
    hot_schema_every BIGINT NOT NULL,
    think_every      BIGINT NOT NULL,
    think_min        DOUBLE NOT NULL,
    think_max        DOUBLE NOT NULL,
    rate_per_s       DOUBLE,                      -- each session's statements/s on a schedule (NULL: a closed loop)
    rate_uniform     TINYINT NOT NULL DEFAULT 0,  -- equal gaps between intended starts (0: exponential)
    latency_limit_us DOUBLE NOT NULL DEFAULT 0,   -- later than this from the intended start: late
    rate_sessions    INT,                         -- sessions sharing the node's schedule (dbio_rate_ticket)
    client           VARCHAR(200),
    created_at       DOUBLE NOT NULL,
    started_at       DOUBLE,
    window_open      DOUBLE,
    deadline         DOUBLE
) ENGINE = InnoDB COMMENT = {tag};
CREATE TABLE dbio_pool (
    id     INT NOT NULL PRIMARY KEY,
    bytes  MEDIUMBLOB NOT NULL
) ENGINE = InnoDB COMMENT = {tag};
-- A run's shared --rate schedule: the next arrival's number (slice.sql). MEMORY: taking one writes no redo.
CREATE TABLE dbio_rate_ticket (
    run_id  BIGINT NOT NULL PRIMARY KEY,
    k       BIGINT NOT NULL
) ENGINE = MEMORY COMMENT = {tag};
