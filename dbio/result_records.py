"""A result as its reports read it: result.json's top level as typed records, loaded once.

`load` is the one way a document becomes a `Result`: its format and version checked, an older
document migrated (the facts its engine did not record filled in, a format-1 result shown as a
run of one node), its shape checked (file_formats.result), then typed. `of` types a document as it is,
for one this dbio has just built (a run's, a merge's). Reports take the `Result`, never the mapping.

The top level is typed, and what the reports read below it: the environment, the baseline and the
setup (result_context.py), the waits and the whole histograms. The figures stay a mapping read through
stats/catalogue.py; what is a mapping by nature (each interval of the series, each session, the
cluster's facts, the snapshots) stays one, reached through a named property, not a path. Every field
is typed leniently, as the reports read it: what is not of its shape is left out or read as absent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Mapping

from dbio import jsondoc, file_formats
from dbio.result_context import Baseline, Environment, Setup, mapping as _mapping, number as _number, objects, words

FORMAT = "dbio-result"
FORMAT_VERSION = 2  # 2: nodes (each node's snapshots and figures; the top level is their total)
ONLY_NODE = "node1"  # the name of a run's one node where a file written before nodes does not name it


class NotAResult(file_formats.OtherKind):
    """The document is another kind (its `format` is not dbio-result)."""


UnknownVersion = file_formats.UnknownVersion


@dataclass(frozen=True)
class Timeline:
    """When the run's window was, and how long each phase lasted (seconds)."""
    window_seconds: float | None = None
    warmup_seconds: float | None = None
    interval_seconds: float | None = None
    start_seconds: float | None = None
    start: str | None = None  # the instant the run started (its window may never have opened)
    window_start: str | None = None
    window_end: str | None = None
    overlap_seconds: float | None = None  # a merge's: how long its runs' windows overlap
    start_skew_seconds: float | None = None

    @classmethod
    def of(cls, value: Any) -> Timeline:
        t = _mapping(value)
        return cls(**{name: _number(t.get(name)) for name in (
            "window_seconds", "warmup_seconds", "interval_seconds", "start_seconds", "overlap_seconds",
            "start_skew_seconds")}, start=t.get("start"), window_start=t.get("window_start"),
                   window_end=t.get("window_end"))


@dataclass(frozen=True)
class Config:
    """The run's configuration as the reports read it; `workload` keeps every knob for the run's table."""
    workload: Mapping[str, Any]
    run: Mapping[str, Any]
    connection: Mapping[str, Any]
    instance: Mapping[str, Any]  # the engine's own record of its [instance] options (a sweep's layout knobs)

    @classmethod
    def of(cls, value: Any) -> Config:
        c = _mapping(value)
        return cls(_mapping(c.get("workload")), _mapping(c.get("run")), _mapping(c.get("connection")),
                   _mapping(c.get("instance")))

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

    @property
    def run_time(self) -> float | None:
        """The run time it was given (seconds; 0: only work_loop ends it), when its configuration says."""
        return _number(self.workload.get("run_time"))

    @property
    def work_loop(self) -> bool:
        """Whether a number of iterations per session ends the run (work_loop)."""
        return bool(self.workload.get("work_loop"))

    @property
    def update_pct(self) -> float | None:
        return _number(self.workload.get("update_pct"))

    @property
    def hotspot_every(self) -> int | None:
        """A hot spot's period in statements (every Nth goes to it); None without one."""
        every = self.workload.get("hotspot_frequency")
        return every if self.workload.get("hotspot") and isinstance(every, int) and every >= 1 else None


@dataclass(frozen=True)
class Waits:
    """The sessions' states, sampled through the window: how often each was seen (its wait event, CPU, Client)."""
    counts: Mapping[str, float]  # samples per state
    samples: float | None  # of all sessions
    interval_seconds: float | None  # between two samples

    @classmethod
    def of(cls, value: Any) -> Waits:
        w = _mapping(value)
        return cls(_mapping(w.get("counts")), _number(w.get("samples")), _number(w.get("interval_seconds")))

    def shares(self) -> list[tuple[str, float, float]]:
        """(state, samples, % of all) for every state, the most seen first; none without a sample."""
        total = sum(self.counts.values())
        if not total:
            return []
        return [(state, n, 100.0 * n / total) for state, n in sorted(self.counts.items(), key=lambda kv: -kv[1])]


@dataclass(frozen=True)
class Histograms:
    """The run's whole statement latency histograms (not the figures' buckets): each statement kind's
    counts over the bounds they share."""
    bounds_us: tuple[float, ...]
    counts: Mapping[str, tuple[int, ...]]  # by statement kind (select, update, scan, ...)

    @classmethod
    def of(cls, value: Any) -> Histograms:
        h = _mapping(value)
        bounds = h.get("bounds_us")
        return cls(tuple(bounds) if isinstance(bounds, list) else (),
                   {kind: tuple(counts) for kind, one in h.items() if kind != "bounds_us"
                    and isinstance(counts := _mapping(one).get("counts"), list)})


@dataclass(frozen=True)
class Stopped:
    """A node whose server stopped during the run (lost): when, why, and how much of the window its figures cover."""
    since_start: float | None  # seconds after the start (negative: before it)
    reason: str | None
    figures_cover_seconds: float | None

    @classmethod
    def of(cls, value: Any) -> Stopped | None:
        """None for a node that did not stop (nothing, or an empty record, written)."""
        s = _mapping(value)
        if not s:
            return None
        return cls(_number(s.get("since_start")), s.get("reason"), _number(s.get("figures_cover_seconds")))


