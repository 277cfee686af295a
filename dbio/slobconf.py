"""Reading SLOB's slob.conf (and pgio.conf): shell KEY=VALUE lines with SLOB's names."""

from __future__ import annotations

import difflib
import re
import shlex
from dataclasses import dataclass

from dbio.errors import ConfigError, ConfigErrors
from dbio.option import Option
from dbio.option_table import BY_SLOB, SLOB_IGNORED

_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_EXPORT_ONLY = re.compile(r"^export(\s+[A-Za-z_][A-Za-z0-9_]*)+\s*$")


@dataclass(frozen=True)
class Entry:
    name: str
    value: str
    line: int
    option: Option


@dataclass(frozen=True)
class Ignored:
    name: str
    line: int
    why: str
    empty: bool = False  # set to nothing, as SLOB ships EXTERNAL_SCRIPT: nothing to explain
    value: str = ""  # read only where a mapping needs it (SQLNET_SERVICE_*), never shown


def parse_text(text: str, origin: str = "slob.conf") -> tuple[list[Entry], list[Ignored]]:
    entries: list[Entry] = []
    ignored: list[Ignored] = []
    errors: list[ConfigError] = []
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line or line.startswith("#") or _EXPORT_ONLY.match(line):
            continue
        where = f"{origin} line {number}"
        m = _ASSIGN.match(line)
        if not m:
            errors.append(ConfigError(where, line, "is not a KEY=VALUE line",
                                      "write it as NAME=value (no spaces around =) or comment it out with #"))
            continue
        name, rest = m.groups()
        try:
            words = shlex.split(rest, comments=True)
        except ValueError:
            errors.append(ConfigError(where, line, "has an unbalanced quote", "close the quote or remove it"))
            continue
        if len(words) > 1:
            errors.append(ConfigError(where, line, "has more than one value",
                                      "quote the value or remove the extra words"))
            continue
        value = words[0] if words else ""
        name_upper = name.upper()
        if name_upper in SLOB_IGNORED:
            ignored.append(Ignored(name_upper, number, SLOB_IGNORED[name_upper], empty=value == "", value=value))
            continue
        option = BY_SLOB.get(name_upper)
        if option is None:
            # only a name dbio uses is worth suggesting: one it ignores would change nothing
            match = difflib.get_close_matches(name_upper, list(BY_SLOB), n=1, cutoff=0.6)
            fix = (f"did you mean {match[0]}?" if match
                   else "remove the line (dbio options lists the slob.conf names it reads)")
            errors.append(ConfigError(f"{where}: {name}", value, "unknown slob.conf name", fix))
            continue
        if value == "" and option.default is None:  # as SLOB ships EXTERNAL_SCRIPT="": none
            continue
        if value == "":
            errors.append(ConfigError(f"{where}: {name}", "(empty)", "has no value", "give a value or remove the line"))
            continue
        entries.append(Entry(name_upper, value, number, option))
    if errors:
        raise ConfigErrors(errors)
    return entries, ignored
