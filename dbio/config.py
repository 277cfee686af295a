"""Configuration's layers, read and made one Config: LAYERS, lowest first, each option taken from the
highest layer that sets it. config_resolver.py reads the facts of the middle layers (what the instance
remembers, the loaded data set's shape) and calls load_config once with them.

The result is one frozen, validated Config. Every error names where the value came
from, the bad value and the fix, one line each.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from dbio import units
from dbio.config_checks import unused_notices, validate, value_error
from dbio.config_files import read_env, read_file, read_slob_conf, read_toml
from dbio.engines import registry
from dbio.errors import ConfigError, ConfigErrors, UsageError
from dbio.option import coerce
from dbio.option_table import BY_KEY, OPTIONS

if TYPE_CHECKING:
    from dbio.engines.spec import EngineSpec

DEFAULT_CONFIG_FILE = "dbio.toml"

# The layers, lowest first. The instance's remembered options enter as defaults (a value the user did not
# set); the loaded data set's shape is named as the setup record where it changes what is below it.
LAYERS = ("defaults", "the command's preset", "what the instance remembers", "the loaded data set's shape",
          "dbio.toml", "slob.conf", "DBIO_* environment", "flags")
LOADED_ORIGIN = "the setup record"

# Connections dbio opens besides the sessions: control, sampler, plan check.
RESERVED_CONNECTIONS = 5


@dataclass(frozen=True)
class WorkloadConfig:
    scale: int  # 8 KiB blocks (rows) per schema
    schemas: int
    threads_per_schema: int
    run_time: float  # seconds
    work_loop: int
    work_loop_scope: str  # session: each session's iterations, warm-up included (SLOB's); window: the window's
    warmup: float
    update_pct: int
    scan_pct: int
    scan_table_size: int  # bytes
    work_unit: int
    update_work_unit: int  # 0: work_unit
    redo_stress: str
    hotspot: bool
    hotspot_size: int  # bytes
    hotspot_offset: int  # bytes
    hotspot_frequency: int
    hot_schema_frequency: int
    think_time_frequency: int
    think_time_min: float
    think_time_max: float
    key_order: str
    load_parallel_degree: int
    allow_cached: bool
    rate: int | None = None  # statements/s over all sessions (an open loop); None: a closed loop
    rate_schedule: str = "poisson"
    latency_limit: float = 0.0  # seconds from the intended start past which a statement is late (0: none)
    access_path: str = "index"  # an engine option (PostgreSQL's); an engine without it reads by index
    scan_workers: int = 0  # an engine option (PostgreSQL's): parallel workers per scan

    @property
    def update_rows(self) -> int:
        """Rows each UPDATE touches."""
        return self.update_work_unit or self.work_unit

    @property
    def sessions(self) -> int:
        return self.schemas * self.threads_per_schema

    @property
    def scan_table_blocks(self) -> int:
        return self.scan_table_size // units.BLOCK_SIZE

    @property
    def hotspot_blocks(self) -> int:
        return self.hotspot_size // units.BLOCK_SIZE

    @property
    def hotspot_offset_blocks(self) -> int:
        return self.hotspot_offset // units.BLOCK_SIZE

    @property
    def data_bytes(self) -> int:
        """Active data set of a run: every schema's table, its rows counted as 8 KiB blocks."""
        return self.table_bytes(units.BLOCK_SIZE)

    def table_bytes(self, page_bytes: int) -> int:
        """Every schema's table where each row takes a page of page_bytes (the engine's: InnoDB's
        can be 16 KiB), as the cache and the disk hold it."""
        return self.scale * self.schemas * page_bytes


@dataclass(frozen=True)
class RunConfig:
    results_dir: Path
    label: str
    interval: float  # seconds, whole
    wait_sample_interval: float
    start_at: float | None = None  # epoch: the measured window opens then (--start-at)
    external_script: str | None = None  # called with pre/post as the window opens and closes (flag or slob.conf)
    nodes: str | None = None  # members of the embedded instance the run uses (None: all)
    baseline_seconds: float = 0.0  # fio's synchronous seconds around a run (0: from the run's time)
    metrics_port: int | None = None  # /metrics served while a run or sweep goes on (0: any free port)
    metrics_address: str = "127.0.0.1"
    part: str | None = None  # i/N: this process's part of one run of several processes (--part)
    run_id: str | None = None  # the identity the parts share (--run-id); default derived (dbio/parts.py)
    event: tuple[str, ...] | None = None  # --event AT=ACTION: disruptions in the window (dbio/disruption.py)
    html_report: bool = True  # each run's report.html beside its report.txt (jobs/run_files.py)


