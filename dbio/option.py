"""One option: how it is declared, named and parsed.

The option table itself (option_table.py) holds the options of every engine and the engine-specific
ones each engine declares (engines/<name>/engine_options.py); each command's own flags (run --baseline,
ops --wal, ...) are rows of the same format in command_options.py (section OWN). Values are normalized on
the way in: sizes to bytes, block counts to 8 KiB blocks, durations to seconds.

The row format (a new option is one row; a change to the format is a new field with a default, so that
rows written before it read the same):
- key, section, kind, default, help: what it is; min/max/choices its range; slob its slob.conf names;
- cli/file: where it may be set (command line; dbio.toml and DBIO_*);
- commands: the commands that take it as a flag, as typed ('run', 'instance init'; '' the root command);
- for a command's own flag (section OWN) also: param, the name its command receives it by when not its
  key; metavar; repeat, how a repeatable flag's items combine ('adds_up': each one more, kept in order;
  'per_name': each NAME once, as item_name compares them; 'per_key': each KEY= once, exactly as given);
  unset: its command receives None when it is not given (to tell that it was) and applies the default
  itself, which its help states; required.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from dbio import controls, units

SECTIONS = ("workload", "instance", "run", "connection")
OWN = "command"  # the section of a command's own flags: never in dbio.toml, slob.conf or DBIO_* (command_options.py)
REPEATS = ("", "adds_up", "per_name", "per_key")

# The commands that take the table's options, as typed, in the order `dbio options` names them; and the
# scopes a row's commands are made of (fio's categories), each a tuple of them.
COMMANDS = ("quickstart", "setup", "run", "sweep", "baseline", "kubernetes", "ops", "teardown",
            "instance init", "instance start", "instance stop", "instance status", "instance destroy")
LOADS = ("quickstart", "setup", "run", "sweep", "baseline", "ops")  # on the loaded data set's server
RUNS = LOADS + ("kubernetes",)  # ...and the pods dbio kubernetes writes, against their --dsn targets
SERVER = RUNS + ("teardown",)  # which server: an existing one (--dsn) or the engine's own instance
STARTS = ("instance init", "instance start")  # the instance started in its settings
SETTINGS = LOADS + ("teardown",) + STARTS  # the instance's settings: wherever dbio may start it
INSTANCE = COMMANDS[COMMANDS.index("instance init"):]  # the instance group's commands: its place
MAKES = ("quickstart", "setup", "sweep", "instance init")  # the members, made with the instance


@dataclass(frozen=True)
class Option:
    key: str
    section: str
    kind: str  # int | pct | blocks | size | duration | bool | instant | choice | path | str | strs | settings | names
    # (a command's own flag also float; its size and duration reach its command as given, to parse)
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    slob: tuple[str, ...] = ()  # slob.conf / pgio.conf names
    slob_unit: int | None = None  # multiplier for bare numbers in slob.conf (e.g. MB)
    cli: bool = True
    file: bool = True  # settable in dbio.toml and the environment (False: only on the command line)
    fix: str | None = None  # how to fix a bad value, when more specific than the range
    aliases: tuple[str, ...] = ()  # more command-line names
    engine: str | None = None  # the engine it belongs to; None: every engine
    managed: tuple[tuple[str, str], ...] = ()  # settings kind: names dbio sets itself, and why
    distinct: str = ""  # strs kind: what each item is, when one given twice is refused (each --dsn a server)
    commands: tuple[str, ...] = ()  # the commands that take it as a flag, as typed ('run', 'instance init')
    # a command's own flag (section OWN) only:
    param: str = ""  # the name its command receives it by, when not its key
    metavar: str = ""  # what --help shows for its value, when not its kind's
    repeat: str = ""  # a repeatable flag: adds_up, per_name or per_key (REPEATS)
    unset: bool = False  # None reaches its command when not given; the default (said in its help) applies
    required: bool = False

    @property
    def name(self) -> str:
        """The parameter its command receives it by."""
        return self.param or self.key

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

    def how_to_fix(self) -> str:
        """What to do about a value it cannot take: its own fix, its range, or where to read about it."""
        rng = self.describe_range()
        return self.fix or (f"use {rng}" if rng else f"see {self.flag} in dbio options")


def item_name(text: str) -> str:
    """The name an item NAME=VALUE (or NAME alone) sets, as dbio compares names: WORK_MEM=1MB sets
    work_mem, update-pct=0,20 update_pct. Two items of one name in one place are refused, whatever the
    place (a flag given twice, a file's table)."""
    return text.partition("=")[0].strip().lower().replace("-", "_")


def _fmt(kind: str, v: float) -> str:
    if kind == "size":
        return units.format_bytes(v)
    if kind == "blocks":  # given as a size or a block count: both, so either reads it
        return f"{int(v):,} blocks ({units.format_bytes(v * units.BLOCK_SIZE)})"
    if kind == "duration":
        return units.format_duration(v)
    return f"{v:g}"


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
        "instant": units.parse_instant,
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
    if kind == "strs":  # one string, or several (a repeated flag, a list in dbio.toml)
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items or not all(isinstance(v, str) for v in items):
            raise ValueError("expected a string or a list of strings")
        if option.distinct and len(set(items)) < len(items):
            raise ValueError(f"the same {option.distinct} is given twice")
        return tuple(_printable(item) for item in items)
    if kind in ("path", "str"):
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ValueError("expected a string")
        if kind == "str" and option.max is not None and len(str(value)) > option.max:  # a str's max: its length
            raise ValueError(f"longer than {option.max:g} characters")
        return _printable(str(value))
    if kind == "settings":
        return _coerce_settings(value, dict(option.managed))
    if kind == "names":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) and v for v in items):
            raise ValueError("expected setting names")
        _once([item_name(v) for v in items])
        return tuple(sorted({_printable(v).strip().lower() for v in items}))
    raise AssertionError(f"unknown option kind {kind}")


def _coerce_settings(value: Any, managed: dict[str, str]) -> tuple[tuple[str, str], ...]:
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
        why = managed.get(name.lower())
        if why:
            raise ValueError(f"'{name}' is set by dbio ({why})")
        if isinstance(setting, bool):
            setting = "on" if setting else "off"
        text = str(setting)
        if controls.problem(text):
            raise ValueError(f"the value of '{name}' {controls.problem(text)}")
        out.append((name.lower(), text))
    _once([name for name, _ in out])
    return tuple(sorted(out))


def _once(names: list[str]) -> None:
    """Each name once: a table or list that sets one twice (WORK_MEM and work_mem) would keep only one of them."""
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"'{twice[0]}' is given twice: give each setting once")


def _printable(text: str) -> str:
    """Free text (a label, a name, a path, a connection string): printed and written as it is, so it may
    hold no escape sequence or bidirectional override."""
    problem = controls.problem(text)
    if problem:
        raise ValueError(f"{problem}; use printable characters")
    return text


def slob_value(option: Option, raw: str) -> Any:
    """Convert a slob.conf value to what the dbio option expects."""
    text = raw.strip()
    if option.slob_unit and text.replace(".", "", 1).isdigit():
        return int(float(text) * option.slob_unit)
    return text