@dataclass(frozen=True)
class Node:
    """One server of the run: its own figures, and whether it stopped (`stopped`: when and why)."""
    name: str
    role: str | None
    engine: str | None
    figures: Mapping[str, Any] | None
    capabilities: Mapping[str, Any] | None
    stopped: Stopped | None
    start: Mapping[str, Any] | None
    server: Mapping[str, Any]  # its server as probed: description, identity
    sessions: Mapping[str, Any]  # which of the run's sessions it had (ranges, update_capable)
    weight: float | None
    waits: Waits
    raw: Mapping[str, Any]  # the node as written (its counters, series)

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Node:
        return cls(name=value["name"], role=value.get("role"), engine=value.get("engine"),
                   figures=value.get("figures"), capabilities=value.get("capabilities"),
                   stopped=Stopped.of(value.get("stopped")), start=value.get("start"),
                   server=_mapping(value.get("server")), sessions=_mapping(value.get("sessions")),
                   weight=_number(value.get("weight")), waits=Waits.of(value.get("waits")), raw=value)

    @property
    def replication(self) -> Mapping[str, Any]:
        """A standby's WAL received and replay lag, as it saw itself (empty for a primary)."""
        return _mapping(_mapping(self.figures).get("replication"))


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
class Capabilities:
    """The facts the engine declared that the reports read by name (Result.capabilities keeps every one)."""
    engine: str | None
    local: bool  # the server runs on this host: its CPU and devices are the run's host's
    direct_io: bool | None  # None: not declared
    page_bytes: int | None  # its read unit, what one buffer-cache miss reads
    cache_name: str | None
    maintenance_process: str | None  # the process kind of its background maintenance
    maintenance_name: str | None
    settings_shown: tuple[str, ...]  # the settings a report lists
    missing: tuple[Mapping[str, Any], ...]  # the figures it could not give, each with why

    @classmethod
    def of(cls, value: Any) -> Capabilities:
        c = _mapping(value)
        direct, page, shown = c.get("direct_io"), c.get("page_bytes"), c.get("settings_shown")
        return cls(engine=_text(c.get("engine")), local=bool(c.get("local")),
                   direct_io=direct if isinstance(direct, bool) else None,
                   page_bytes=page if isinstance(page, int) and page > 0 else None,
                   cache_name=_text(c.get("cache_name")), maintenance_process=_text(c.get("maintenance_process")),
                   maintenance_name=_text(c.get("maintenance_name")),
                   settings_shown=tuple(n for n in shown if isinstance(n, str)) if isinstance(shown, list) else (),
                   missing=tuple(m for m in c.get("missing") or [] if isinstance(m, dict)))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


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
    environment: Environment
    baseline: Baseline | None  # fio's, beside the run (dbio baseline, run --baseline)
    setup: Setup
    waits: Waits
    histograms: Histograms
    plans: Mapping[str, tuple[str, ...]]  # the statement kind's plan, its nodes outermost first
    document: dict[str, Any]

    @property
    def capabilities(self) -> Mapping[str, Any]:
        """The facts the engine declared (the run's first node's, or a node view's own)."""
        return _mapping(self.document.get("capabilities"))

    @cached_property
    def caps(self) -> Capabilities:
        """The capabilities the reports read by name, typed once."""
        return Capabilities.of(self.document.get("capabilities"))

    @property
    def series(self) -> list[dict[str, Any]]:
        """The intervals' rows, in order (stats/series.py reads them)."""
        return [row for row in self.document.get("series") or [] if isinstance(row, dict)]

    @property
    def disruption_events(self) -> list[Mapping[str, Any]]:
        """What each --event did (jobs/disruptions.py): its start and end, outcome and its action's record."""
        return list(objects(self.document.get("disruptions")))

    @property
    def sessions(self) -> list[Mapping[str, Any]]:
        """The run's sessions, each with the node it ran on."""
        return list(objects(self.document.get("sessions")))

    @property
    def cluster(self) -> Mapping[str, Any]:
        """A run of several nodes: read-only nodes, UPDATE-capable sessions, the start's skew, stopped nodes."""
        return _mapping(self.document.get("cluster"))

    @property
    def stalls(self) -> list[Mapping[str, Any]]:
        """Intervals in which the sessions completed nothing."""
        return list(objects(self.document.get("stalls")))

    @property
    def counter_resets(self) -> list[Mapping[str, Any]]:
        """Engine counters that went back inside the window (stats/resets.py)."""
        return list(objects(self.document.get("counter_resets")))

    @property
    def normalized(self) -> Mapping[str, Any]:
        """The neutral counters at the window's ends (begin, end), as engines/counters.py fills them."""
        return _mapping(self.document.get("normalized"))

    def node_view(self, node: Node) -> Result:
        """The run as one of its nodes saw it: its figures, and its own facts where it has them."""
        document = {**self.document, "figures": node.figures, "nodes": [node.raw]}
        if node.capabilities:  # a merge's nodes are hosts: each has its own
            document["capabilities"] = node.capabilities
        return replace(self, figures=_mapping(node.figures), nodes=(node,), document=document)


def of(document: Mapping[str, Any]) -> Result:
    """A document typed as it is (no migration, no check): one this dbio has just built."""
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
        environment=Environment.of(d.get("environment")), baseline=Baseline.of(d.get("baseline")),
        setup=Setup.of(d.get("setup")), waits=Waits.of(d.get("waits")), histograms=Histograms.of(d.get("histograms")),
        plans={kind: words(_mapping(plan).get("nodes")) for kind, plan in _mapping(d.get("plans")).items()},
        document=d if isinstance(d, dict) else dict(d))


def load(document: Any) -> Result:
    """A document read from a file: format and version checked, migrated to this dbio's format,
    its shape checked, typed. Raises NotAResult, UnknownVersion or jsondoc.Malformed (one line)."""
    file_formats.check_header(document, FORMAT, FORMAT_VERSION, "result", NotAResult)
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
