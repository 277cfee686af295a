"""Rules across configuration values that need no server, each one line naming the fix.

The rules of every engine live here; each engine adds its own (its entry's check(), through the
registry)."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbio import cluster_members, disruption, parts, units
from dbio import rate_schedule as rate
from dbio.engines import registry
from dbio.errors import ConfigError
from dbio.option import Option
from dbio.option_table import BY_KEY, OPTIONS

if TYPE_CHECKING:
    from dbio.config import Config

# Sessions dbio supports in one run.
MAX_SESSIONS = 4096


def validate(config: Config) -> list[ConfigError]:
    """Every rule's errors: the workload's, the run's, then the chosen engine's."""
    errors = workload_errors(config) + hotspot_errors(config) + run_errors(config) + foreign_option_errors(config)
    errors += instance_option_errors(config) + node_errors(config)
    foreign = foreign_dsn_errors(config) + foreign_instance_errors(config) + data_dir_errors(config)
    # the engine's own rules read its DSN as its own: another engine's would only add a confusing line
    return errors + (foreign or config.spec.check(config))


def foreign_dsn_errors(config: Config) -> list[ConfigError]:
    """A --dsn of another engine's form (mysql:// with the default engine, say): name the engine it is for."""
    engine = config.connection.engine
    shown = display_key(BY_KEY["dsn"], config.origins.get("dsn", "default"))
    errors = []
    for dsn in config.connection.dsns:
        owner = registry.owner_of_dsn(dsn)
        if owner is not None and owner != engine:
            errors.append(ConfigError(shown, registry.entry(owner).redact_dsn(dsn),
                                      f"is a connection string of the {owner} engine, and the engine is {engine}",
                                      f"add --engine {owner}, or give a {engine} connection string"))
    return errors


def data_dir_errors(config: Config) -> list[ConfigError]:
    """A --data-dir that is a file: every command says so, rather than 'no dbio instance there; run dbio
    setup first', which then says it."""
    data_dir = getattr(config.instance, "data_dir", None)
    if not config.connection.embedded or data_dir is None:
        return []
    try:
        a_file = Path(data_dir).exists() and not Path(data_dir).is_dir()
    except OSError:  # one that cannot be looked into: foreign_instance_errors says so
        return []
    if not a_file:
        return []
    shown = display_key(BY_KEY["data_dir"], config.origins.get("data_dir", "default"))
    return [ConfigError(shown, str(data_dir), "is a file, not a directory", "choose a directory path")]


def foreign_instance_errors(config: Config) -> list[ConfigError]:
    """A --data-dir holding another engine's managed instance (a MariaDB one with the default engine, say):
    name the engine it is for, rather than saying there is no instance there; or one that cannot be looked into."""
    engine = config.connection.engine
    data_dir = getattr(config.instance, "data_dir", None)
    if not config.connection.embedded or data_dir is None:
        return []
    shown = display_key(BY_KEY["data_dir"], config.origins.get("data_dir", "default"))
    try:
        owners = registry.owners_of_instance(Path(data_dir))
    except OSError as exc:  # said here in one line, not as an internal error where the instance is looked for
        return [ConfigError(shown, str(data_dir), f"cannot be looked into ({exc.strerror})", "give another --data-dir")]
    if not owners or engine in owners:  # its own record there too: its own checks judge it
        return []
    owner = owners[0]
    return [ConfigError(shown, str(data_dir), f"holds a managed instance of the {owner} engine, and the engine is "
                        f"{engine}", f"add --engine {owner}, or give another --data-dir")]


def display_key(option: Option, origin: str) -> str:
    """How to name a value in an error: in the user's own terms, where it came from."""
    if origin == "default":
        return option.key
    if origin.startswith("--"):
        return origin
    if origin.startswith("DBIO_"):
        return origin
    return f"{origin}: {option.section}.{option.key}" if origin.endswith(".toml") else f"{origin}: {option.key}"


def value_error(option: Option, origin: str, value: Any, problem: str) -> ConfigError:
    """A value that could not be read as its option's kind (or is out of its range)."""
    return ConfigError(display_key(option, origin), value, problem, option.how_to_fix())


