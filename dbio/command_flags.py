"""Which options each command takes as flags, and how their help reads (defaults in units).

A command shows and accepts only the options it uses; the others still apply from dbio.toml
and DBIO_* (a configuration file serves every command). `dbio options` prints the same table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from dbio.option import Option, coerce
from dbio.option_table import BY_KEY, OPTIONS
from dbio.units import BLOCK_SIZE, format_bytes, format_duration

Uses = Callable[[Option], bool]


def _the_instance_place(option: Option) -> bool:
    return option.key in ("data_dir", "engine")


def _the_instance(option: Option) -> bool:
    # the instance's connection limit is sized for schemas x threads_per_schema sessions;
    # data_dirs places a load's tables, so only the commands that load use it
    return (option.section == "instance" and option.key not in ("data_dirs",) + _MEMBERS) \
        or option.key in ("engine", "dbname", "schemas", "threads_per_schema")


_MEMBERS = ("standbys", "standby_data_dir", "galera", "galera_data_dir")  # fixed when the instance is made


def _a_new_instance(option: Option) -> bool:
    return _the_instance(option) or option.key in _MEMBERS


def _the_server(option: Option) -> bool:
    return option.section in ("instance", "connection") and option.key not in ("data_dirs",) + _MEMBERS


_RUN_ONLY = ("part", "run_id")  # one run's part: a load, a sweep or a pod has none


def _all_but_nodes(option: Option) -> bool:
    # --nodes picks the members a run uses: a load is the primary's, fio reads one server's storage,
    # and a pod of dbio kubernetes runs against the targets it is given
    return option.key != "nodes" and option.key not in _RUN_ONLY


def _not_a_part(option: Option) -> bool:
    return option.key not in _RUN_ONLY


def _run(option: Option) -> bool:
    return option.key not in _MEMBERS


def _an_existing_instance(option: Option) -> bool:
    # the members are made with the instance: commands that never create one do not take them
    return option.key not in _MEMBERS and _all_but_nodes(option)


def _the_pods(option: Option) -> bool:
    # dbio kubernetes' pods run against its --dsn targets: dbio's own instance has nothing there to set (what
    # becomes of each option it takes: commands/kubernetes.py)
    return option.section != "instance" and _an_existing_instance(option)


# Command (as typed) -> the options it uses. Commands that load or run use them all.
COMMANDS: dict[str, Uses] = {
    "quickstart": _not_a_part, "setup": _all_but_nodes, "run": _run, "sweep": _not_a_part,
    "baseline": _an_existing_instance, "kubernetes": _the_pods, "ops": _an_existing_instance,
    "teardown": _the_server,
    "instance init": _a_new_instance, "instance start": _the_instance,
    "instance stop": _the_instance_place, "instance status": _the_instance_place,
    "instance destroy": _the_instance_place,
}

# The flags outside the option table, and which options' presence brings them.
EXTRA_FLAGS = {"--config": None, "--slob-conf": "scale", "--password": "dsn"}  # and each engine's (EngineSpec.flags)
# ...but the pods of dbio kubernetes read their password from a Secret (--password-secret), never this terminal
EXTRA_NOT_TAKEN = {"kubernetes": ("--password",)}


def takes_extra(command: str, flag: str, keys: set[str]) -> bool:
    """Whether the command takes an extra flag (EXTRA_FLAGS, an engine's), given the options it takes (keys)."""
    brought = EXTRA_FLAGS.get(flag, next((o.key for o in OPTIONS if o.flag == flag), None))
    return (brought is None or brought in keys) and flag not in EXTRA_NOT_TAKEN.get(command, ())


WHILE_RUNNING = ("metrics_port", "metrics_address")  # served while sessions run: by run and sweep (and their pods)
IN_THE_WINDOW = ("event",)  # acts inside a measured window: run and sweep's (the pods refuse it)


def takes(command: str, option: Option) -> bool:
    if option.key in WHILE_RUNNING and command not in ("run", "sweep", "kubernetes"):
        return False
    if option.key in IN_THE_WINDOW and command not in ("run", "sweep", "kubernetes"):
        return False
    return COMMANDS[command](option)


def takes_sessions(command: str) -> bool:
    """--sessions N (total sessions, made threads per schema) wherever threads_per_schema is taken; a
    sweep's --sessions is its own: a list of totals, one per step."""
    return command != "sweep" and takes(command, BY_KEY["threads_per_schema"])


def flags_of(option: Option) -> list[str]:
    """The command-line names of an option ([] when it is set only in files and the environment)."""
    if option.kind in ("settings", "names"):
        return [option.flag]  # --pg-setting, --allow-setting: one item each time
    if not option.cli:
        return []
    names = [option.flag, *option.aliases]
    names += {"schemas": ["-s"], "threads_per_schema": ["-t"]}.get(option.key, [])
    return names


def env_of(option: Option) -> str | None:
    """The DBIO_* variable read for it, when one is (settings tables and command-line-only ones have none)."""
    return option.env if option.file and option.kind != "settings" else None


def help_text(option: Option, preset: dict[str, Any] | None = None) -> str:
    """The option's help with its default in units; preset: a command's own defaults (quickstart)."""
    parts = [option.help]
    default = option.default
    if preset and option.key in preset:
        default = coerce(option, preset[option.key])
    if default not in (None, "", ()):
        parts.append(f"[default: {default_text(option, default)}]")
    if option.slob:
        parts.append(f"[slob.conf: {option.slob[0]}]")
    return " ".join(parts)


def default_text(option: Option, value: Any) -> str:
    if option.kind == "blocks":
        return f"{value:,} blocks ({format_bytes(value * BLOCK_SIZE)})"
    if option.kind == "size":
        return format_bytes(value)
    if option.kind == "duration":
        return f"{value:.0f} s" if float(value).is_integer() and 1 <= value < 3600 else format_duration(value)
    if option.kind == "bool":
        return "on" if value else "off"
    return str(value)


@dataclass(frozen=True)
class Entry:
    """One option as `dbio options` lists it; docs/configuration.md is made from the same entries."""

    option: Option
    flag: str | None  # its first command-line name, None when it has none
    env: str | None  # its DBIO_* variable
    help: str  # its help with its default
    commands: tuple[str, ...]  # the commands that take it

    @property
    def where(self) -> str:
        """Where it can be set, when not everywhere: '' for dbio.toml, DBIO_* and flags alike."""
        if self.option.file:
            return ""
        return "command line or slob.conf only" if self.option.slob else "command line only"


def entries(command: str = "") -> list[Entry]:
    """Every option in the table's order, or only those the command (as typed: 'instance init') takes."""
    return [Entry(option, next(iter(flags_of(option)), None), env_of(option), help_text(option),
                  tuple(c for c in COMMANDS if takes(c, option)))
            for option in OPTIONS if not command or takes(command, option)]
