"""Configuration: defaults < dbio.toml < slob.conf < DBIO_* environment < command line.

The result is one frozen, validated Config. Every error names where the value came
from, the bad value and the fix, one line each.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from dbio import options as opts
from dbio import slobconf, trust, units
from dbio.errors import ConfigError, ConfigErrors
from dbio.options import BY_KEY, OPTIONS, Option

DEFAULT_CONFIG_FILE = "dbio.toml"


@dataclass(frozen=True)
class WorkloadConfig:
    scale: int  # 8 KiB blocks (rows) per schema
    schemas: int
    threads_per_schema: int
    run_time: float  # seconds
    work_loop: int
    warmup: float
    update_pct: int
    scan_pct: int
    scan_table_size: int  # bytes
    work_unit: int
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
    access_path: str
    load_parallel_degree: int
    allow_cached: bool

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
        """Active data set of a run: every schema's table."""
        return self.scale * self.schemas * units.BLOCK_SIZE


@dataclass(frozen=True)
class InstanceConfig:
    data_dir: Path
    shared_buffers: int
    direct_io: bool
    io_method: str
    io_workers: int
    max_connections: int  # 0 = sized for the sessions
    wal_level: str
    pg_settings: tuple[tuple[str, str], ...]
    allow_settings: tuple[str, ...] = ()  # code-running settings the user allowed by name


@dataclass(frozen=True)
class RunConfig:
    results_dir: Path
    label: str
    interval: float  # seconds, whole
    wait_sample_interval: float


@dataclass(frozen=True)
class ConnectionConfig:
    dsn: str | None
    dbname: str
    password_in_config: bool

    @property
    def embedded(self) -> bool:
        return self.dsn is None


@dataclass(frozen=True)
class Config:
    workload: WorkloadConfig
    instance: InstanceConfig
    run: RunConfig
    connection: ConnectionConfig
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    files: tuple[Path, ...] = field(default=(), compare=False)  # configuration files read

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with any secret in the DSN removed."""
        from dbio.engines.postgres.dsn import redact_dsn

        data = {
            "workload": asdict(self.workload),
            "instance": {**asdict(self.instance), "data_dir": str(self.instance.data_dir),
                         "pg_settings": dict(self.instance.pg_settings)},
            "run": {**asdict(self.run), "results_dir": str(self.run.results_dir)},
            "connection": {"dsn": redact_dsn(self.connection.dsn) if self.connection.dsn is not None else None,
                           "dbname": self.connection.dbname, "embedded": self.connection.embedded},
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


def load_config(sources: Sources) -> Config:
    raw: dict[str, tuple[Any, str]] = {o.key: (o.default, "default") for o in OPTIONS}
    raw.update({key: (value, "default") for key, value in sources.preset.items()})
    errors: list[ConfigError] = []

    config_file = sources.config_file
    if config_file is None and sources.discover and (sources.cwd / DEFAULT_CONFIG_FILE).exists():
        config_file = sources.cwd / DEFAULT_CONFIG_FILE
    files = tuple(p for p in (config_file, sources.slob_conf) if p is not None)
    if config_file is not None:
        text = _read_file(config_file, "--config", "dbio.toml", errors, found=sources.config_file is None)
        if text is not None:
            raw.update(_read_toml(config_file, text, errors))
    if sources.slob_conf is not None:
        text = _read_file(sources.slob_conf, "--slob-conf", "slob.conf", errors)
        if text is not None:
            raw.update(_read_slob_conf(sources.slob_conf, text, errors))
    raw.update(_read_env(sources.env))
    for key, value in sources.cli.items():
        if value is None:
            continue
        option = BY_KEY[key]
        if option.kind == "settings":  # --pg-setting adds to the file's settings, name by name
            try:
                value = {**dict(opts.coerce(option, raw[key][0])), **dict(opts.coerce(option, value))}
            except ValueError:
                pass  # the bad value is reported when it is coerced below
        raw[key] = (value, option.flag)

    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for option in OPTIONS:
        value, origin = raw[option.key]
        origins[option.key] = origin
        try:
            values[option.key] = opts.coerce(option, value)
        except ValueError as exc:
            errors.append(_value_error(option, origin, value, str(exc)))
    if errors:
        raise ConfigErrors(errors)

    config = _build(values, origins, sources.cwd, files)
    errors.extend(validate(config))
    if errors:
        raise ConfigErrors(errors)
    return config


def option_values(config: Config) -> dict[str, Any]:
    """Every option's resolved value, in a form load_config accepts back (sweeps resume from it).
    The DSN keeps no password: a resumed sweep takes it from the environment again."""
    from dbio.engines.postgres.dsn import redact_dsn

    values: dict[str, Any] = {}
    for option in OPTIONS:
        value = getattr(getattr(config, option.section), option.key)
        if isinstance(value, Path):
            value = str(value)
        elif option.kind == "settings":
            value = [list(pair) for pair in value]
        elif option.key == "dsn" and value is not None:
            value = redact_dsn(value)
        values[option.key] = value
    return values


def display_key(option: Option, origin: str) -> str:
    """How to name a value in an error: in the user's own terms, where it came from."""
    if origin == "default":
        return option.key
    if origin.startswith("--"):
        return origin
    if origin.startswith("DBIO_"):
        return origin
    return f"{origin}: {option.section}.{option.key}" if origin.endswith(".toml") else f"{origin}: {option.key}"