def cached_data_errors(config: Config, data_bytes: int, cache_name: str, cache_bytes: int,
                       pages: str = "") -> list[ConfigError]:
    """dbio's own instance's buffer cache would hold the data set: its run would measure memory. Refused before a
    server restarts with that cache. The shape judged is the one the command works on: the loaded data set's
    where the command takes it from the load (config_resolver.py), never a default it will not use."""
    if config.workload.allow_cached or data_bytes > cache_bytes:
        return []
    return [problem(config, "scale", f"makes a data set of {units.format_bytes(data_bytes)}{pages}, which fits in "
                    f"{cache_name} ({units.format_bytes(cache_bytes)}): the run would measure memory, not storage",
                    f"raise scale (several times {cache_name}) or pass --allow-cached for a logical I/O test",
                    value=config.workload.scale)]


def problem(config: Config, key: str, text: str, fix: str, value: Any = None) -> ConfigError:
    """An error about one option's resolved value, named where the user set it."""
    option = BY_KEY[key]
    origin = config.origins.get(key, "default")
    if value is None:  # another engine's option has no place in this engine's record: it was set, no more
        value = getattr(getattr(config, option.section), key, None)
    shown = "(set)" if value is None else show_value(option, value)
    return ConfigError(display_key(option, origin), shown, text, fix)


def show_value(option: Option, value: Any) -> str:
    """An option's value in the user's units."""
    if option.kind == "size":
        return units.format_bytes(value)
    if option.kind == "blocks":
        return f"{value} blocks ({units.format_bytes(value * units.BLOCK_SIZE)})"
    if option.kind == "duration":
        return units.format_duration(value)
    if option.kind == "instant":
        return datetime.fromtimestamp(value, timezone.utc).isoformat(timespec="seconds")
    if option.kind == "settings" and isinstance(value, (tuple, list)):  # name-value pairs (a rule may name one)
        return ", ".join(f"{name}={setting}" for name, setting in value) or "none"
    return str(value)


def workload_errors(config: Config) -> list[ConfigError]:
    """What the sessions do: sizes that fit each other, an end to the run, a sane session count."""
    w = config.workload
    errors: list[ConfigError] = []
    if w.work_unit >= w.scale:
        errors.append(problem(config, "work_unit", f"must be smaller than scale ({w.scale} blocks)",
                              "lower work_unit or raise scale"))
    if w.run_time == 0 and w.work_loop == 0:
        errors.append(problem(config, "run_time", "and work_loop = 0 leave the run without an end",
                              "set run_time (e.g. 300s) or work_loop (iterations per session)"))
    if w.think_time_frequency and w.think_time_min > w.think_time_max:
        errors.append(problem(config, "think_time_min",
                              f"is larger than think_time_max ({units.format_duration(w.think_time_max)})",
                              "make think_time_min <= think_time_max"))
    if w.scan_pct > 0 and w.scan_table_size == 0:
        errors.append(problem(config, "scan_pct", "needs a scan table but scan_table_size = 0",
                              "set scan_table_size (e.g. 64MiB) and run dbio setup"))
    if 0 < w.scan_table_size < units.BLOCK_SIZE:
        errors.append(problem(config, "scan_table_size", "is smaller than one 8 KiB block",
                              "use 0 (no scan table) or at least 8KiB"))
    if w.hot_schema_frequency and w.schemas == 1:
        errors.append(problem(config, "hot_schema_frequency",
                              "needs more than one schema (with schemas = 1 every session already uses schema 1)",
                              "set schemas > 1 or hot_schema_frequency = 0"))
    errors += rate_errors(config)
    if w.sessions > MAX_SESSIONS:
        errors.append(problem(config, "threads_per_schema",
                              f"gives {w.sessions} sessions (schemas x threads_per_schema), above the "
                              f"{MAX_SESSIONS} dbio supports", "lower schemas or threads_per_schema"))
    return errors


def rate_errors(config: Config) -> list[ConfigError]:
    """--rate: a schedule each session can keep, and not with think time (each its own meaning of an open loop)."""
    w = config.workload
    if w.rate is None:
        if w.latency_limit:
            return [problem(config, "latency_limit", "counts statements late from their intended start, and without "
                            "--rate there is none", "give --rate too, or remove --latency-limit")]
        return []
    errors = []
    try:
        of = parts.parse(config.run.part)[1] if config.run.part else 1
    except ValueError:  # part_errors says so
        of = 1
    why = rate.problem(w.rate, w.sessions, of)
    if why:
        errors.append(problem(config, "rate", why, "lower --rate or the sessions" if "above" in why else
                              "raise --rate or lower the sessions"))
    if w.think_time_frequency:
        errors.append(problem(config, "rate", "and think time (think_time_frequency) both space the statements",
                              "give one of them: --rate for an open loop, think time for SLOB's closed one"))
    return errors


