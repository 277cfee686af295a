"""A result as its reports read it: result.json's top level as typed records, loaded once.

`load` is the one way a document becomes a `Result`: its format and version checked, an older
document migrated (the facts its engine did not record filled in, a format-1 result shown as a
run of one node), its shape checked (file_formats.result), then typed. `of` types a document as it is,
for one this dbio has just built (a run's, a merge's) or a report given a plain dict.

Only the top level is typed; the figures (driven by stats/catalogue.py), the series, the
environment and the snapshots stay mappings, read through `Result.document` and the catalogue.
A field a report reads defensively (a merge's `parts` and `counting`, an event) is typed
leniently: what is not of its shape is left out, as the reports skipped it before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from dbio import jsondoc, file_formats

FORMAT = "dbio-result"
FORMAT_VERSION = 2  # 2: nodes (each node's snapshots and figures; the top level is their total)
ONLY_NODE = "node1"  # the name of a run's one node where a file written before nodes does not name it
_EMPTY: Mapping[str, Any] = {}


class NotAResult(jsondoc.Malformed):
    """The document is another kind (its `format` is not dbio-result)."""


class UnknownVersion(jsondoc.Malformed):
    """format_version is not one this dbio reads."""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Timeline:
    """When the run's window was, and how long each phase lasted (seconds)."""
    window_seconds: float | None = None
    warmup_seconds: float | None = None
    interval_seconds: float | None = None
    start_seconds: float | None = None
    window_start: str | None = None
    window_end: str | None = None
    overlap_seconds: float | None = None  # a merge's: how long its runs' windows overlap
    start_skew_seconds: float | None = None

    @classmethod
    def of(cls, value: Any) -> Timeline:
        t = _mapping(value)
        return cls(**{name: _number(t.get(name)) for name in (
            "window_seconds", "warmup_seconds", "interval_seconds", "start_seconds", "overlap_seconds",
            "start_skew_seconds")}, window_start=t.get("window_start"), window_end=t.get("window_end"))


@dataclass(frozen=True)
class Config:
    """The run's configuration as the reports read it; `workload` keeps every knob for the run's table."""
    workload: Mapping[str, Any]
    run: Mapping[str, Any]
    connection: Mapping[str, Any]

    @classmethod
    def of(cls, value: Any) -> Config:
        c = _mapping(value)
        return cls(_mapping(c.get("workload")), _mapping(c.get("run")), _mapping(c.get("connection")))

    @property
    def sessions(self) -> int:
        return self.workload.get("sessions") or 0

    @property
    def warmup(self) -> float | None:
        """The warm-up the run was given (seconds), when its configuration says."""
        return self.workload.get("warmup")

    @property
    def embedded(self) -> bool:
        return bool(self.connection.get("embedded"))


@dataclass(frozen=True)
class Node:
    """One server of the run: its own figures, and whether it stopped (`stopped`: when and why)."""
    name: str
    role: str | None
    engine: str | None
    figures: Mapping[str, Any] | None
    capabilities: Mapping[str, Any] | None
    stopped: Mapping[str, Any] | None
    start: Mapping[str, Any] | None
    raw: Mapping[str, Any]  # the node as written (its server, counters, series, waits)

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Node:
        return cls(name=value["name"], role=value.get("role"), engine=value.get("engine"),
                   figures=value.get("figures"), capabilities=value.get("capabilities"),
                   stopped=value.get("stopped"), start=value.get("start"), raw=value)


@dataclass(frozen=True)
class Event:
    """Something that happened in the run (a session failed, readings refused, merged, a part missing)."""
    kind: str | None
    message: str | None
    t: float | None
    since_start: float | None
    finished: Any

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Event:
        return cls(value.get("kind"), value.get("message"), _number(value.get("t")), _number(value.get("since_start")),
                   value.get("finished"))


@dataclass(frozen=True)
class Counting:
    """dbio merge: one server shared by several runs, its reads counted once (both rates, whether they agree)."""
    description: str | None
    own_reads_per_s: float | None
    server_reads_per_s: float | None
    difference_pct: float | None
    agree: bool | None
    others: Any

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Counting:
        return cls(value.get("description"), _number(value.get("own_reads_per_s")),
                   _number(value.get("server_reads_per_s")), _number(value.get("difference_pct")),
                   value.get("agree"), value.get("others"))


@dataclass(frozen=True)
class Parts:
    """dbio merge of a run's parts (--part i/N): which were given and which were not."""
    given: tuple[Any, ...]  # each given part's index
    of: Any
    run: Any
    missing: tuple[Any, ...]

    @classmethod
    def of_record(cls, value: Mapping[str, Any]) -> Parts:
        return cls(tuple(_mapping(g).get("index") for g in value.get("given") or []), value.get("of"),
                   value.get("run"), tuple(value.get("missing") or []))


