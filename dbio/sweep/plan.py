"""What a sweep varies and in which order its steps run (pure).

Layout options (where the embedded instance's files live: options.LAYOUT_KNOBS) vary outermost, so
each layout is made once (the WAL moved, the tables loaded again); then settings that need the
embedded instance restarted (options.RESTART_KNOBS), so each combination of them is set up once;
run knobs vary inside.

A layout value names one place, or several joined with ':' (`--vary data_dirs=/d1,/d1:/d2` is one
directory, then two); `none` is the instance's own (the WAL, or the tables, in its data directory).
"""

from __future__ import annotations

import difflib
import itertools
import re
from dataclasses import dataclass
from typing import Any

from dbio import disruption
from dbio.errors import UsageError
from dbio.option import coerce
from dbio.option_table import BY_KEY, LAYOUT_KNOBS, RESTART_KNOBS
from dbio.sweep import rates

# Knobs a sweep may vary, with the short names step directories use.
RUN_KNOBS = {
    "threads_per_schema": "t", "schemas": "s", "update_pct": "upd", "work_unit": "wu", "scan_pct": "scan",
             "scan_workers": "sw",
    "redo_stress": "redo", "hotspot": "hot", "hotspot_size": "hotsz", "hotspot_offset": "hotoff",
    "hotspot_frequency": "hotf", "hot_schema_frequency": "hsf", "think_time_frequency": "think",
    "think_time_min": "thmin", "think_time_max": "thmax", "access_path": "path", "scale": "scale",
    "run_time": "rt", "warmup": "warm", "work_loop": "loop", "rate": "rate",  # --vary rate=...: a latency curve
    "event": "ev",  # one --event a step (dbio/disruption.py): a sweep over disruptions
}
ABBREVIATIONS = {**LAYOUT_KNOBS, **RESTART_KNOBS, **RUN_KNOBS}
PLACES_SEPARATOR = ":"  # between the directories of one layout value
NO_PLACE = "none"  # the layout value for the instance's own data directory


@dataclass(frozen=True)
class Vary:
    key: str
    values: tuple[str, ...]  # as typed; each step's config validates them

    @property
    def restarts(self) -> bool:
        return self.key in RESTART_KNOBS

    @property
    def layout(self) -> bool:
        return self.key in LAYOUT_KNOBS


def option_value(key: str, value: Any) -> Any:
    """A step's value as the configuration reads it: a layout value's places as the option takes
    them (a list for a list option), `none` as unset; any other value as typed (pure)."""
    if key not in LAYOUT_KNOBS or not isinstance(value, str):
        return value
    if value == NO_PLACE:
        return None
    if BY_KEY[key].kind == "strs":
        return [part for part in value.split(PLACES_SEPARATOR) if part]
    return value


def counted(varies: list[Vary]) -> list[str]:
    """The varied layout lists whose steps a sweep report places by how many directories they name
    (the 1-to-N devices study: data_dirs)."""
    return [v.key for v in varies if v.layout and BY_KEY[v.key].kind == "strs"]


def places_count(value: Any) -> int:
    """How many places a layout value names (`none`: 1, the data directory) (pure)."""
    if value in (None, NO_PLACE, ""):
        return 1
    return len([p for p in str(value).split(PLACES_SEPARATOR) if p])


def parse_vary(text: str, said: str | None = None) -> Vary:
    """KEY=V1,V2,...; the key must be a knob a sweep can vary. said: the flag as typed, when not --vary TEXT
    (sweep --rate R1,R2 is --vary rate=R1,R2)."""
    said = said or f"--vary {text}"
    key, sep, values = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep:
        raise UsageError(f"{said}: expected KEY=V1,V2,...", "for example --vary update_pct=0,20")
    if key not in ABBREVIATIONS:
        known = list(ABBREVIATIONS)
        match = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        why = "is not an option" if key not in BY_KEY else "is fixed by the load, not varied by a sweep"
        fix = f"did you mean {match[0]}?" if match else f"vary one of {', '.join(sorted(known))}"
        raise UsageError(f"{said}: {key} {why}", fix)
    items = tuple(v.strip() for v in values.split(",") if v.strip())
    if key == "rate" and len(items) == 1 and ".." in items[0]:  # a range of rates (sweep/rates.py), as --rate's
        items = rates.expand(items[0], f"--vary {text}")
    if not items:
        raise UsageError(f"{said}: no values", "give one or more values separated by commas")
    if len(set(items)) != len(items):
        raise UsageError(f"{said}: a value is repeated", "list each value once")
    option = BY_KEY[key]
    if key not in LAYOUT_KNOBS:  # each value read as its option reads it, before any server is reached
        for item in items:
            try:
                coerce(option, item)
                if key == "event":
                    disruption.parse(item)
            except ValueError as exc:
                raise UsageError(f"{said}: {item}: {exc}", option.how_to_fix()) from None
    return Vary(key, items)


def rate_vary(text: str) -> Vary:
    """sweep --rate R1,R2,... (or LOW..HIGH:STEPS): the same as --vary rate=..., said as --rate."""
    return parse_vary(f"rate={text}", said=f"--rate {text}")


def session_counts(text: str) -> list[int]:
    """--sessions 1,2,4: the counts, or one line saying which is not one (pure: checked before any server)."""
    counts = []
    for item in (v.strip() for v in text.split(",") if v.strip()):
        if not item.isdigit() or int(item) < 1:
            raise UsageError(f"--sessions {text}: {item!r} is not a number of sessions", "give whole numbers >= 1")
        counts.append(int(item))
    if not counts:
        raise UsageError("--sessions: no values", "for example --sessions 1,2,4,8")
    return counts


def sessions_vary(text: str, schemas: int) -> Vary:
    """--sessions 1,2,4: total sessions, as threads per schema."""
    values = []
    for count in session_counts(text):
        if count % schemas:
            raise UsageError(f"--sessions {text}: {count} sessions cannot be spread over {schemas} schemas",
                             "give multiples of schemas (sessions = schemas x threads_per_schema)")
        values.append(str(count // schemas))
    return Vary("threads_per_schema", tuple(values))


def combine(varies: list[Vary]) -> list[Vary]:
    keys = [v.key for v in varies]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise UsageError(f"{', '.join(dupes)} is varied twice", "give each knob one --vary (sessions counts as "
                                                               "threads_per_schema)")
    # layouts outermost, then restart settings: one move or load per layout, one restart per combination
    return sorted(varies, key=lambda v: (not v.layout, not v.restarts))


def steps(varies: list[Vary]) -> list[dict[str, str]]:
    ordered = combine(varies)
    keys = [v.key for v in ordered]
    return [dict(zip(keys, combo)) for combo in itertools.product(*(v.values for v in ordered))]


def step_name(index: int, values: dict[str, Any]) -> str:
    parts = [f"{ABBREVIATIONS.get(k, k)}{_layout_short(v) if k in LAYOUT_KNOBS else _short(v)}"
             for k, v in values.items()]
    return "-".join([f"{index:02d}", *parts])


def _layout_short(value: Any) -> str:
    """A layout value in a step's name: how many places, and the last one's name (the index tells steps apart)."""
    if value == NO_PLACE:
        return "none"
    places = [p for p in str(value).split(PLACES_SEPARATOR) if p]
    return f"{len(places)}-{_short(places[-1].rstrip('/').rsplit('/', 1)[-1])}"


def _short(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "", str(value))[:24] or "x"