def hotspot_errors(config: Config) -> list[ConfigError]:
    """The hot spot lies inside each schema's data set and holds more than one work unit."""
    w = config.workload
    if not w.hotspot:
        return []
    errors: list[ConfigError] = []
    if w.hotspot_offset + w.hotspot_size > w.scale * units.BLOCK_SIZE:
        errors.append(problem(config, "hotspot_offset",
                              f"plus hotspot_size {units.format_bytes(w.hotspot_size)} ends beyond the data set "
                              f"({units.format_bytes(w.scale * units.BLOCK_SIZE)} per schema)",
                              "lower hotspot_offset or hotspot_size, or raise scale"))
    if w.hotspot_blocks <= w.work_unit:
        errors.append(problem(config, "hotspot_size", f"holds fewer blocks than work_unit ({w.work_unit})",
                              "raise hotspot_size or lower work_unit"))
    return errors


START_AT_AHEAD = 7 * 86400  # --start-at at most a week ahead: a run waits for it holding its sessions


def run_errors(config: Config) -> list[ConfigError]:
    errors = member_errors(config) + part_errors(config) + event_errors(config)
    start_at = config.run.start_at
    if start_at is not None and start_at - time.time() > START_AT_AHEAD:
        errors.append(problem(config, "start_at", f"is more than {START_AT_AHEAD // 86400} days ahead: a run waits "
                              "for it with its sessions connected", "give a time within the next 7 days"))
    if (config.run.metrics_port is None and config.origins.get("metrics_address", "").startswith("--")
            and config.run.metrics_address != BY_KEY["metrics_address"].default):  # a sweep's step restates it
        errors.append(problem(config, "metrics_address", "serves nothing without --metrics-port",
                              "give --metrics-port PORT too (0: any free port), or remove --metrics-address"))
    if float(config.run.interval).is_integer():
        return errors
    return errors + [problem(config, "interval", "is not a whole number of seconds",
                             "use a whole number of seconds (the engine publishes its counters once a second)")]


def event_errors(config: Config) -> list[ConfigError]:
    """Each --event parsed, then the events together against the window (dbio/disruption.py)."""
    fix = disruption.FORM
    errors, events = [], []
    for text in config.run.event or ():
        try:
            events.append(disruption.parse(text))
        except ValueError as exc:
            errors.append(problem(config, "event", str(exc), f"give {fix}", value=text))
    if errors:
        return errors
    for text in disruption.problems(tuple(events), config.workload.run_time):
        errors.append(problem(config, "event", text, "give every event a place of its own inside the window "
                              "(--run-time, or the offsets)", value=", ".join(config.run.event or ())))
    try:
        part = parts.parse(config.run.part) if config.run.part else None
    except ValueError:
        return errors  # part_errors says what is wrong with --part
    for text in disruption.part_problems(tuple(events), part):
        errors.append(problem(config, "event", text, "give AT@partK only in a run in parts, K one of its parts",
                              value=", ".join(config.run.event or ())))
    return errors


def part_errors(config: Config) -> list[ConfigError]:
    """--part i/N: well formed, with the agreed start its parts share and a server they all reach."""
    run = config.run
    errors = []
    if run.run_id is not None and run.part is None:
        errors.append(problem(config, "run_id", "names the run that parts share, but this run is not a part",
                              "give --part i/N too, or remove --run-id"))
    if run.run_id is not None and not re.fullmatch(r"[A-Za-z0-9._:-]{1,64}", run.run_id):
        errors.append(problem(config, "run_id", "is not 1 to 64 letters, digits or . _ : -",
                              "give a short name such as nightly-42"))
    if run.part is None:
        return errors
    try:
        parts.parse(run.part)
    except ValueError as exc:
        return errors + [problem(config, "part", str(exc), BY_KEY["part"].fix or "")]
    if run.start_at is None:
        errors.append(problem(config, "part", "needs the start every part agrees on",
                              "give every part the same --start-at"))
    if config.connection.embedded or len(config.connection.dsns) != 1:
        errors.append(problem(config, "part", "runs against one server that every part reaches",
                              "give one --dsn, the same server in every part"))
    return errors


