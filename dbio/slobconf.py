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
    """Each name set once, and each option by one name: SLOB sources the file in a shell, where the last
    line wins, and dbio refuses the second line instead of choosing one silently (docs/configuration.md).
    Two names of one option (SLOB 2.2's SHARED_DATA_MODULUS, 2.3's HOT_SCHEMA_FREQUENCY; SLOB's
    THREADS_PER_SCHEMA, pgio's NUM_THREADS) are each one version's: a file kept across versions may hold
    both with one value, never with two."""
    entries: list[Entry] = []
    ignored: list[Ignored] = []
    errors: list[ConfigError] = []
    set_at: dict[str, tuple[str, int, str]] = {}  # a name (or an option's key) -> the name, line and value
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
        option = BY_SLOB.get(name_upper)
        first = set_at.get(name_upper) or (set_at.get(option.key) if option is not None else None)
        if first is not None and first[0] != name_upper and first[2] == value:
            continue  # another version's name for it, with the same value: nothing to choose
        if first is not None:
            again = first[0] == name_upper
            override = f" (a flag overrides the file: {option.flag})" if option is not None and option.cli else ""
            errors.append(ConfigError(
                f"{where}: {name}", value,
                f"sets {name_upper} again (line {first[1]} sets it)" if again
                else f"sets what {first[0]} sets (line {first[1]})",
                ("keep one of the lines: a shell takes the last, dbio takes neither silently" if again
                 else f"keep one of the lines: both are dbio's {option.key if option else name_upper}") + override))
            continue
        set_at[name_upper] = (name_upper, number, value)
        if option is not None:
            set_at[option.key] = (name_upper, number, value)
        if name_upper in SLOB_IGNORED:
            ignored.append(Ignored(name_upper, number, SLOB_IGNORED[name_upper], empty=value == "", value=value))
            continue
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
