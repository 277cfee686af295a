"""Which options each command takes as flags (each row's commands say it), and how their help reads
(defaults in units).

A command shows and accepts only the options it uses; the others still apply from dbio.toml
and DBIO_* (a configuration file serves every command). `dbio options` prints the same table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbio import command_options
from dbio.option import COMMANDS as OPTION_COMMANDS, OWN, Option, coerce
from dbio.option_table import OPTIONS
from dbio.units import BLOCK_SIZE, format_bytes, format_duration

# The commands that take the table's options (as typed), in the order `dbio options` names them: each
# row says which of them take it (Option.commands, made of option.py's scopes).
COMMANDS = OPTION_COMMANDS

def takes(command: str, option: Option) -> bool:
    """Whether the command takes the option: its row says so."""
    return command in option.commands


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
        if self.option.section == OWN:
            return "command line only"
        if self.option.file:
            return ""
        return "command line or slob.conf only" if self.option.slob else "command line only"


def entries(command: str = "") -> list[Entry]:
    """Every option in the table's order, or only those the command (as typed: 'instance init') takes."""
    return [Entry(option, next(iter(flags_of(option)), None), env_of(option), help_text(option),
                  tuple(c for c in COMMANDS if takes(c, option)))  # in COMMANDS' order, whatever the row's
            for option in OPTIONS if not command or takes(command, option)]


def own_help(option: Option) -> str:
    """A command's own flag's help as its row says it (what only the engines know filled in), with the default
    it applies itself when the flag is not given (an unset row's); click's --help adds any other default."""
    text = option.help.format_map({k: f() for k, f in command_options.HELP_FIELDS.items()}) \
        if "{" in option.help else option.help
    if option.unset and option.default is not None:
        text = f"{text} [default: {default_text(option, option.default)}]"
    return text


_METAVARS = {"path": "PATH", "int": "N", "float": "NUMBER", "size": "SIZE", "duration": "DURATION"}


def own_entries(command: str | None = None) -> list[Entry]:
    """Each command's own flags (command_options.py) as `dbio options` lists them, or only the command's."""
    listed = command_options.COMMAND_OPTIONS if command is None else command_options.of(command)
    out = []
    for option in listed:
        text = own_help(option)
        if not option.unset and option.default is not None and option.kind != "bool":
            text = f"{text} [default: {default_text(option, option.default)}]"
        value = "" if option.kind == "bool" else " " + (option.metavar or _METAVARS.get(option.kind, "TEXT"))
        if option.kind == "choice":
            value = " " + "|".join(option.choices)
        names = sorted([option.flag, *option.aliases], key=lambda n: n.startswith("--"))  # -q, --quiet as --help
        out.append(Entry(option, ", ".join(names) + value, None, text, option.commands))
    return out