def member_errors(config: Config) -> list[ConfigError]:
    """--nodes names members of the embedded instance: well formed, and without --dsn."""
    if config.run.nodes is None:
        return []
    try:
        cluster_members.parse(config.run.nodes)
    except ValueError as exc:
        return [problem(config, "nodes", str(exc), BY_KEY["nodes"].fix or "")]
    if not config.connection.embedded:
        return [problem(config, "nodes", "picks members of the embedded instance; with --dsn the servers are those "
                        "given", "remove --nodes, or give only the --dsn of the servers to use")]
    return []


def node_errors(config: Config) -> list[ConfigError]:
    """node_names and weights: one per --dsn; names distinct words, weights positive numbers."""
    c, errors = config.connection, []
    nodes = len(c.dsns)
    for key, items in (("node_names", c.node_names), ("weights", c.weights)):
        if items and len(items) != nodes:
            errors.append(problem(config, key, f"gives {len(items)} values for {nodes} --dsn node(s)",
                                  "give one per --dsn, in the same order", ",".join(items)))
    if len(set(c.node_names)) != len(c.node_names) or any(
            not n.replace("-", "").replace("_", "").isalnum() or n == "total" for n in c.node_names):
        errors.append(problem(config, "node_names", "are not distinct simple names",
                              "use distinct words of letters, digits, - and _ (not 'total')", ",".join(c.node_names)))
    for w in c.weights:
        try:
            ok = 0 < float(w) < float("inf")
        except ValueError:
            ok = False
        if not ok:
            errors.append(problem(config, "weights", f"{w!r} is not a positive number", "give positive numbers",
                                  ",".join(c.weights)))
            break
    return errors


def foreign_option_errors(config: Config) -> list[ConfigError]:
    """An option the user set that belongs to another engine than the chosen one."""
    engine = config.connection.engine
    errors: list[ConfigError] = []
    for option in OPTIONS:
        if option.engine in (None, engine) or config.origins.get(option.key, "default") == "default":
            continue
        errors.append(problem(config, option.key, f"applies only to engine {option.engine} (engine is {engine})",
                              f"remove it, or set engine = {option.engine}", config.foreign.get(option.key)))
    return errors


def _instance_options_set(config: Config) -> list[tuple[Option, str]]:
    """(option, where it was set) of dbio's own instance's options the user set, with --dsn."""
    if config.connection.embedded:
        return []
    engine = config.connection.engine
    return [(option, config.origins[option.key]) for option in OPTIONS
            if option.section == "instance" and option.engine in (None, engine)
            and config.origins.get(option.key, "default") != "default"]


def instance_option_errors(config: Config) -> list[ConfigError]:
    """An option of dbio's own instance given on the command line with --dsn: the server given keeps its own
    settings and files, so the value would be silently unused (the result records the server's real settings).
    One set in a file or the environment, which may serve dbio's own instance too, is told (unused_notices)."""
    return [problem(config, option.key, "sets up dbio's own instance; an existing server (--dsn) keeps its own",
                    f"remove {origin}, or run without --dsn on dbio's own instance")
            for option, origin in _instance_options_set(config) if origin.startswith("--")]


def dsn_dbname(config: Config) -> tuple[list[ConfigError], list[str]]:
    """--dbname names the database of dbio's own instance; with --dsn the DSN names it, and a --dbname
    typed beside would be silently unused: refused; one set in a file or the environment (which may serve
    the embedded instance too) told. A command that runs elsewhere (kubernetes) says its own."""
    origin = config.origins.get("dbname", "default")
    if config.connection.embedded or origin == "default":
        return [], []
    if not origin.startswith("--"):
        return [], [f"{display_key(BY_KEY['dbname'], origin)}: not used with --dsn (the DSN names the database)"]
    return [problem(config, "dbname", "names the database of dbio's own instance; with --dsn the DSN names it",
                    "remove --dbname and put the database in the DSN (postgresql://host/NAME or dbname=NAME)")], []


def unused_notices(config: Config) -> list[str]:
    """One line for the options of dbio's own instance a file or the environment set, with --dsn."""
    unused = [display_key(option, origin) for option, origin in _instance_options_set(config)
              if not origin.startswith("--")]
    notices = [f"{', '.join(unused)}: not used with --dsn (options of dbio's own instance; the server given keeps "
               "its own settings, which the result records)"] if unused else []
    address = config.origins.get("metrics_address", "default")
    if (config.run.metrics_port is None and address not in ("default", "") and not address.startswith("--")
            and config.run.metrics_address != BY_KEY["metrics_address"].default):
        notices.append(f"{display_key(BY_KEY['metrics_address'], address)}: not used without metrics_port "
                       "(nothing is served)")
    return notices
