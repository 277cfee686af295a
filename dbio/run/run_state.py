"""What the phases of a run share: its context (RunContext), its outcome (RunOutcome), the observer that
follows it, and the coordinator's state (RunState): the sessions and nodes, the clock, the counts, the
events, the status and why, and the few steps every phase takes (an event noted, the run stopped).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from dbio.engines.base import SliceResult, helper_application_name
from dbio.run import disk_guard
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run.identity import new_run_id
from dbio.run.monitor import Monitor, SampleWriter, WaitSampler
from dbio.run.nodes import Node, NodeRun, spread
from dbio.run.plan import SLICE_SECONDS, RunPlan
from dbio.run.read_probe import ReadProbe
from dbio.run.liveness import Liveness
from dbio.run.sessions import Clock, Session, Shared, published_by_all
from dbio.run.stopping import Stopping
from dbio.run.slice_totals import IntervalCounts, Tally


@dataclass(frozen=True)
class Watching:
    """The run's monitoring, as _open_monitoring (session_launch.py) opened it: the steps from the common start
    on take it, the clean-up and a node's loss (which may come before) RunState's monitor and waits."""

    monitor: Monitor
    waits: WaitSampler


class Observer(Protocol):
    def phase(self, message: str) -> None: ...
    def second(self, sample: dict[str, Any]) -> None: ...
    def event(self, message: str) -> None: ...


@dataclass
class RunOutcome:
    status: str  # complete | interrupted | failed
    reason: str | None
    run_id: int
    clock: Clock
    sessions: list[Session]
    begin: dict[str, Any] | None  # reading at window open (see readings.py)
    end: dict[str, Any] | None  # reading at window close
    window_start: float | None  # server epoch of the begin snapshot
    window_end: float | None
    totals: Tally  # each interval's own counts are in the samples file, not in memory
    waits: dict[str, int]
    wait_samples: int | None  # None: not known (a run rebuilt from its samples file: abandoned.py)
    plans: dict[str, Any]  # the first node's
    connect_seconds: float
    start_seconds: float  # from the first connection to the common start
    events: list[dict[str, Any]] = field(default_factory=list)
    monitor_errors: list[str] = field(default_factory=list)
    samples_written: int = 0
    signal: str | None = None  # the signal that interrupted the run (SIGINT, SIGTERM)
    node_waits: dict[str, dict[str, int]] = field(default_factory=dict)  # the window's wait samples, per node
    clock_offset: float | None = None  # the first node's clock - this host's, as measured (None: not)
    released_late: float | None = None  # seconds after an agreed start (--start-at) the release came
    node_starts: dict[str, dict[str, Any]] = field(default_factory=dict)  # several nodes: offset, skew (agreed_start)
    start_agreed: str | None = None  # "start_at" (--start-at), "nodes" (chosen in advance for several nodes)
    lost_nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodes whose server stopped (see _lose_node)
    read_probe: dict[str, dict[str, Any]] = field(default_factory=dict)  # per node: its probe's reads (read_probe.py)


@dataclass
class RunContext:
    nodes: list[Node]
    plan: RunPlan
    access_path: str
    samples: SampleWriter
    wait_interval: float
    observer: Observer
    run_id: int = 0  # 0: the runner picks one
    client: str = ""  # host:pid of this dbio process, recorded with the run on the server
    # where the servers on this host write (an update run's data and WAL): the run stops before they fill up
    room_paths: tuple[str, ...] = ()
    room_floor: int = disk_guard.FLOOR  # bytes kept free there (disk_guard.floor_of the servers' growth step)
    # told "open" and "close" as the window opens and closes (an external script's calls): it must return at once
    on_window: Callable[[str], None] | None = None
    time: TimeSource = REAL_TIME  # every time read and wait of the run (the fake engine's tests: virtual time)


class RunState:
    """The coordinator's state; the phases (session_launch, measured_window, node_loss, stop_and_clean_up)
    are its methods."""

    def __init__(self, ctx: RunContext):
        self.ctx = ctx
        self.plan = ctx.plan
        self.run_id = ctx.run_id or new_run_id()
        self.time = ctx.time
        self.clock = Clock(warmup=ctx.plan.warmup)
        self.shared = Shared(self.run_id, ctx.plan.work_loop, self.clock, on_slice=self._on_slice,
                             work_loop_counts_warmup=ctx.plan.work_loop_scope == "session", liveness=Liveness(ctx.time))
        self.sessions = spread(ctx.nodes, ctx.plan.schema_of)
        self.nodes = [NodeRun(node, self.run_id, [s for s in self.sessions if s.node == node.name], time=ctx.time)
                      for node in ctx.nodes]
        for r in self.nodes:  # the schemas its sessions read, at their scale
            r.read_probe = ReadProbe(r.engine, ctx.plan.bounds_us, [s.schema_index for s in r.sessions],
                                     int(ctx.plan.control.get("scale") or 0), seed=self.run_id,
                                     application_name=helper_application_name(self.run_id, "probe"), time=ctx.time)
        self.probing = False  # the read probes count their lookups while the window is open
        self.counts = IntervalCounts(len(ctx.plan.bounds_us) + 1, ctx.plan.grid)
        self.events: list[dict[str, Any]] = []
        self.status: str = "complete"
        self.reason: str | None = None
        self.offset = 0.0  # server clock - client clock
        self.in_window = False
        self.monitor: Monitor | None = None
        self.waits: WaitSampler | None = None
        self.stopping = Stopping(self.shared, self.sessions, self._event, ctx.time)
        self.begin: dict[str, Any] | None = None
        self.end: dict[str, Any] | None = None
        self.window_start: float | None = None
        self.window_end: float | None = None
        self.plans: dict[str, Any] = {}
        self.sampler_stop = asyncio.Event()
        self.background: list[asyncio.Task] = []
        self.connect_seconds = self.start_seconds = 0.0
        self.released_late: float | None = None  # seconds after an agreed start the release came
        self.start_agreed: str | None = None  # start_at | nodes (agreed in advance), None: at the release
        self.node_starts: dict[str, dict[str, Any]] = {}
        self.lost: dict[str, dict[str, Any]] = {}  # node -> when its server stopped, why, its last reading
        self.checks: dict[str, asyncio.Task] = {}  # one check per node that may have stopped
        self.watch: asyncio.Task | None = None  # loses a node that stops answering (see _watch_nodes)
        self.deadline_at: float | None = None  # the deadline, on this host's monotonic clock
        self.window_open_at: float | None = None  # the window's planned opening, on this host's monotonic clock
        self.unwaited: set[str] = set()  # nodes silent at the window's opening, whose sessions were not waited for
        self.node_calls: dict[str, set[asyncio.Task]] = {}  # each node's calls in flight that its loss cancels

    def _on_slice(self, session: Session, result: SliceResult, measured: bool) -> None:
        self.counts.add(result, measured, self.clock.start)

    def published_by_all(self, now: float) -> float:
        """The instant (this host's clock) before which every session's work is in its server's counters
        (sessions.published_by_all); now: this host's clock."""
        return published_by_all(self.sessions, now)

    def _stop(self) -> None:
        self.stopping.stop(self.offset)

    def _phase_at(self, t: float) -> str:
        """The phase of the instant t (server clock): the slice in progress at a stop is still measured."""
        clock = self.clock
        if clock.window_open is None or t < clock.window_open:
            return "warmup"
        if clock.deadline is not None and t > clock.deadline:
            return "drain"
        stopped_at = self.stopping.stopped_at
        if stopped_at is not None and clock.start is not None:
            last_boundary = clock.start + math.ceil((stopped_at - clock.start) / SLICE_SECONDS) * SLICE_SECONDS
            if t > last_boundary:
                return "drain"
        return "measured"

    def _event(self, kind: str, message: str) -> None:
        t = self.time.wall() + self.offset
        since = None if self.clock.start is None else round(t - self.clock.start, 3)
        self.events.append({"t": t, "since_start": since, "kind": kind, "message": message})

    def _first_error(self) -> str | None:
        return next((s.error for s in self.sessions if s.error), None)


class StoppedBeforeStart(Exception):
    """A stop (signal) arrived before the sessions were released."""
