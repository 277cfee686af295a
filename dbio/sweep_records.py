"""A sweep as its reports read it: sweep.json's document (its grid, steps, search and capacity request) as
typed records, loaded once.

`load` is the one way a file's document becomes a `Sweep`: its format and version checked, its shape
checked (file_formats.sweep); format 1 is the only one, so nothing is migrated yet: a later format's
migration belongs here, beside the check. `of` types a document as it is, for one this dbio has just
written (a sweep's own report at its end) or a report given a plain dict. The steps' results are
not part of it: each is a result (result_records) or an operation's (ops_result), read beside it.

Typed leniently where the reports were lenient (an absent knob, gain or count reads as its default);
what they read strictly (a step's name, a search's objective) stays required. `base`, every knob the
steps share as the sweep was given them, is a mapping by nature, like a result's `config.workload`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from dbio import file_formats, jsondoc
from dbio.result_context import mapping as _mapping, number as _number, objects
from dbio.stats.knee import DEFAULT_GAIN

FORMAT = "dbio-sweep"
FORMAT_VERSION = 1
PEAK_GAIN = 0.05  # what --until-peak's doublings must add, where an older sweep.json does not say


class NotASweep(file_formats.OtherKind):
    """The document is another kind (its `format` is not dbio-sweep)."""


UnknownVersion = file_formats.UnknownVersion


@dataclass(frozen=True)
class Step:
    """One step of the grid: the knobs' values it ran with, its status, and its round (sweep --repeat)."""
    index: Any
    name: str  # its directory inside the sweep's
    status: str | None
    values: Mapping[str, str]  # the varied knobs, as given (text)
    group: str  # the step its rounds repeat (sweep --repeat), else its own name
    round: int | None
    peak: bool  # --until-peak: doubling its sessions added too little

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Step:
        name = value["name"]
        return cls(index=value.get("index"), name=name, status=value.get("status"),
                   values=_mapping(value.get("values")), group=value.get("group") or name,
                   round=value.get("round"), peak=bool(value.get("peak")))


@dataclass(frozen=True)
class Answer:
    """sweep --objective: one searched combination's answer (group: its varied values, '' when only one)."""
    group: str
    line: str
    best: str | None
    reason: str

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Answer:
        return cls(value["group"], value["line"], value.get("best"), value["reason"])


@dataclass(frozen=True)
class Search:
    """sweep --objective: the objective, how sessions were searched, and each combination's answer."""
    objective: str
    max_sessions: int
    resolution: float
    gain: float
    answers: tuple[Answer, ...]
    axis: str = "sessions"  # what it searches: sessions, or rates (sweep --rate ... --objective)

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Search:
        return cls(value["objective"], value["max_sessions"], value["resolution"], value["gain"],
                   tuple(Answer.of(a) for a in objects(value.get("answers"))), value.get("axis") or "sessions")


@dataclass(frozen=True)
class Sweep:
    """A sweep's document, typed; `document` is the whole, for the commands that resume and rewrite it."""
    format: str | None
    format_version: Any
    status: str | None
    label: str | None
    created_at: str | None
    dbio_version: str | None
    base: Mapping[str, Any]  # the knobs every step shares
    vary: tuple[tuple[str, tuple[str, ...]], ...]  # each varied knob and its values, in the grid's order
    counted: tuple[str, ...]  # varied knobs a report counts (a layout's directories: the 1-to-N devices study)
    until_peak: bool
    peak_gain: float
    knee_gain: float
    wall_seconds: float  # the whole sweep, measured or not
    repeat: int  # sweep --repeat: how many rounds of each step (1: none)
    search: Search | None
    capacity: dict[str, Any] | None  # the target, objective and prices it was run with
    operation: str | None  # sweep --op: the maintenance operation each step times
    steps: tuple[Step, ...]
    document: dict[str, Any]

    @property
    def varied(self) -> list[str]:
        """The knobs given more than one value."""
        return [key for key, values in self.vary if len(values) > 1]

    def complete(self) -> int:
        """How many steps completed."""
        return sum(1 for s in self.steps if s.status == "complete")


def _vary(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """[[key, [values]], ...]: an entry of another shape is left out."""
    pairs = value if isinstance(value, list) else []
    return tuple((pair[0], tuple(pair[1])) for pair in pairs
                 if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], (list, str)))


def of(document: Mapping[str, Any]) -> Sweep:
    """A document typed as it is (no check): one this dbio has just written."""
    d = document
    search, capacity, op = d.get("search"), d.get("capacity"), d.get("op")
    return Sweep(
        format=d.get("format"), format_version=d.get("format_version"), status=d.get("status"),
        label=d.get("label"), created_at=d.get("created_at"), dbio_version=d.get("dbio_version"),
        base=_mapping(d.get("base")), vary=_vary(d.get("vary")), counted=tuple(d.get("counted") or ()),
        until_peak=bool(d.get("until_peak")), peak_gain=_gain(d.get("peak_gain"), PEAK_GAIN),
        knee_gain=_gain(d.get("knee_gain"), DEFAULT_GAIN), wall_seconds=_number(d.get("wall_seconds")) or 0.0,
        repeat=d.get("repeat") or 1, search=Search.of(search) if search else None,
        capacity=capacity if isinstance(capacity, dict) else None,
        operation=op.get("operation") if isinstance(op, dict) and op else None,
        steps=tuple(Step.of(s) for s in objects(d.get("steps"))),
        document=d if isinstance(d, dict) else dict(d))


def _gain(value: Any, default: float) -> float:
    found = _number(value)
    return default if found is None else found


def load(document: Any) -> Sweep:
    """A document read from a file: format and version checked, its shape checked, typed. Raises
    NotASweep, UnknownVersion or jsondoc.Malformed (one line)."""
    file_formats.check_header(document, FORMAT, FORMAT_VERSION, "sweep", NotASweep)
    jsondoc.check(document, file_formats.sweep(FORMAT_VERSION))
    return of(document)