@dataclass(frozen=True)
class ConnectionConfig:
    engine: str
    dsns: tuple[str, ...]  # --dsn, one per node; none: the embedded instance
    dbname: str
    password_in_config: bool
    node_names: tuple[str, ...] = ()  # one per dsn when given
    weights: tuple[str, ...] = ()  # one positive number per dsn when given (checked in config_checks)

    @property
    def dsn(self) -> str | None:
        """The first node's connection string (the only one, but for a run over several servers)."""
        return self.dsns[0] if self.dsns else None

    @property
    def embedded(self) -> bool:
        return not self.dsns


def each_node(config: "Config") -> list["Config"]:
    """The configuration of each node alone (one --dsn each); the embedded instance is one node."""
    if len(config.connection.dsns) < 2:
        return [config]
    return [replace(config, connection=replace(config.connection, dsns=(dsn,))) for dsn in config.connection.dsns]


@dataclass(frozen=True)
class Config:
    workload: WorkloadConfig
    instance: Any  # the engine's embedded-instance options: its own record (registry: instance_config)
    run: RunConfig
    connection: ConnectionConfig
    spec: EngineSpec = field(compare=False, repr=False)  # its engine's, looked up once as it is made (_build)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    files: tuple[Path, ...] = field(default=(), compare=False)  # configuration files read
    notices: tuple[str, ...] = field(default=(), compare=False)  # what the files held that dbio does not use
    # Options of another engine the user set: no record of this engine's holds them, and the refusal
    # (config_checks.foreign_option_errors) names what the user gave.
    foreign: Mapping[str, Any] = field(default_factory=dict, compare=False)
    # dbio.toml's [cost] table as written (prices, which jobs/capacity.py checks), when it has one
    cost: Mapping[str, Any] | None = field(default=None, compare=False)
    # The values set above the defaults (a file, the environment, a flag; the loaded shape) as read, before an
    # engine resolves them (io_method auto): what dbio's own instance remembers of them (target.remember).
    given: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.spec.name != self.connection.engine:  # one engine: a Config made for another carries its spec
            raise AssertionError(f"a Config of engine {self.connection.engine} carries the {self.spec.name} spec")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with any secret in the DSN removed."""
        redact_dsn = self.spec.redact_dsn
        data = {
            "workload": asdict(self.workload),
            "instance": self.instance.to_dict(),
            "run": {**asdict(self.run), "results_dir": str(self.run.results_dir)},
            "connection": {"dsn": redact_dsn(self.connection.dsn) if self.connection.dsn is not None else None,
                           "dbname": self.connection.dbname, "embedded": self.connection.embedded,
                           **({"dsns": [redact_dsn(d) for d in self.connection.dsns]}
                              if len(self.connection.dsns) > 1 else {})},
        }
        data["workload"]["sessions"] = self.workload.sessions
        return data


@dataclass(frozen=True)
class Sources:
    """Where configuration comes from; cli holds only the values the user typed."""

    config_file: Path | None = None
    slob_conf: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    cli: Mapping[str, Any] = field(default_factory=dict)
    cwd: Path = field(default_factory=Path.cwd)
    preset: Mapping[str, Any] = field(default_factory=dict)  # a command's own defaults (quickstart)
    discover: bool = True  # read ./dbio.toml when no config file is named
    sessions: int | None = None  # --sessions N: total sessions, made threads_per_schema (spread_sessions)


SESSIONS_FLAG = "--sessions"


def spread_sessions(total: int, schemas: int, whose: str = "") -> int:
    """Threads per schema for a total of sessions (sessions = schemas x threads_per_schema): with one
    schema the total itself; with several, a multiple of them, or one line saying so.
    whose: where the schema count came from, when not from the user (" (the loaded data set's)")."""
    if total % schemas:
        raise UsageError(f"--sessions {total} cannot be spread evenly over {schemas} schemas{whose}",
                         f"give a multiple of {schemas} (sessions = schemas x threads_per_schema), "
                         "or --threads-per-schema")
    return total // schemas


@dataclass(frozen=True)
class FileLayers:
    """A command's configuration files, each read once (read_files): the dbio.toml and slob.conf layers,
    what they held that dbio does not use, what could not be read (refused where the layers are made), and
    dbio.toml's [cost] table."""

    files: tuple[Path, ...] = ()
    toml: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    slob: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    errors: tuple[ConfigError, ...] = ()
    notices: tuple[str, ...] = ()
    cost: Mapping[str, Any] | None = None


