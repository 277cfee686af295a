"""Every knob dbio has, declared once.

Each declaration feeds the config file (TOML section and key), the command line
(--key-with-dashes), the environment (DBIO_KEY), SLOB's slob.conf name, the help
text and validation. Values are normalized on the way in: sizes to bytes, block
counts to 8 KiB blocks, durations to seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from dbio import units

SECTIONS = ("workload", "instance", "run", "connection")


@dataclass(frozen=True)
class Option:
    key: str
    section: str
    kind: str  # int | pct | blocks | size | duration | bool | choice | path | str
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    slob: tuple[str, ...] = ()  # slob.conf / pgio.conf names
    slob_unit: int | None = None  # multiplier for bare numbers in slob.conf (e.g. MB)
    cli: bool = True
    file: bool = True  # settable in dbio.toml and the environment (False: only on the command line)
    fix: str | None = None
    aliases: tuple[str, ...] = ()  # more command-line names  # how to fix a bad value, when more specific than the range

    @property
    def flag(self) -> str:
        # a repeatable flag takes one item each time: --pg-setting NAME=VALUE, --allow-setting NAME
        key = self.key[:-1] if self.kind in ("settings", "names") else self.key
        return "--" + key.replace("_", "-")

    @property
    def env(self) -> str:
        return "DBIO_" + self.key.upper()

    def describe_range(self) -> str:
        if self.choices:
            return " or ".join(self.choices)
        lo = "" if self.min is None else _fmt(self.kind, self.min)
        hi = "" if self.max is None else _fmt(self.kind, self.max)
        if lo and hi:
            return f"{lo}..{hi}"
        if lo:
            return f">= {lo}"
        return f"<= {hi}" if hi else ""


def _fmt(kind: str, v: float) -> str:
    if kind == "size":
        return units.format_bytes(v)
    if kind == "duration":
        return units.format_duration(v)
    return f"{v:g}"


_MiB = 1 << 20
_GiB = 1 << 30

OPTIONS: tuple[Option, ...] = (
    # -- workload: what is loaded and what the sessions do -------------------------------
    Option("scale", "workload", "blocks", 131072,
           "Rows (= 8 KiB blocks) per schema: a block count, or a size such as 4GiB.",
           min=64, max=(1 << 40) // 8192, slob=("SCALE",)),
    Option("schemas", "workload", "int", 1,
           "Schemas, each with its own table (1 = single-schema model: one table shared by all sessions).",
           min=1, max=4096, slob=("NUM_SCHEMAS",)),
    Option("threads_per_schema", "workload", "int", 1,
           "Sessions per schema; total sessions = schemas x threads_per_schema.",
           min=1, max=4096, slob=("THREADS_PER_SCHEMA", "NUM_THREADS")),
    Option("run_time", "workload", "duration", 300.0,
           "Measured run time (after warm-up), e.g. 300s, 5m, 8h; 0 = limited by work_loop only.",
           min=0, max=30 * 86400, slob=("RUN_TIME",), aliases=("--duration",)),
    Option("work_loop", "workload", "int", 0,
           "Stop each session after this many loop iterations (0 = limited by run_time only).",
           min=0, max=10**12, slob=("WORK_LOOP",)),
    Option("warmup", "workload", "duration", 30.0,
           "Warm-up before the measured window opens (SLOB uses 30 s); excluded from all figures.",
           min=0, max=86400),
    Option("update_pct", "workload", "pct", 0,
           "UPDATEs (each committed) per 100 loop iterations; exact, any value 0..100.",
           min=0, max=100, slob=("UPDATE_PCT",)),
    Option("scan_pct", "workload", "pct", 0,
           "Full scans of the scan table per 100 SELECTs.",
           min=0, max=100, slob=("SCAN_PCT",)),
    Option("scan_table_size", "workload", "size", 64 * _MiB,
           "Size of the scan table used by scan_pct (0 = none). Larger than shared_buffers/4 so scans bypass the buffer cache.",
           min=0, max=1 << 40, slob=("SCAN_TABLE_SZ",), slob_unit=8192),
    Option("work_unit", "workload", "int", 8,
           "Rows (= blocks) each SELECT or UPDATE touches: a random key range of this width.",
           min=1, max=1024, slob=("WORK_UNIT",)),
    Option("redo_stress", "workload", "choice", "LITE",
           "WAL per UPDATE: LITE changes ~270 bytes of the row, HEAVY ~2.4 KiB (as SLOB's 19 columns).",
           choices=("LITE", "HEAVY"), slob=("REDO_STRESS",)),
    Option("hotspot", "workload", "bool", False,
           "Send every hotspot_frequency-th statement to a small region of the data set.",
           slob=("DO_HOTSPOT",)),
    Option("hotspot_size", "workload", "size", 8 * _MiB,
           "Size of the hot spot.", min=8192, max=1 << 40, slob=("HOTSPOT_MB",), slob_unit=_MiB),
    Option("hotspot_offset", "workload", "size", 16 * _MiB,
           "Offset of the hot spot inside each schema's data set.",
           min=0, max=1 << 40, slob=("HOTSPOT_OFFSET_MB",), slob_unit=_MiB),
    Option("hotspot_frequency", "workload", "int", 3,
           "Every Nth statement goes to the hot spot.", min=1, max=10**9, slob=("HOTSPOT_FREQUENCY",)),
    Option("hot_schema_frequency", "workload", "int", 0,
           "Every Nth statement goes to schema 1 instead of the session's own (0 = off).",
           min=0, max=10**9, slob=("HOT_SCHEMA_FREQUENCY",)),
    Option("think_time_frequency", "workload", "int", 0,
           "Every Nth iteration sleeps a random time in [think_time_min, think_time_max] (0 = off).",
           min=0, max=10**9, slob=("THINK_TM_FREQUENCY",)),
    Option("think_time_min", "workload", "duration", 0.1,
           "Shortest think time.", min=0, max=3600, slob=("THINK_TM_MIN",)),
    Option("think_time_max", "workload", "duration", 0.5,
           "Longest think time.", min=0, max=3600, slob=("THINK_TM_MAX",)),
    Option("key_order", "workload", "choice", "random",
           "Physical order of keys: random scatters every key range over the whole table; "
           "contiguous puts neighbouring keys in neighbouring blocks (as older kits did).",
           choices=("random", "contiguous")),
    Option("access_path", "workload", "choice", "index",
           "index: index scan, one synchronous 8 KiB read per row (IO:DataFileRead); "
           "bitmap: bitmap heap scan, batched and prefetched reads.",
           choices=("index", "bitmap")),
    Option("load_parallel_degree", "workload", "int", 2,
           "Concurrent load streams (one table each).", min=1, max=256, slob=("LOAD_PARALLEL_DEGREE",)),
    Option("allow_cached", "workload", "bool", False,
           "Accept a data set that fits in the cache (a logical I/O test, not a storage test)."),
    # -- instance: the embedded PostgreSQL ----------------------------------------------
    Option("data_dir", "instance", "path", None,
           "Directory of the embedded instance; put it on the storage under test."),
    Option("shared_buffers", "instance", "size", 128 * _MiB,
           "Buffer cache of the embedded instance; keep it small so reads reach storage.",
           min=16 * _MiB, max=1 << 40),
    Option("direct_io", "instance", "bool", True,
           "Open data files with O_DIRECT (debug_io_direct=data) so every buffer miss is a device read."),
    Option("io_method", "instance", "choice", "worker",
           "PostgreSQL 18 asynchronous I/O method.", choices=("sync", "worker", "io_uring")),
    Option("io_workers", "instance", "int", 3, "I/O worker processes (io_method=worker).", min=1, max=32),
    Option("max_connections", "instance", "int", 0,
           "Connection limit of the embedded instance (0 = sized for the sessions).", min=0, max=10000),
    Option("wal_level", "instance", "choice", "minimal",
           "WAL level of the embedded instance: minimal lets the loader skip WAL; UPDATE WAL is the same as replica.",
           choices=("minimal", "replica", "logical")),
    Option("pg_settings", "instance", "settings", (),
           "Extra postgresql.conf settings for the embedded instance (TOML table [instance.pg_settings]; "
           "on the command line --pg-setting name=value).", cli=False,
           fix="remove that setting, or set it with the dbio option named in the message"),
    Option("allow_settings", "instance", "names", (),
           "Settings that run programs or load code (archive_command, *_preload_libraries, ...) that the user "
           "allows by name, on the command line only (--allow-setting NAME).", cli=False, file=False),
    # -- run: where results go and how finely they are sampled ---------------------------
    Option("results_dir", "run", "path", "dbio-results", "Directory under which each run writes its own directory."),
    Option("label", "run", "str", "", "A label for the run, part of its directory name."),
    Option("interval", "run", "duration", 1.0,
           "Length of the intervals the time series and the stability figures use (whole seconds): 1s for "
           "short runs, 10s or more for sustained ones.", min=1, max=3600,
           fix="use a whole number of seconds between 1s and 1h"),
    Option("wait_sample_interval", "run", "duration", 0.1,
           "Interval at which the wait events of dbio sessions are sampled.", min=0.01, max=60),
    # -- connection: an existing server instead of the embedded one ----------------------
    Option("dsn", "connection", "str", None,
           "Use an existing PostgreSQL server (libpq connection string; PG* variables fill the rest). "
           "Passwords belong in PGPASSWORD or ~/.pgpass, never here."),
    Option("dbname", "connection", "str", "dbio", "Database dbio uses in the embedded instance."),
    Option("password_in_config", "connection", "bool", False,
           "Accept a password in the configuration file's dsn (not recommended: use PGPASSWORD or ~/.pgpass).",
           cli=False),
)

BY_KEY: dict[str, Option] = {o.key: o for o in OPTIONS}
BY_SLOB: dict[str, Option] = {name: o for o in OPTIONS for name in o.slob}

# slob.conf / pgio.conf keys that only make sense for Oracle or for those kits' shell drivers.
SLOB_IGNORED = {
    "DATABASE_STATISTICS_TYPE": "Oracle statistics package",
    "ADMIN_SQLNET_SERVICE": "Oracle SQL*Net service",
    "SQLNET_SERVICE_BASE": "Oracle SQL*Net service",
    "SQLNET_SERVICE_MAX": "Oracle SQL*Net service",
    "DBA_PRIV_USER": "Oracle admin user",
    "SYSDBA_PASSWD": "Oracle password (never read)",
    "OBFUSCATE_COLUMNS": "dbio always loads varied, incompressible rows",
    "UNIQUE_INDEX": "dbio always builds a unique index",
    "DBNAME": "pgio database name: use --dsn",
    "CONNECT_STRING": "pgio connect string: use --dsn",
    "CREATE_BASE_TABLE": "pgio seed table",
    "UPDATE_WORK_UNIT": "pgio's separate UPDATE range: dbio uses work_unit for both",
    "EXTERNAL_SCRIPT": "not supported yet",
    "BLOCK_SZ": "dbio uses 8 KiB blocks",
}


def coerce(option: Option, value: Any) -> Any:
    """Normalize one raw value; raises units.UnitError or ValueError with the problem."""
    if value is None:
        return None
    parsers: dict[str, Callable[[Any], Any]] = {
        "int": units.parse_int,
        "pct": units.parse_int,
        "blocks": units.parse_blocks,
        "size": units.parse_size,
        "duration": units.parse_duration,
        "bool": units.parse_bool,
    }
    kind = option.kind
    if kind in parsers:
        result = parsers[kind](value)
        if option.min is not None and result < option.min:
            raise ValueError(f"below the minimum {_fmt(kind, option.min)}")
        if option.max is not None and result > option.max:
            raise ValueError(f"above the maximum {_fmt(kind, option.max)}")
        return result
    if kind == "choice":
        text = str(value).strip()
        for choice in option.choices:
            if text.lower() == choice.lower():
                return choice
        raise ValueError(f"not one of {', '.join(option.choices)}")
    if kind in ("path", "str"):
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ValueError("expected a string")
        return str(value)
    if kind == "settings":
        return _coerce_settings(value)
    if kind == "names":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) and v for v in items):
            raise ValueError("expected setting names")
        return tuple(sorted({v.strip().lower() for v in items}))
    raise AssertionError(f"unknown option kind {kind}")


def _coerce_settings(value: Any) -> tuple[tuple[str, str], ...]:
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = []
        for entry in value:
            if isinstance(entry, (list, tuple)) and len(entry) == 2:
                items.append((entry[0], entry[1]))
            elif isinstance(entry, str) and "=" in entry:
                name, _, setting = entry.partition("=")
                items.append((name.strip(), setting.strip()))
            else:
                raise ValueError(f"expected name=value, got {entry!r}")
    else:
        raise ValueError("expected a table of name = value")
    out = []
    for name, setting in items:
        if not isinstance(name, str) or not name.replace("_", "").replace(".", "").isalnum():
            raise ValueError(f"'{name}' is not a setting name")
        managed = MANAGED_SETTINGS.get(name.lower())
        if managed:
            raise ValueError(f"'{name}' is set by dbio ({managed})")
        if isinstance(setting, bool):
            setting = "on" if setting else "off"
        text = str(setting)
        if any(ord(ch) < 32 for ch in text):
            raise ValueError(f"the value of '{name}' contains a control character")
        out.append((name.lower(), text))
    return tuple(sorted(out))


# postgresql.conf settings dbio writes itself: the options that own them, or why they are fixed.
MANAGED_SETTINGS = {
    "port": "dbio picks a free port", "listen_addresses": "the instance listens only on its private socket",
    "unix_socket_directories": "the socket lives in the instance's directory",
    "unix_socket_permissions": "the socket directory is private", "unix_socket_group": "the socket is private",
    "shared_buffers": "use the shared_buffers option", "max_connections": "use the max_connections option",
    "io_method": "use the io_method option", "io_workers": "use the io_workers option",
    "debug_io_direct": "use the direct_io option", "wal_level": "use the wal_level option",
    "track_io_timing": "dbio needs it on", "track_wal_io_timing": "dbio needs it on",
    "data_directory": "the instance's data directory is fixed", "hba_file": "dbio writes the instance's access rules",
    "ident_file": "dbio writes the instance's access rules", "config_file": "dbio writes the instance's configuration",
    "include": "dbio writes the instance's configuration", "include_dir": "dbio writes the instance's configuration",
    "include_if_exists": "dbio writes the instance's configuration",
}


# Settings whose value names a program the server runs or code it loads, beyond the pattern
# runs_code() also applies (names ending in _command, _library or _libraries).
CODE_SETTINGS = frozenset({"dynamic_library_path", "extension_control_path", "jit_provider"})


def runs_code(name: str) -> bool:
    """Whether a server setting makes the server run a program or load code (pure)."""
    return name in CODE_SETTINGS or name.endswith(("_command", "_library", "_libraries"))


def slob_value(option: Option, raw: str) -> Any:
    """Convert a slob.conf value to what the dbio option expects."""
    text = raw.strip()
    if option.slob_unit and text.replace(".", "", 1).isdigit():
        return int(float(text) * option.slob_unit)
    return text
