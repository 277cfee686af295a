"""Every knob dbio has, declared once: the options of every engine here, each engine's own in
engines/<name>/engine_options.py, assembled into one table.

Each declaration feeds the config file (TOML section and key), the command line
(--key-with-dashes), the environment (DBIO_KEY), SLOB's slob.conf name, the help
text and validation (option.py parses the values).
"""

from __future__ import annotations

import importlib
from dataclasses import replace

from dbio import engine_table
from dbio.option import COMMANDS, INSTANCE, LOADS, RUNS, SECTIONS, SERVER, STARTS, Option

_MiB = 1 << 20
MAX_LABEL = 200  # a label's most characters, run's and merge's alike

COMMON_OPTIONS: tuple[Option, ...] = (
    # -- workload: what is loaded and what the sessions do -------------------------------
    Option("scale", "workload", "blocks", 131072,
           "Rows (= 8 KiB blocks) per schema: a block count, or a size such as 4GiB.",
           min=64, max=(1 << 40) // 8192, slob=("SCALE",), commands=RUNS),
    Option("schemas", "workload", "int", 1,
           "Schemas, each with its own table (1 = single-schema model: one table shared by all sessions).",
           min=1, max=4096, slob=("NUM_SCHEMAS",), commands=RUNS + STARTS),
    Option("threads_per_schema", "workload", "int", 1,
           "Sessions per schema; total sessions = schemas x threads_per_schema (or give the total: --sessions N).",
           min=1, max=4096, slob=("THREADS_PER_SCHEMA", "NUM_THREADS"), commands=RUNS + STARTS),
    Option("run_time", "workload", "duration", 300.0,
           "Measured run time (after warm-up), e.g. 300s, 5m, 8h; 0 = limited by work_loop only.",
           min=0, max=30 * 86400, slob=("RUN_TIME",), aliases=("--duration",), commands=RUNS),
    Option("work_loop", "workload", "int", 0,
           "Stop each session after this many loop iterations (0 = limited by run_time only); which ones count "
           "is work_loop_scope's.", min=0, max=10**12, slob=("WORK_LOOP",), commands=RUNS),
    Option("work_loop_scope", "workload", "choice", None,
           "What work_loop bounds: session = each session's iterations from its start, warm-up included (SLOB's "
           "WORK_LOOP: the measured window holds what is left after the warm-up); window = its iterations in the "
           "measured window, after a warm-up of any length. Default: session when work_loop comes from a "
           "slob.conf, window otherwise.", choices=("window", "session"), commands=RUNS),
    Option("warmup", "workload", "duration", 30.0,
           "Warm-up before the measured window opens (SLOB uses 30 s); excluded from all figures.",
           min=0, max=86400, commands=RUNS),
    Option("update_pct", "workload", "pct", 0,
           "UPDATEs (each committed) per 100 loop iterations; exact, any value 0..100.",
           min=0, max=100, slob=("UPDATE_PCT",), commands=RUNS),
    Option("scan_pct", "workload", "pct", 0,
           "Full scans of the scan table per 100 SELECTs.",
           min=0, max=100, slob=("SCAN_PCT",), commands=RUNS),
    Option("scan_table_size", "workload", "size", 64 * _MiB,
           "Size of the scan table used by scan_pct (0 = none). Larger than a quarter of the buffer cache, so that "
           "scans read it around the cache.",
           min=0, max=1 << 40, slob=("SCAN_TABLE_SZ",), slob_unit=8192, commands=RUNS),
    Option("work_unit", "workload", "int", 8,
           "Rows (= blocks) each SELECT or UPDATE touches: a random key range of this width.",
           min=1, max=1024, slob=("WORK_UNIT",), commands=RUNS),
    Option("update_work_unit", "workload", "int", 0,
           "Rows each UPDATE touches, when it differs from work_unit (0 = work_unit): pgio's and SLOB's own "
           "UPDATE range.", min=0, max=1024, slob=("UPDATE_WORK_UNIT",), commands=RUNS),
    Option("redo_stress", "workload", "choice", "LITE",
           "WAL per UPDATE: LITE changes ~270 bytes of the row, HEAVY ~2.4 KiB (as SLOB's 19 columns).",
           choices=("LITE", "HEAVY"), slob=("REDO_STRESS",), commands=RUNS),
    Option("hotspot", "workload", "bool", False,
           "Send every hotspot_frequency-th statement to a small region of the data set.",
           slob=("DO_HOTSPOT",), commands=RUNS),
    Option("hotspot_size", "workload", "size", 8 * _MiB,
           "Size of the hot spot.", min=8192, max=1 << 40, slob=("HOTSPOT_MB",), slob_unit=_MiB, commands=RUNS),
    Option("hotspot_offset", "workload", "size", 16 * _MiB,
           "Offset of the hot spot inside each schema's data set.",
           min=0, max=1 << 40, slob=("HOTSPOT_OFFSET_MB",), slob_unit=_MiB, commands=RUNS),
    Option("hotspot_frequency", "workload", "int", 3,
           "Every Nth statement goes to the hot spot.", min=1, max=10**9, slob=("HOTSPOT_FREQUENCY",), commands=RUNS),
    Option("hot_schema_frequency", "workload", "int", 0,
           "Every Nth statement goes to schema 1 instead of the session's own (0 = off).",
           min=0, max=10**9, slob=("HOT_SCHEMA_FREQUENCY", "SHARED_DATA_MODULUS"), commands=RUNS),
    Option("think_time_frequency", "workload", "int", 0,
           "Every Nth iteration sleeps a random time in [think_time_min, think_time_max] (0 = off).",
           min=0, max=10**9, slob=("THINK_TM_FREQUENCY", "THINK_TM_MODULUS"), commands=RUNS),
    Option("think_time_min", "workload", "duration", 0.1,
           "Shortest think time.", min=0, max=3600, slob=("THINK_TM_MIN",), commands=RUNS),
    Option("think_time_max", "workload", "duration", 0.5,
           "Longest think time.", min=0, max=3600, slob=("THINK_TM_MAX",), commands=RUNS),
    Option("rate", "workload", "int", None,
           "Statements per second over all sessions (an open loop, as pgbench --rate): each node its sessions' "
           "share, one schedule in the loop on the server whose next arrival a free session takes; latency "
           "counted from each statement's intended start. Default: none (a closed loop).", min=1, max=10**9,
           fix="give a whole number of statements per second, at least 1 per session",
           commands=tuple(c for c in RUNS if c != "sweep")),  # sweep's --rate is its own: a list of rates
    Option("rate_schedule", "workload", "choice", "poisson",
           "How --rate's intended starts are spaced: poisson (random, exponential gaps: pgbench's) or uniform "
           "(equal gaps).", choices=("poisson", "uniform"), commands=RUNS),
    Option("latency_limit", "workload", "duration", 0,
           "With --rate: statements whose latency from their intended start exceeds this are counted late "
           "(pgbench --latency-limit); 0 = none.", min=0, max=3600, commands=RUNS),
    Option("key_order", "workload", "choice", "random",
           "Physical order of keys: random scatters every key range over the whole table; "
           "contiguous puts neighbouring keys in neighbouring blocks (as older kits did).",
           choices=("random", "contiguous"), commands=RUNS),
    Option("load_parallel_degree", "workload", "int", 2,
           "Concurrent load streams (one table each).", min=1, max=256, slob=("LOAD_PARALLEL_DEGREE",), commands=RUNS),
    Option("allow_cached", "workload", "bool", False,
           "Accept a data set that fits in the cache (a logical I/O test, not a storage test).", commands=RUNS),
    # -- run: where results go and how finely they are sampled ---------------------------
    Option("results_dir", "run", "path", "dbio-results", "Directory under which each run writes its own directory.",
    commands=RUNS),
    # a label is shown and stored whole (reports, result.json, metrics, the pods' --label); 200 is room for any
    # name a person means, and keeps a planted one from bloating every report
    Option("label", "run", "str", "", "A label for the run, part of its directory name (at most 200 characters).",
           max=MAX_LABEL, fix=f"give a label of at most {MAX_LABEL} characters", commands=RUNS),
    Option("start_at", "run", "instant", None,
           "Open the measured window at this instant (ISO 8601 with its zone, e.g. 2026-11-22T19:00:00Z): runs "
           "started on several hosts by any launcher measure the same seconds. dbio connects, warms up, and "
           "waits for it (at most 7 days ahead).", file=False,
           fix="give an ISO 8601 time with its zone within the next 7 days, e.g. 2026-11-22T19:00:00Z", commands=RUNS),
    Option("part", "run", "str", None,
           "This process's part i/N (e.g. 2/3) of one run of several dbio processes against one server, each "
           "with the same --start-at and workload: the server admits them together, refuses other runs, and "
           "dbio merge makes them one. job-index[+K]/N: i from an Indexed Job pod's JOB_COMPLETION_INDEX.",
           file=False, fix="give i/N with 1 <= i <= N, e.g. --part 2/3 (or job-index/N in an Indexed Job's "
                           "pod), with --start-at and --dsn", commands=("run",)),
    Option("run_id", "run", "str", None,
           "The identity the parts of one run share (with --part); default: one derived from --start-at, the "
           "number of parts and the workload.", file=False,
           fix="give the same short name to every part of the run, e.g. --run-id nightly-42", commands=("run",)),
    Option("nodes", "run", "str", None,
           "Members of the embedded instance a run uses as its nodes, comma-separated (e.g. primary,standby2); "
           "default: every member, the primary and each standby (dbio instance init --standbys N).",
           fix="name members of the embedded instance: primary, standby1, standby2, ...",
           commands=("quickstart", "run", "sweep")),
    Option("interval", "run", "duration", 1.0,
           "Length of the intervals the time series and the stability figures use (whole seconds): 1s for "
           "short runs, 10s or more for sustained ones.", min=1, max=3600,
           fix="use a whole number of seconds between 1s and 1h", commands=RUNS),
    # 0.5 s: sampling every 0.1 s cost 0.6% of a core more at one session (bench/RESULTS.md); twice
    # the rate of Oracle's ASH, and every session is sampled each time
    # about a second of CPU per report after the window (its charts): a sweep's hundred steps, a CI job that reads
    # result.json alone, a small host's next run may not want them; `dbio report` makes any of them later
    Option("html_report", "run", "bool", True,
           "Write each run's report.html (its charts) beside report.txt and result.json; off: "
           "`dbio report RUN_DIR --format html` makes it later.", commands=("quickstart", "run", "sweep")),
    Option("wait_sample_interval", "run", "duration", 0.5,
           "Interval at which the wait events of dbio sessions are sampled.", min=0.01, max=60, commands=RUNS),
    Option("baseline_seconds", "run", "duration", 0,
           "With --baseline: fio's synchronous seconds around the run, half before it and half after (more rounds "
           "after it when the two disagree); 0 = 15% of the run's time, at least 6 s and at most 60 s.",
           min=0, max=3600, commands=RUNS),
    # a slob.conf names it as SLOB's does: read only when trusted as the script itself must be (config_files)
    Option("external_script", "run", "path", None,
           "A program run with 'pre' and the run directory when the measured window opens (after the warm-up), "
           "and with 'post' when it closes, as SLOB's EXTERNAL_SCRIPT brackets its window, e.g. to collect "
           "array-side statistics for the same seconds; the sessions run on while it runs. Its output is kept in "
           "the run directory, its exit status and times in result.json. Yours or root's, writable by nobody "
           "else; from the command line or a slob.conf.",
           file=False, slob=("EXTERNAL_SCRIPT",), commands=RUNS),
    Option("event", "run", "strs", None,
           "A disruption at an offset into the measured window, AT=ACTION (repeat it; a list in dbio.toml): "
           "stall:DURATION freezes the sessions' server processes, throttle:IOPS:DURATION limits the server's reads "
           "on the data device (root, the cgroup v1 blkio or v2 io controller), checkpoint, vacuum, index (dbio's own) "
           "and backup:PATH (an online base backup into a new or empty directory; --wal-level replica) run the "
           "engine's maintenance, timed as dbio ops times it, exec:PATH runs "
           "a program of yours (trusted as --external-script) with the run directory; in a run in parts part 1 "
           "runs it, or part K with AT@partK=ACTION. result.json's "
           "figures.disruptions measures each one's dip, time below 90%, recovery and reads lost.",
           fix="give AT=ACTION, e.g. 10s=stall:3s, 10s=throttle:500:10s, 5s=checkpoint, 5s=vacuum, 5s=index, "
               "5s=backup:/path/to/empty-dir or 20s=exec:/path/to/program",
           commands=("run", "sweep", "kubernetes")),
    Option("metrics_port", "run", "int", None,
           "Serve Prometheus/OpenMetrics text at http://ADDRESS:PORT/metrics for the whole run or sweep: the "
           "engine's, the devices' and the host's cumulative counters and the statements' latency histograms, "
           "so that rate() over the window gives the result's figures (0: any free port, printed).",
           min=0, max=65535, commands=("run", "sweep", "kubernetes")),
    Option("metrics_address", "run", "str", "127.0.0.1",
           "The address --metrics-port listens on (0.0.0.0: every interface, e.g. in a pod).",
           commands=("run", "sweep", "kubernetes")),
    # -- instance: where the engine's managed instance lives (each engine declares the rest) --
    Option("data_dir", "instance", "path", None,
           "Directory of the managed instance (the embedded PostgreSQL, or the mysql engine's MariaDB/MySQL); "
           "put it on the storage under test.", commands=LOADS + ("teardown",) + INSTANCE),
    # -- connection: which engine, and an existing server instead of the embedded one -----
    Option("engine", "connection", "choice", engine_table.DEFAULT,
           f"Database engine under test: {' or '.join(engine_table.names())}. Options that dbio options marks "
           "'(NAME only)' apply to that engine alone.", choices=engine_table.names(), commands=COMMANDS),
    Option("dsn", "connection", "strs", None,
           "Use an existing server: a libpq connection string for PostgreSQL (PG* variables fill the rest), "
           "or mysql://user@host:port/dbname with --engine mysql (MySQL, MariaDB). "
           "Repeat it (a list in dbio.toml) to spread the sessions over several servers, one node each. "
           "Passwords belong in PGPASSWORD or ~/.pgpass (MYSQL_PWD or ~/.my.cnf), never here.",
           distinct="connection string", commands=SERVER),  # one server twice would count its I/O twice
    Option("node_names", "connection", "strs", None,
           "Names of the --dsn nodes, in their order (--node-names a,b; node1, node2, ... by default). In dbio.toml "
           "a [[nodes]] table per node (dsn, name, weight) sets dsn, node_names and weights at once.", commands=SERVER),
    Option("weights", "connection", "strs", None,
           "Weight of each --dsn node, in their order (--weights 3,1): sessions are spread in proportion "
           "(largest remainder); without weights they are dealt in turn.", commands=SERVER),
    Option("dbname", "connection", "str", "dbio", "Database dbio uses in the embedded instance.",
           slob=("DBNAME",), commands=SERVER + STARTS),
    Option("password_in_config", "connection", "bool", False,
           "Accept a password in the configuration file's dsn (not recommended: use PGPASSWORD or ~/.pgpass).",
           cli=False, commands=SERVER),
)


def _assemble() -> tuple[Option, ...]:
    """The common options and each engine's (marked with it), section by section; within a section
    the common ones come first."""
    declared = list(COMMON_OPTIONS)
    for name, module in _DECLARED.items():
        declared += [replace(option, engine=name) for option in module.OPTIONS]
    keys = [option.key for option in declared]
    clashes = sorted({key for key in keys if keys.count(key) > 1})
    if clashes:
        raise AssertionError(f"options declared twice: {', '.join(clashes)}")
    strays = sorted({f"{option.key}: {c}" for option in declared for c in option.commands if c not in COMMANDS})
    if strays:
        raise AssertionError(f"options taken by no such command: {', '.join(strays)}")
    return tuple(sorted(declared, key=lambda option: SECTIONS.index(option.section)))


# each engine's declarations (engines/<name>/engine_options.py), by name: declarations only, never its code
_DECLARED = {name: importlib.import_module(engine_table.engine_options_module(name)) for name in engine_table.names()}
OPTIONS: tuple[Option, ...] = _assemble()
# Engine options a sweep may vary by restarting the server (each engine declares its own), and
# the short names sweep step directories use for them.
RESTART_KNOBS: dict[str, str] = {key: short for module in _DECLARED.values()
                                 for key, short in module.RESTART_KNOBS.items()}
LAYOUT_KNOBS: dict[str, str] = {key: short for module in _DECLARED.values()
                                for key, short in module.LAYOUT_KNOBS.items()}
BY_KEY: dict[str, Option] = {o.key: o for o in OPTIONS}
BY_SLOB: dict[str, Option] = {name: o for o in OPTIONS for name in o.slob}

# slob.conf / pgio.conf keys dbio reads but does not use, and why (named on stderr, never their values).
# Every key of SLOB's own slob.conf (2.0 .. 2.5) is an option's slob name or here (tests/unit/test_slobconf.py);
# a reason names only what dbio uses.
_ORACLE_SERVICES = ("Oracle SQL*Net services, one per node: give --dsn once per node instead "
                    "(e.g. a libpq service each: --dsn service=NAME1 --dsn service=NAME2)")
_UPDATE_HOTSPOT = "SLOB 2.2's UPDATEs kept to a share of the data: dbio has no such mode (its hot spot is --hotspot)"
SLOB_IGNORED = {
    "DATABASE_STATISTICS_TYPE": "Oracle statistics package",
    "ADMIN_SQLNET_SERVICE": "Oracle SQL*Net service",
    "SQLNET_SERVICE_BASE": _ORACLE_SERVICES,
    "SQLNET_SERVICE_MAX": _ORACLE_SERVICES,
    "ADMIN_CONNECT_STRING": "Oracle admin connect string: dbio connects with --dsn, or to its own instance",
    "NON_ADMIN_CONNECT_STRING": "Oracle sessions' connect string: use --dsn",
    "DBA_PRIV_USER": "Oracle admin user",
    "SYSDBA_PASSWD": "Oracle password",
    "DO_UPDATE_HOTSPOT": _UPDATE_HOTSPOT,
    "HOTSPOT_PCT": _UPDATE_HOTSPOT,
    "OBFUSCATE_COLUMNS": "dbio always loads varied, incompressible rows",
    "UNIQUE_INDEX": "dbio always builds a unique index",
    "BLOCK_SZ": "dbio uses 8 KiB blocks",
    "NO_OS_PERF_DATA": "runit.sh's iostat, vmstat and mpstat: dbio reads the host's counters itself",
    "SLOB_DEBUG": "runit.sh's session output",
    "SLOB_TEMPDIR": "runit.sh's temporary directory",
    "OS_TEMP": "runit.sh's temporary directory",
    "CONNECT_STRING": "pgio connect string: use --dsn",
    "CREATE_BASE_TABLE": "pgio seed table: dbio loads without one",
}