def read_files(sources: Sources) -> FileLayers:
    """The files the sources name (and ./dbio.toml, when found and none is named), each read once."""
    errors: list[ConfigError] = []
    notices: list[str] = []
    config_file = sources.config_file
    if config_file is None and sources.discover and (sources.cwd / DEFAULT_CONFIG_FILE).exists():
        config_file = sources.cwd / DEFAULT_CONFIG_FILE
    toml: dict[str, tuple[Any, str]] = {}
    cost: dict[str, Any] = {}
    if config_file is not None:
        text = read_file(config_file, "--config", "dbio.toml", errors, found=sources.config_file is None)
        if text is not None:
            toml = read_toml(config_file, text, errors, cost)
    slob: dict[str, tuple[Any, str]] = {}
    if sources.slob_conf is not None:
        text = read_file(sources.slob_conf, "--slob-conf", "slob.conf", errors)
        if text is not None:
            slob = read_slob_conf(sources.slob_conf, text, errors, notices)
    return FileLayers(tuple(p for p in (config_file, sources.slob_conf) if p is not None), toml, slob,
                      tuple(errors), tuple(notices), cost or None)


def load_config(sources: Sources, *, check: bool = True, remembered: Mapping[str, Any] | None = None,
                loaded: Mapping[str, Any] | None = None, files: FileLayers | None = None) -> Config:
    """The LAYERS made one Config. remembered: the instance's kept options (ignored whole when one does not
    read: another version's record); loaded: the loaded data set's shape (option key -> value); files: the
    configuration files as read_files read them (read here when not given: a command reads them once).
    check: apply the rules across values (validate); False only to read where the configuration points."""
    raw: dict[str, tuple[Any, str]] = {o.key: (o.default, "default") for o in OPTIONS}
    raw.update({key: (value, "default") for key, value in sources.preset.items()})
    if remembered and _readable(remembered):
        raw.update({key: (value, "default") for key, value in remembered.items()})
    for key, value in (loaded or {}).items():  # named where it changes what the layers below gave
        if _coerced(key, raw[key][0]) != value:
            raw[key] = (value, LOADED_ORIGIN)
    layers = files if files is not None else read_files(sources)
    errors = list(layers.errors)
    raw.update(layers.toml)
    from_slob_conf = layers.slob
    raw.update(from_slob_conf)
    raw.update(read_env(sources.env, errors))
    if sources.sessions is not None:  # above the files' threads, below a flag's (refused together in the CLI)
        raw["threads_per_schema"] = (_threads_for(sources, raw), SESSIONS_FLAG)
    for key, value in sources.cli.items():
        if value is None:
            continue
        option = BY_KEY[key]
        if option.kind == "settings":  # --pg-setting adds to the file's settings, name by name; NAME= drops one
            try:
                merged = {**dict(coerce(option, raw[key][0])), **dict(coerce(option, value))}
                value = {name: setting for name, setting in merged.items() if setting != ""}
            except ValueError:
                pass  # the bad value is reported when it is coerced below
        raw[key] = (value, option.flag)

    if raw["work_loop_scope"][0] is None:  # SLOB's WORK_LOOP counts the warm-up: where SLOB's name gave it, so here
        slob_loop = raw["work_loop"] == from_slob_conf.get("work_loop")
        raw["work_loop_scope"] = ("session" if slob_loop else "window", raw["work_loop_scope"][1])
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for option in OPTIONS:
        value, origin = raw[option.key]
        origins[option.key] = origin
        try:
            values[option.key] = coerce(option, value)
        except ValueError as exc:
            errors.append(value_error(option, origin, value, str(exc)))
    if errors:
        raise ConfigErrors(errors)

    config = replace(_build(values, origins, sources.cwd, layers.files), notices=layers.notices, cost=layers.cost)
    return checked(config) if check else config


