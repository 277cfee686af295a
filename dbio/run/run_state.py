"""What the steps of a run share: its context (RunContext), the observer that follows it, and its state
(RunState): the sessions and nodes, the clock, the counts, and the records its outcome is made of (the status
and why, the start's facts, the window's readings, the nodes lost, the events), with the few steps every part
takes (the phase advanced, an event noted, a line told, a sample written, the run stopped). RunState is also
what the run's listeners see of it (listeners.RunView).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Coroutine, Protocol

from dbio.engines.base import SliceResult
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run.identity import new_run_id
from dbio.run.listeners import Listener, Listeners
from dbio.run.monitor import Monitor, SampleWriter
from dbio.run.nodes import Monitoring, Node, NodeRun, spread
from dbio.run.outcome import StartFacts, WindowReadings
from dbio.run.phase import Phase, phase_at
from dbio.run.plan import RunPlan
from dbio.run.run_status import RunStatus, Status
from dbio.run.liveness import Liveness
from dbio.run.sessions import Clock, Session, Shared, awaited, published_by_all
from dbio.run.stopping import Stopping
from dbio.run.slice_totals import IntervalCounts


class Observer(Protocol):
    def phase(self, message: str) -> None: ...
    def second(self, sample: dict[str, Any]) -> None: ...
    def event(self, message: str) -> None: ...


@dataclass
class RunContext:
    nodes: list[Node]
    plan: RunPlan
    access_path: str
    samples: SampleWriter
    observer: Observer
    run_id: int = 0  # 0: the runner picks one
    client: str = ""  # host:pid of this dbio process, recorded with the run on the server
    time: TimeSource = REAL_TIME  # every time read and wait of the run (the fake engine's tests: virtual time)
    listeners: list[Listener] = field(default_factory=list)  # told of every phase and sample (listeners.py)


class RunState:
    """One run's state, shared by the coordinator (runner.py) and its collaborators (session_launch,
    measured_window, node_loss, stop_and_clean_up), each given it."""

    def __init__(self, ctx: RunContext):
        self.ctx = ctx
        self.phase: Phase | None = None  # the phase the run is in (advance), None before it begins
        self.listeners = Listeners(ctx.listeners, self._listener_failed)
        self.plan = ctx.plan
        self.run_id = ctx.run_id or new_run_id()
        self.time = ctx.time
        self.clock = Clock(warmup=ctx.plan.warmup)
        self.shared = Shared(self.run_id, ctx.plan.work_loop, self.clock, on_slice=self._on_slice,
                             work_loop_counts_warmup=ctx.plan.work_loop_scope == "session", liveness=Liveness(ctx.time))
        self.sessions = spread(ctx.nodes, ctx.plan.schema_of)
        self.nodes = [NodeRun(node, self.run_id, [s for s in self.sessions if s.node == node.name], time=ctx.time)
                      for node in ctx.nodes]
        self.counts = IntervalCounts(len(ctx.plan.bounds_us) + 1, ctx.plan.grid)
        self.events: list[dict[str, Any]] = []
        self.status = RunStatus()  # what became of the run, and why: changed only by its end()
        self.monitor: Monitor | None = None
        self.monitoring: list[Monitoring] = []  # each monitored node's, as SessionLaunch.open_monitoring opened it
        self.stopping = Stopping(self.shared, self.sessions, self.event, ctx.time)
        self.start = StartFacts()  # how the sessions were connected and released together
        self.window = WindowReadings()  # its two readings, and when
        self.plans: dict[str, Any] = {}
        self.background_stop = asyncio.Event()
        self.background: list[asyncio.Task] = []
        self.lost: dict[str, dict[str, Any]] = {}  # node -> when its server stopped, why, its last reading
        self.node_published_to: dict[str, float] = {}  # node -> its sessions' latest slice end (server clock)

    def _on_slice(self, session: Session, result: SliceResult, measured: bool) -> None:
        self.counts.add(result, measured, self.clock.start)
        self.node_published_to[session.node] = max(self.node_published_to.get(session.node, result.slice_end),
                                                   result.slice_end)

    def published_by_all(self, now: float) -> float:
        """The instant (this host's clock) before which every session's work is in its server's counters
        (sessions.published_by_all); now: this host's clock. Not waited for: the sessions of a node lost (its last
        reading stands for it, holding all of its work the figures will ever count) and a session that failed (its
        call will never answer: a backend publishes its counters as it ends), nor one of a node whose counters gain
        the work as it is done (Capabilities.counts_at_call_end)."""
        waited = {r.node.name for r in self.nodes
                  if r.node.info.caps.counts_at_call_end and r.node.name not in self.lost}
        return published_by_all(awaited(self.sessions, waited), now)

    def nodes_published(self, now: float) -> dict[str, dict[str, float | None]]:
        """With several nodes, each node's own work point: its sessions' latest slice end and the instant before
        which their work is in its counters (as published_by_all, over its sessions only), so that a node's series
        is measured on its own sessions' work: one node's session frozen (stall@NODE) leaves the others' spans
        known. {} with one node."""
        if len(self.nodes) < 2:
            return {}
        out: dict[str, dict[str, float | None]] = {}
        for r in self.nodes:
            name = r.node.name
            waited = {name} if r.node.info.caps.counts_at_call_end and name not in self.lost else set()
            out[name] = {"published_to": self.node_published_to.get(name),
                         "published_by_all": published_by_all(awaited(r.sessions, waited), now)}
        return out

    def stop(self) -> None:
        """No new slices: each session ends the one it is in (stopping.py)."""
        self.stopping.stop(self.offset)

    def advance(self, phase: Phase) -> None:
        """The run enters phase, only ever forwards (a run that ends early goes on from where it was to CLEAN_UP):
        the one place its phase changes. The user is told in words, every listener is told."""
        assert self.phase is None or phase.order > self.phase.order, (self.phase, phase)
        self.phase = phase
        words = self._words(phase)
        if words is not None:
            self.ctx.observer.phase(words)
        self.listeners.phase(phase, self)

    def _words(self, phase: Phase) -> str | None:
        """What the user is told as the run enters phase (the live line's status), if anything."""
        if phase is Phase.CONNECT:
            count = len(self.sessions)
            return f"connecting {count} session{'s' if count != 1 else ''}"
        if phase is Phase.WARMUP:
            return "warming up" if self.plan.warmup else "measuring"
        if phase is Phase.WINDOW and self.plan.warmup:  # without warm-up, said as the sessions started
            return "measuring"
        return None

    async def write_sample(self, record: dict[str, Any]) -> None:
        """A record appended to samples.jsonl (fsync: in a thread, off the sessions' loop), then told the
        listeners."""
        await asyncio.to_thread(self.ctx.samples.write, record)
        self.listeners.sample(record)

    # -- what a listener may do (listeners.RunView) ------------------------------------------------------------------
    @property
    def offset(self) -> float:
        """server clock - this host's (StartFacts.offset)."""
        return self.start.offset

    @property
    def liveness(self) -> Liveness:
        return self.shared.liveness

    def spawn(self, owner: Listener, work: Coroutine[Any, Any, None]) -> None:
        if self.phase is Phase.DONE:
            work.close()
            raise RuntimeError("the run is done: no task can be bound to it any more")
        self.background.append(asyncio.create_task(self.listeners.guarded(owner, work)))

    def tell(self, message: str) -> None:
        self.ctx.observer.event(message)
        self.listeners.told(message)

    def disrupting(self, planned: tuple[str, ...], active: tuple[tuple[int, str], ...]) -> None:
        shown = getattr(self.ctx.observer, "disrupting", None)  # the live line's (an observer may show none)
        if shown is not None:
            shown(active)
        self.listeners.disrupting(planned, active)

    async def stop_run(self, kind: str, message: str, *, at_once: bool = False) -> None:
        self.status.end(Status.FAILED, message)
        self.event(kind, message)
        self.tell(message)
        self.stop()
        if not at_once:
            return
        self.stopping.force.set()  # no slice may finish
        # cancelled now: the drain comes to it only at its next check, and in the warm-up only once the sessions
        # have ended their slices
        await self.stopping.cancel_now()

    def _listener_failed(self, listener: Listener, exc: Exception) -> None:
        """A listener raised: recorded and told; the run goes on without it, unless it is vital (then it fails)."""
        error = f"{type(exc).__name__}: {exc}"
        if listener.vital:
            message = f"{listener.title} failed ({error}): the run stops"
            self.status.end(Status.FAILED, message)
            self.stop()
        else:
            message = f"{listener.title} failed ({error}): the run goes on without it"
        self.event("listener_failed", message)
        self.tell(message)

    def sample_label(self, t: float) -> str:
        """The label of the instant t (server clock) in the samples (phase.phase_at)."""
        return phase_at(t, self.clock, self.stopping.stopped_at).label

    def event(self, kind: str, message: str) -> None:
        t = self.time.wall() + self.offset
        since = None if self.clock.start is None else round(t - self.clock.start, 3)
        self.events.append({"t": t, "since_start": since, "kind": kind, "message": message})

    def first_error(self) -> str | None:
        return next((s.error for s in self.sessions if s.error), None)


class StoppedBeforeStart(Exception):
    """A stop (signal) arrived before the sessions were released."""
