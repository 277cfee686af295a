"""Reading configuration sources: dbio.toml and slob.conf (only when trusted), and DBIO_* variables.

Each returns option key -> (raw value, where it came from); config.py coerces and validates."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any, Mapping

from dbio import readback, slob_services, slobconf, trust
from dbio.errors import ConfigError, ConfigErrors
from dbio.option import SECTIONS, Option, coerce, slob_value
from dbio.option_table import BY_KEY, OPTIONS


COST_TABLE = "cost"  # [cost]: prices for a sweep's cost table, not options


def read_file(path: Path, flag: str, kind: str, errors: list[ConfigError], *, found: bool = False) -> str | None:
    """A configuration file's text. It can make dbio run commands (archive_command), so it is read
    only when the user running dbio, or root, owns it and nobody else may write it."""
    try:
        return trust.read_trusted(path, readback.CONFIGURATION).decode()
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
    except readback.Refused as exc:
        errors.append(ConfigError(flag, str(path), str(exc).removeprefix(f"{path} "),
                                  f"give a {kind} dbio can read (a plain file of at most "
                                  f"{readback.CONFIGURATION.max_bytes:,} bytes)"))
    except OSError as exc:
        errors.append(ConfigError(flag, str(path), f"cannot be read ({exc.strerror})",
                                  "check the path and permissions"))
    return None


class BadToml(ValueError):
    """Why a TOML text cannot be read (one line), and what to do about it."""

    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem, self.fix = problem, fix


TOML_DEPTH = 8  # dbio's own tables go 3 deep ([instance.pg_settings], [[nodes]], [cost]); far more is no configuration


def parse_toml(text: str) -> dict[str, Any]:
    """A TOML text, every way it can fail one BadToml: the parser's own errors, the RecursionError it
    lets out for arrays nested thousands deep, and whole numbers outside the 64 bits TOML allows (tomllib
    reads 0xfff... of any length, and lets int()'s ValueError out for 5000 decimal digits)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadToml(f"not valid TOML ({exc})", "fix the syntax at that position") from None
    except RecursionError:
        raise BadToml(f"holds tables or arrays nested more than {TOML_DEPTH} deep", "write plain tables of keys "
                                                                                  "and values") from None
    except ValueError:  # int("9" * 5000): more digits than Python converts (sys.get_int_max_str_digits)
        raise _beyond_64_bits() from None
    pending: list[tuple[Any, int]] = [(data, 0)]
    while pending:  # a loop, not recursion: what the parser nested may be as deep as the stack allows
        value, depth = pending.pop()
        if isinstance(value, (dict, list)) and depth > TOML_DEPTH:
            raise BadToml(f"holds tables or arrays nested more than {TOML_DEPTH} deep", "write plain tables of "
                                                                                      "keys and values")
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
        elif isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 63:
            raise _beyond_64_bits()
    return data


def _beyond_64_bits() -> BadToml:
    return BadToml("holds a whole number beyond the 64 bits TOML allows", "give the value in its unit "
                                                                           "(e.g. 64GiB, 300s)")


def read_toml(path: Path, text: str, errors: list[ConfigError],
              cost: dict[str, Any] | None = None) -> dict[str, tuple[Any, str]]:
    """The options a dbio.toml sets (option key -> (value, origin)); cost: given a dict, its [cost] table's
    prices go into it, as written (jobs/capacity.py checks them for the commands that use them)."""
    try:
        data = parse_toml(text)
    except BadToml as exc:
        errors.append(ConfigError(str(path), "(file)", exc.problem, exc.fix))
        return {}
    origin = path.name
    out: dict[str, tuple[Any, str]] = {}
    written: dict[str, str] = {}  # option key -> where the file sets it: a second place is refused

    def put(key: str, value: Any, where: str) -> None:
        if key in written:  # TOML refuses a key twice in one table; dbio's own spellings of one option too
            errors.append(ConfigError(where, value, f"sets {key} again ({written[key]} sets it too)",
                                      "keep one of them: dbio does not take either silently"))
            return
        written[key] = where.removeprefix(f"{origin}: ")
        out[key] = (value, origin)

    for name, value in data.items():
        if name in SECTIONS and isinstance(value, dict):
            for key, item in value.items():
                option = BY_KEY.get(key)
                if option is None or option.section != name:
                    errors.append(_unknown_key(f"{origin}: {name}.{key}", key, item, section=name))
                    continue
                if not option.file:
                    errors.append(_command_line_only(f"{origin}: {name}.{key}", item))
                    continue
                errors.extend(_empty_settings(f"{origin}: {name}.{key}", option, item))
                put(key, item, f"{origin}: {name}.{key}")
        elif name == NODES_TABLE and isinstance(value, list) and all(isinstance(e, dict) for e in value):
            for key, (item, _) in _nodes_table(origin, value, errors).items():
                put(key, item, f"{origin}: [[{NODES_TABLE}]]")
        elif name == COST_TABLE and isinstance(value, dict):
            if cost is not None:  # prices: checked by jobs/capacity.py for the commands that use them
                cost.update(value)
        elif name in BY_KEY and not BY_KEY[name].file:
            errors.append(_command_line_only(f"{origin}: {name}", value))
        elif name in BY_KEY:  # a key written without its section is accepted as well
            errors.extend(_empty_settings(f"{origin}: {name}", BY_KEY[name], value))
            put(name, value, f"{origin}: {name}")
        else:
            errors.append(_unknown_key(f"{origin}: {name}", name, value))
    return out


NODES_TABLE = "nodes"  # [[nodes]] dsn = "...", name = "...", weight = 2


def _nodes_table(origin: str, entries: list[Any], errors: list[ConfigError]) -> dict[str, tuple[Any, str]]:
    """[[nodes]]: one table per node, as the options dsn, node_names and weights (all or none of each)."""
    dsns, names, weights = [], [], []
    for i, entry in enumerate(entries, start=1):
        where = f"{origin}: nodes[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("dsn"), str):
            errors.append(ConfigError(where, entry, "is not a table with a dsn", 'write dsn = "host=... dbname=..."'))
            return {}
        unknown = sorted(set(entry) - {"dsn", "name", "weight"})
        if unknown:
            errors.append(ConfigError(f"{where}.{unknown[0]}", entry[unknown[0]], "is not a node key",
                                      "a node has dsn, name and weight"))
            return {}
        dsns.append(entry["dsn"])
        if "name" in entry:
            names.append(str(entry["name"]))
        if "weight" in entry:
            weights.append(str(entry["weight"]))
    out: dict[str, tuple[Any, str]] = {"dsn": (dsns, origin)}
    if names:
        out["node_names"] = (names, origin)
    if weights:
        out["weights"] = (weights, origin)
    return out


def _empty_settings(where: str, option: Option, value: Any) -> list[ConfigError]:
    """A setting written with no value ([instance.pg_settings] x = ""). On the command line NAME= drops a
    setting the instance remembers, but a file's table replaces the remembered one whole, so there is
    nothing under it to drop: given to the server, the empty value would replace the server's default."""
    if option.kind != "settings":
        return []
    try:
        pairs = coerce(option, value)
    except ValueError:
        return []  # reported when the value is coerced (config.py)
    return [ConfigError(f"{where}.{name}", '""', "an empty value does not remove a setting in a file",
                        f"delete the line to leave {name} at the server's default (on the command line, "
                        f"{option.flag} {name}= drops a setting the instance remembers)")
            for name, setting in pairs if not setting.strip()]


def _command_line_only(where: str, value: Any) -> ConfigError:
    return ConfigError(where, value, "allows the server to run programs or load code, so it is taken only from the "
                       "command line", "remove it from the file and pass --allow-setting NAME when you mean it")


def _unknown_key(where: str, key: str, value: Any, section: str | None = None) -> ConfigError:
    candidates = [o.key for o in OPTIONS if section is None or o.section == section]
    if section is None:
        candidates += list(SECTIONS)
    match = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if match:
        fix = f"did you mean '{match[0]}'?"
    elif section is not None and key in BY_KEY:
        fix = f"'{key}' belongs in section [{BY_KEY[key].section}]"
    else:
        fix = "remove it (dbio options lists every key)"
    shown = value if not isinstance(value, dict) else "(table)"
    return ConfigError(where, shown, "unknown key", fix)


def read_slob_conf(path: Path, text: str, errors: list[ConfigError],
                   notices: list[str] | None = None) -> dict[str, tuple[Any, str]]:
    """notices: gets one line naming the keys read but not used, and why (never their values)."""
    try:
        entries, ignored = slobconf.parse_text(text, path.name)
    except ConfigErrors as exc:
        errors.extend(exc.errors)
        return {}
    ignored = [i for i in ignored if not i.empty]
    out: dict[str, tuple[Any, str]] = {}
    services = {i.name: i for i in ignored if i.name in ("SQLNET_SERVICE_BASE", "SQLNET_SERVICE_MAX")}
    if len(services) == 2:  # SLOB's services as nodes, when libpq knows them (slob_services.py)
        base, count = services["SQLNET_SERVICE_BASE"], services["SQLNET_SERVICE_MAX"]
        dsns, why = slob_services.as_nodes(base.value, count.value)
        ignored = [i for i in ignored if i.name not in services]
        where = f"{path.name} lines {base.line}, {count.line}: SQLNET_SERVICE_BASE, SQLNET_SERVICE_MAX"
        if dsns is not None:
            out["dsn"] = (dsns, where)
        if notices is not None:
            notices.append(f"{where}: {why}" if dsns else f"{where}: not used: {why}")
    if ignored and notices is not None:
        notices.append(f"{path.name}: not used: " + "; ".join(f"{i.name} (line {i.line}: {i.why})" for i in ignored))
    for entry in entries:
        value = slob_value(entry.option, entry.value)
        if entry.option.kind == "path":  # EXTERNAL_SCRIPT: relative to the slob.conf, as runit.sh runs beside it
            value = str(path.parent / Path(value).expanduser())
        out[entry.option.key] = (value, f"{path.name} line {entry.line}: {entry.name}")
    return out


# DBIO_* variables read besides the options': --debug's, the fault points' of the tests (faults.py), the
# connection string a pod's command line takes from its environment (kubernetes.py), and the test suite's own
# (its instances' directory, the golden reports rewritten), which its dbio processes inherit. An engine's
# password variable never reaches the configuration (config_resolver.command_sources leaves it out).
READ_ELSEWHERE = frozenset({"DBIO_DEBUG", "DBIO_FAULT", "DBIO_FAULT_AFTER", "DBIO_FAULT_MARKER", "DBIO_FAULT_SECONDS",
                            "DBIO_TARGET", "DBIO_TEST_DIR", "DBIO_UPDATE_GOLDEN"})


def read_env(env: Mapping[str, str], errors: list[ConfigError]) -> dict[str, tuple[Any, str]]:
    """The options the DBIO_* variables set. A variable dbio would not read (a misspelt one, or an option's
    that only the command line or a file sets) is an error: left alone, the run would go on without it."""
    out: dict[str, tuple[Any, str]] = {}
    by_env = {option.env: option for option in OPTIONS}
    for name in sorted(n for n in env if n.startswith("DBIO_")):
        option = by_env.get(name)
        if option is not None and option.kind != "settings" and option.file:
            out[option.key] = (env[name], name)
        elif option is not None:
            errors.append(ConfigError(name, "(set)", f"{option.key} is not read from the environment",
                                      f"give {option.flag} on the command line, "
                                      f"and unset {name}"))
        elif name not in READ_ELSEWHERE:
            readable = [o.env for o in OPTIONS if o.kind != "settings" and o.file]
            near = difflib.get_close_matches(name, readable, n=1, cutoff=0.8)
            errors.append(ConfigError(name, "(set)", "names no dbio option",
                                      (f"did you mean {near[0]}? " if near else "")
                                      + f"unset {name} (dbio options lists every DBIO_* variable)"))
    return out