def checked(config: Config) -> Config:
    """The configuration once every rule across values holds (ConfigErrors, each rule's line, otherwise), with
    what it sets that nothing uses in its notices."""
    errors = validate(config)
    if errors:
        raise ConfigErrors(errors)
    return replace(config, notices=config.notices + tuple(unused_notices(config)))


def _threads_for(sources: Sources, raw: dict[str, tuple[Any, str]]) -> int:
    """--sessions over the schemas as given, or as loaded."""
    assert sources.sessions is not None
    flag = sources.cli.get("schemas")
    value, origin = (flag, "--schemas") if flag is not None else raw["schemas"]
    try:
        schemas = coerce(BY_KEY["schemas"], value)
    except ValueError:
        schemas = 1  # the bad value is reported when it is coerced
    return spread_sessions(sources.sessions, schemas, " (the loaded data set's)" if origin == LOADED_ORIGIN else "")


def _coerced(key: str, value: Any) -> Any:
    try:
        return coerce(BY_KEY[key], value)
    except ValueError:
        return None  # the bad value is reported when it is coerced


def _readable(remembered: Mapping[str, Any]) -> bool:
    """Every remembered value reads as its option's (a record of another dbio version's may not)."""
    try:
        for key, value in remembered.items():
            coerce(BY_KEY[key], value)
    except ValueError:
        return False
    return True


def option_values(config: Config) -> dict[str, Any]:
    """Every option's resolved value, in a form load_config accepts back (sweeps resume from it).
    The DSN keeps no password: a resumed sweep takes it from the environment again."""
    redact_dsn = config.spec.redact_dsn
    values: dict[str, Any] = {}
    for option in OPTIONS:
        if option.engine not in (None, config.connection.engine):
            continue  # another engine's: given back, it would be refused as not applying
        value = getattr(getattr(config, option.section), option.key)
        if isinstance(value, Path):
            value = str(value)
        elif option.kind == "strs" and isinstance(value, tuple):  # an empty list reads back as unset
            value = [str(v) for v in value] or None
        elif option.kind == "settings":
            value = [list(pair) for pair in value]
        elif option.key == "dsn" and value is not None:
            redacted = [redact_dsn(dsn) for dsn in config.connection.dsns]
            value = redacted[0] if len(redacted) == 1 else redacted
        values[option.key] = value
    return values


def _build(values: dict[str, Any], origins: dict[str, str], cwd: Path, files: tuple[Path, ...] = ()) -> Config:
    engine = registry.entry(values["engine"])

    def section(name: str) -> dict[str, Any]:
        return {o.key: values[o.key] for o in OPTIONS if o.section == name and o.engine in (None, values["engine"])}

    instance, workload = section("instance"), section("workload")
    data_dir = instance.get("data_dir")
    instance["data_dir"] = (cwd / Path(data_dir).expanduser()).resolve() if data_dir else engine.default_data_dir()
    run = section("run")
    # as given, links kept: the trust check judges a link on the way before anything follows it (results_dir.check)
    run["results_dir"] = Path(os.path.abspath(cwd / Path(run["results_dir"]).expanduser()))
    return Config(
        workload=WorkloadConfig(**workload),
        instance=engine.instance_config(instance, workload),
        run=RunConfig(**run),
        connection=_connection(section("connection")),
        origins=origins,
        files=files,
        foreign={o.key: values[o.key] for o in OPTIONS
                 if o.engine not in (None, values["engine"]) and origins.get(o.key, "default") != "default"},
        given={o.key: values[o.key] for o in OPTIONS if origins.get(o.key, "default") != "default"},
        spec=engine,
    )


def _connection(values: dict[str, Any]) -> ConnectionConfig:
    dsns = values.pop("dsn") or ()
    names = _items(values.pop("node_names"))
    weights = _items(values.pop("weights"))
    return ConnectionConfig(dsns=tuple(dsns), node_names=names, weights=weights, **values)


def _items(values: tuple[str, ...] | None) -> tuple[str, ...]:
    """A list option given as one comma-separated value, several, or a TOML list."""
    return tuple(item.strip() for value in values or () for item in str(value).split(",") if item.strip())


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("DBIO_")}