def _value_error(option: Option, origin: str, value: Any, problem: str) -> ConfigError:
    rng = option.describe_range()
    fix = option.fix or (f"use {rng}" if rng else f"see dbio help for {option.flag}")
    return ConfigError(display_key(option, origin), value, problem, fix)


def _read_file(path: Path, flag: str, kind: str, errors: list[ConfigError], *, found: bool = False) -> str | None:
    """A configuration file's text. It can make dbio run commands (archive_command), so it is read
    only when the user running dbio, or root, owns it and nobody else may write it."""
    try:
        return trust.read_trusted(path).decode()
    except FileNotFoundError:
        errors.append(ConfigError(flag, str(path), "file not found", f"give the path of an existing {kind}"))
    except trust.UntrustedFile as exc:
        where = f"./{path.name} (found in the current directory)" if found else str(path)
        errors.append(ConfigError(where, "(file)", f"refusing to read it: it {exc.problem}",
                                  "make it yours and not writable by others (chown, chmod go-w), or use --config "
                                  "with your own file"))
    except UnicodeDecodeError as exc:
        errors.append(ConfigError(str(path), "(file)", f"is not UTF-8 text ({exc.reason} at byte {exc.start})",
                                  "save it as UTF-8"))
    except OSError as exc:
        errors.append(ConfigError(flag, str(path), f"cannot be read ({exc.strerror})",
                                  "check the path and permissions"))
    return None