@dataclass(frozen=True)
class Result:
    """A result's top level, typed; `document` is the whole (migrated) document for what stays a mapping."""
    format: str | None
    format_version: Any
    status: str | None
    status_reason: str | None
    label: str | None
    run_id: Any
    dbio_version: str | None
    created_at: str | None
    timeline: Timeline
    config: Config
    figures: Mapping[str, Any]
    nodes: tuple[Node, ...]
    events: tuple[Event, ...]
    counting: tuple[Counting, ...]
    parts: Parts | None
    part: Mapping[str, Any] | None  # one part's own record (--part i/N)
    merged_from: tuple[Mapping[str, Any], ...]
    verdict: Mapping[str, Any] | None  # the verdict as written beside the result, if it was
    document: dict[str, Any]

    @property
    def capabilities(self) -> Mapping[str, Any]:
        """The facts the engine declared (the run's first node's, or a node view's own)."""
        return _mapping(self.document.get("capabilities"))

    def get(self, key: str, default: Any = None) -> Any:
        """A top-level entry that stays a mapping (environment, waits, series, ...)."""
        return self.document.get(key, default)

    def node_view(self, node: Node) -> Result:
        """The run as one of its nodes saw it: its figures, and its own facts where it has them."""
        document = {**self.document, "figures": node.figures, "nodes": [node.raw]}
        if node.capabilities:  # a merge's nodes are hosts: each has its own
            document["capabilities"] = node.capabilities
        return replace(self, figures=_mapping(node.figures), nodes=(node,), document=document)


def of(document: Mapping[str, Any] | Result) -> Result:
    """A document typed as it is (no migration, no check): one this dbio has just built, or a Result."""
    if isinstance(document, Result):
        return document
    d = document
    parts = d.get("parts")
    return Result(
        format=d.get("format"), format_version=d.get("format_version"), status=d.get("status"),
        status_reason=d.get("status_reason"), label=d.get("label"), run_id=d.get("run_id"),
        dbio_version=d.get("dbio_version"), created_at=d.get("created_at"),
        timeline=Timeline.of(d.get("timeline")), config=Config.of(d.get("config")),
        figures=_mapping(d.get("figures")),
        nodes=tuple(Node.of(n) for n in d.get("nodes") or [] if isinstance(n, dict) and "name" in n),
        events=tuple(Event.of(e) for e in d.get("events") or [] if isinstance(e, dict)),
        counting=tuple(Counting.of(c) for c in d.get("counting") or [] if isinstance(c, dict)),
        parts=Parts.of_record(parts) if isinstance(parts, dict) else None,
        part=d.get("part") if isinstance(d.get("part"), dict) else None,
        merged_from=tuple(m for m in d.get("merged_from") or [] if isinstance(m, dict)),
        verdict=d.get("verdict") if isinstance(d.get("verdict"), dict) else None,
        document=d if isinstance(d, dict) else dict(d))


def load(document: Any) -> Result:
    """A document read from a file: format and version checked, migrated to this dbio's format,
    its shape checked, typed. Raises NotAResult, UnknownVersion or jsondoc.Malformed (one line)."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise NotAResult("is not a dbio result")
    try:
        jsondoc.check(document.get("format_version"), file_formats.version(FORMAT_VERSION))
    except jsondoc.Malformed as exc:
        raise UnknownVersion(str(exc)) from None
    document = completed(document)
    jsondoc.check(document, file_formats.result(FORMAT_VERSION))
    return of(with_nodes(document))


def completed(document: dict[str, Any]) -> dict[str, Any]:
    """A result with the facts an older dbio did not record (capabilities, neutral counters),
    filled in by the engine that wrote it (pure, idempotent)."""
    from dbio import engines

    return engines.complete_result(document)


def with_nodes(document: dict[str, Any]) -> dict[str, Any]:
    """A result as this dbio reads it: completed, and a format-1 result as format 2 shows it: its
    one node, named ONLY_NODE, is the run (pure; format_version stays what the file says)."""
    document = completed(document)
    if document.get("nodes") is not None:
        return document
    environment, caps = document.get("environment") or {}, document.get("capabilities") or {}
    node = {"name": ONLY_NODE, "engine": caps.get("engine"), "role": "primary", "server": environment.get("server"),
            "capabilities": caps, "normalized": document.get("normalized"), "figures": document.get("figures")}
    snapshots = {name: None if reading is None else
                 {"nodes": {ONLY_NODE: reading.get("engine")}, "os": reading.get("os")}
                 for name, reading in (document.get("snapshots") or {}).items()}
    return {**document, "nodes": [node], "snapshots": snapshots}


Doc = Result | Mapping[str, Any]  # what a report is handed: a Result, or a document it types with `of`