def _read_toml(path: Path, text: str, errors: list[ConfigError]) -> dict[str, tuple[Any, str]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        errors.append(ConfigError(str(path), "(file)", f"not valid TOML ({exc})", "fix the syntax at that position"))
        return {}
    origin = path.name
    out: dict[str, tuple[Any, str]] = {}
    for name, value in data.items():
        if name in opts.SECTIONS and isinstance(value, dict):
            for key, item in value.items():
                option = BY_KEY.get(key)
                if option is None or option.section != name:
                    errors.append(_unknown_key(f"{origin}: {name}.{key}", key, item, section=name))
                    continue
                if not option.file:
                    errors.append(_command_line_only(f"{origin}: {name}.{key}", item))
                    continue
                out[key] = (item, origin)
        elif name in BY_KEY and not BY_KEY[name].file:
            errors.append(_command_line_only(f"{origin}: {name}", value))
        elif name in BY_KEY:  # a key written without its section is accepted as well
            out[name] = (value, origin)
        else:
            errors.append(_unknown_key(f"{origin}: {name}", name, value))
    return out


def _command_line_only(where: str, value: Any) -> ConfigError:
    return ConfigError(where, value, "allows the server to run programs or load code, so it is taken only from the "
                       "command line", "remove it from the file and pass --allow-setting NAME when you mean it")


def _unknown_key(where: str, key: str, value: Any, section: str | None = None) -> ConfigError:
    candidates = [o.key for o in OPTIONS if section is None or o.section == section]
    if section is None:
        candidates += list(opts.SECTIONS)
    match = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if match:
        fix = f"did you mean '{match[0]}'?"
    elif section is not None and key in BY_KEY:
        fix = f"'{key}' belongs in section [{BY_KEY[key].section}]"
    else:
        fix = "remove it (dbio help lists every key)"
    shown = value if not isinstance(value, dict) else "(table)"
    return ConfigError(where, shown, "unknown key", fix)


def _read_slob_conf(path: Path, text: str, errors: list[ConfigError]) -> dict[str, tuple[Any, str]]:
    try:
        entries, _ = slobconf.parse_text(text, path.name)
    except ConfigErrors as exc:
        errors.extend(exc.errors)
        return {}
    out: dict[str, tuple[Any, str]] = {}
    for entry in entries:
        out[entry.option.key] = (opts.slob_value(entry.option, entry.value), f"{path.name} line {entry.line}: {entry.name}")
    return out


def _read_env(env: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    out: dict[str, tuple[Any, str]] = {}
    for option in OPTIONS:
        if option.env in env and option.kind != "settings" and option.file:
            out[option.key] = (env[option.env], option.env)
    return out


def _build(values: dict[str, Any], origins: dict[str, str], cwd: Path, files: tuple[Path, ...] = ()) -> Config:
    from dbio.engines.postgres.instance.paths import default_data_dir

    def section(name: str) -> dict[str, Any]:
        return {o.key: values[o.key] for o in OPTIONS if o.section == name}

    instance = section("instance")
    data_dir = instance["data_dir"]
    instance["data_dir"] = (cwd / Path(data_dir).expanduser()).resolve() if data_dir else default_data_dir()
    run = section("run")
    run["results_dir"] = (cwd / Path(run["results_dir"]).expanduser()).resolve()
    return Config(
        workload=WorkloadConfig(**section("workload")),
        instance=InstanceConfig(**instance),
        run=RunConfig(**run),
        connection=ConnectionConfig(**section("connection")),
        origins=origins,
        files=files,
    )


def _err(config: Config, key: str, problem: str, fix: str, value: Any = None) -> ConfigError:
    option = BY_KEY[key]
    origin = config.origins.get(key, "default")
    if value is None:
        value = getattr(getattr(config, option.section), key)
    return ConfigError(display_key(option, origin), _show(option, value), problem, fix)


def _show(option: Option, value: Any) -> str:
    if option.kind == "size":
        return units.format_bytes(value)
    if option.kind == "blocks":
        return f"{value} blocks ({units.format_bytes(value * units.BLOCK_SIZE)})"
    if option.kind == "duration":
        return units.format_duration(value)
    return str(value)


def validate(config: Config) -> list[ConfigError]:
    """Cross-field rules that need no server; each returns one line naming the fix."""
    w, i = config.workload, config.instance
    errors: list[ConfigError] = []
    scale_text = f"scale ({w.scale} blocks)"
    if w.work_unit >= w.scale:
        errors.append(_err(config, "work_unit", f"must be smaller than {scale_text}",
                           "lower work_unit or raise scale"))
    if w.run_time == 0 and w.work_loop == 0:
        errors.append(_err(config, "run_time", "and work_loop = 0 leave the run without an end",
                           "set run_time (e.g. 300s) or work_loop (iterations per session)"))
    if w.hotspot:
        if w.hotspot_offset + w.hotspot_size > w.scale * units.BLOCK_SIZE:
            errors.append(_err(config, "hotspot_offset",
                               f"plus hotspot_size {units.format_bytes(w.hotspot_size)} ends beyond the data set "
                               f"({units.format_bytes(w.scale * units.BLOCK_SIZE)} per schema)",
                               "lower hotspot_offset or hotspot_size, or raise scale"))
        if w.hotspot_blocks <= w.work_unit:
            errors.append(_err(config, "hotspot_size", f"holds fewer blocks than work_unit ({w.work_unit})",
                               "raise hotspot_size or lower work_unit"))
    if w.think_time_frequency and w.think_time_min > w.think_time_max:
        errors.append(_err(config, "think_time_min",
                           f"is larger than think_time_max ({units.format_duration(w.think_time_max)})",
                           "make think_time_min <= think_time_max"))
    if w.scan_pct > 0 and w.scan_table_size == 0:
        errors.append(_err(config, "scan_pct", "needs a scan table but scan_table_size = 0",
                           "set scan_table_size (e.g. 64MiB) and run dbio setup"))
    if not float(config.run.interval).is_integer():
        errors.append(_err(config, "interval", "is not a whole number of seconds",
                           "use a whole number of seconds (the engine publishes its counters once a second)"))
    if 0 < w.scan_table_size < units.BLOCK_SIZE:
        errors.append(_err(config, "scan_table_size", "is smaller than one 8 KiB block",
                           "use 0 (no scan table) or at least 8KiB"))
    if w.hot_schema_frequency and w.schemas == 1:
        errors.append(_err(config, "hot_schema_frequency",
                           "needs more than one schema (with schemas = 1 every session already uses schema 1)",
                           "set schemas > 1 or hot_schema_frequency = 0"))
    if w.sessions > 4096:
        errors.append(_err(config, "threads_per_schema",
                           f"gives {w.sessions} sessions (schemas x threads_per_schema), above the 4096 dbio supports",
                           "lower schemas or threads_per_schema"))
    if config.connection.embedded:
        if i.max_connections and w.sessions + RESERVED_CONNECTIONS > i.max_connections:
            errors.append(_err(config, "max_connections",
                               f"is too small for {w.sessions} sessions plus {RESERVED_CONNECTIONS} for dbio's own connections",
                               f"set max_connections >= {w.sessions + RESERVED_CONNECTIONS} or 0 (sized automatically)"))
        cache = i.shared_buffers
        if not w.allow_cached and w.data_bytes <= cache:
            errors.append(_err(config, "scale",
                               f"makes a data set of {units.format_bytes(w.data_bytes)}, which fits in shared_buffers "
                               f"({units.format_bytes(cache)}): the run would measure memory, not storage",
                               "raise scale (several times shared_buffers) or pass --allow-cached for a logical I/O test",
                               value=w.scale))
        if i.io_method != "worker" and ("io_workers" in config.origins and config.origins["io_workers"] != "default"):
            errors.append(_err(config, "io_workers", f"only applies to io_method = worker (io_method is {i.io_method})",
                               "remove io_workers or set io_method = worker"))
    errors.extend(_database_errors(config))
    for name, _ in i.pg_settings:
        if opts.runs_code(name) and name not in i.allow_settings:
            errors.append(_err(config, "pg_settings",
                               f"sets {name}, which makes the server run a program or load code",
                               f"pass --allow-setting {name} if you mean it, or remove the setting",
                               value=f"{name} = ..."))
    dsn_problem = _dsn_problem(config.connection.dsn) if config.connection.dsn is not None else None
    if dsn_problem is not None:
        errors.append(_malformed_dsn(config, dsn_problem))
    elif config.connection.dsn is not None and _dsn_has_password(config.connection.dsn):
        origin = config.origins.get("dsn", "default")
        shown = display_key(BY_KEY["dsn"], origin)
        if origin == "--dsn":
            errors.append(ConfigError(shown, "(contains a password)",
                                      "a password on the command line is visible to every user of this host (ps) "
                                      "and stays in shell history",
                                      "use PGPASSWORD, ~/.pgpass or --password (asks for it) instead"))
        elif not origin.startswith("DBIO_") and not config.connection.password_in_config:
            errors.append(ConfigError(shown, "(contains a password)",
                                      "passwords are not read from configuration files",
                                      "put the password in PGPASSWORD or ~/.pgpass and remove it from the file "
                                      "(or set password_in_config = true in [connection] if you insist)"))
    return errors


# Databases every PostgreSQL server has for its own use: dbio loads into a database of its own.
SYSTEM_DATABASES = ("template0", "template1", "postgres")


def _database_errors(config: Config) -> list[ConfigError]:
    """The load database must be one dbio may fill and drop objects in."""
    if config.connection.embedded:
        name, key = config.connection.dbname, "dbname"
    else:
        from dbio.engines.postgres import dsn

        params = dsn.parse_or_none(config.connection.dsn or "")
        if params is None:
            return []  # a malformed DSN is reported on its own
        name = params.get("dbname") or os.environ.get("PGDATABASE")
        key = "dsn"
    if name is None:
        return []
    if not str(name).strip():
        return [_err(config, key, "names an empty database", "give a database name (the default is dbio)", value="''")]
    if name in SYSTEM_DATABASES:
        return [_err(config, key, f"uses the database '{name}', which the server keeps for itself",
                     "create a database for dbio (CREATE DATABASE dbio) and name it"
                     + (" (dbname=... in --dsn)" if key == "dsn" else " with --dbname"),
                     value=name if key == "dbname" else "(dbname=" + str(name) + ")")]
    return []


# Connections dbio opens besides the sessions: control, sampler, plan check.
RESERVED_CONNECTIONS = 5


def _dsn_problem(dsn: str) -> str | None:
    from dbio.engines.postgres.dsn import problem

    return problem(dsn)


def _malformed_dsn(config: Config, problem: str) -> ConfigError:
    from dbio.engines.postgres.dsn import redact_dsn

    shown = display_key(BY_KEY["dsn"], config.origins.get("dsn", "default"))
    return ConfigError(shown, redact_dsn(config.connection.dsn or ""), f"is not a valid connection string: {problem}",
                       "write key=value pairs (host=db port=5432 dbname=dbio) or a URI "
                       "(postgresql://user@db:5432/dbio)")


def _dsn_has_password(dsn: str) -> bool:
    from dbio.engines.postgres.dsn import dsn_has_password

    return dsn_has_password(dsn)


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("DBIO_")}
