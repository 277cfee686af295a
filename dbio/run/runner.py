"""The run: connect every session on every node, start them together, open and close the
measured window.

Phases: prepare the nodes -> connect the sessions -> open monitoring -> barrier and common
start -> warm-up -> window (begin reading ... end reading) -> drain -> clean up. A session that
dies ends the run; how a run stops on a signal, within bounded time, is in stopping.py. In
every case the result is written, marked with what happened.
"""

from __future__ import annotations

import asyncio
import math
import signal
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Protocol

from dbio.engines.base import SliceResult, helper_application_name, session_application_name
from dbio.errors import DbioError
from dbio.run import agreed_start, disk_guard
from dbio.run.identity import new_run_id
from dbio.run.monitor import SAMPLE_LATE_LIMIT, Monitor, SampleWriter, WaitSampler, sample_on_grid
from dbio.run.nodes import Node, NodeRun, in_threads, spread
from dbio.run.plan import SLICE_SECONDS, RunPlan
from dbio.run.read_probe import ReadProbe
from dbio.run.readings import reading_time
from dbio.run.sessions import Clock, Session, Shared
from dbio.run.stopping import ABANDONED_WAIT, Stopping
from dbio.run.slice_totals import IntervalCounts, Tally

CONNECT_CONCURRENCY = 64  # sessions connecting at once: fast, without a connection storm
BARRIER_TIMEOUT = 120.0
NODE_CHECK_SECONDS = 3.0  # a node whose server does not take a new connection this fast has stopped
AGREED_START_SLACK = 0.5  # seconds after an agreed start by which the sessions must be released
# Past the window's planned opening, sessions whose node answered nothing since, nor for this long (not a slice's
# end, not a reading: a live node answers several a second) are not waited for; they join if it answers again.
WINDOW_SILENCE = 1.0


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
    wait_samples: int
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


def run(ctx: RunContext) -> RunOutcome:
    return asyncio.run(_Coordinator(ctx).execute())


class _Coordinator:
    def __init__(self, ctx: RunContext):
        self.ctx = ctx
        self.plan = ctx.plan
        self.run_id = ctx.run_id or new_run_id()
        self.clock = Clock(warmup=ctx.plan.warmup)
        self.shared = Shared(self.run_id, ctx.plan.work_loop, self.clock, on_slice=self._on_slice,
                             work_loop_counts_warmup=ctx.plan.work_loop_scope == "session")
        self.sessions = spread(ctx.nodes, ctx.plan.schema_of)
        self.nodes = [NodeRun(node, self.run_id, [s for s in self.sessions if s.node == node.name])
                      for node in ctx.nodes]
        for r in self.nodes:  # the schemas its sessions read, at their scale
            r.read_probe = ReadProbe(r.engine, ctx.plan.bounds_us, [s.schema_index for s in r.sessions],
                                     int(ctx.plan.control.get("scale") or 0), seed=self.run_id,
                                     application_name=helper_application_name(self.run_id, "probe"))
        self.probing = False  # the read probes count their lookups while the window is open
        self.counts = IntervalCounts(len(ctx.plan.bounds_us) + 1, ctx.plan.grid)
        self.events: list[dict[str, Any]] = []
        self.status: str = "complete"
        self.reason: str | None = None
        self.offset = 0.0  # server clock - client clock
        self.in_window = False
        self.monitor: Monitor | None = None
        self.waits: WaitSampler | None = None
        self.stopping = Stopping(self.shared, self.sessions, self._event)
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

    # -- the run -----------------------------------------------------------------------
    async def execute(self) -> RunOutcome:
        loop = asyncio.get_running_loop()
        # signals reach the main thread only: a run embedded in another thread is stopped by its caller
        signals = (signal.SIGINT, signal.SIGTERM) if threading.current_thread() is threading.main_thread() else ()
        for sig in signals:
            loop.add_signal_handler(sig, self._on_signal, sig)
        # the sample file is written from a thread (fsync must not stall the sessions' loop)
        self.ctx.samples.on_error = lambda exc: loop.call_soon_threadsafe(self._on_results_error, exc)
        try:
            await self._phases()
        except _Stopped:
            if self.status == "complete":  # failed: every node was lost before the start
                self.status, self.reason = "interrupted", self.reason or "interrupted before the start"
        except (KeyboardInterrupt, asyncio.CancelledError):
            self.status, self.reason = "interrupted", self.reason or "interrupted"
        except Exception as exc:
            if self.clock.start is None:
                raise  # nothing ran yet: the caller reports the error, no result is written
            # After the start, whatever failed, the result is kept and marked.
            self.status = "failed"
            self.reason = self.reason or f"{type(exc).__name__}: {exc}"
            self._event("error", self.reason)
        finally:
            await self._clean_up()
            for sig in signals:
                loop.remove_signal_handler(sig)
        self._uncount_lost()
        return self._outcome()

    async def _phases(self) -> None:
        t_connect = time.monotonic()
        # watched from the first call: a node frozen before the start is lost as one frozen later (calls held at
        # its barrier on purpose count from its release: liveness.asking; a standby waiting for the loop answers
        # each of its checks: Liveness.answered)
        self.watch = asyncio.create_task(self._watch_nodes())
        await self._prepare()
        # The barrier is held before the sessions connect: each goes to it as soon as it is connected,
        # so the server prepares the loop of the first sessions while the last ones connect.
        await self._on_nodes(lambda r: r.engine.hold_barrier(r.control, self.run_id))
        # Several nodes, or a read-only one, start at an instant chosen from the session count before
        # any session calls (_agree_start): their sessions are started once all are connected.
        early = len(self.nodes) == 1 and not self.nodes[0].node.read_only
        if early:
            self._agree_start()
        self.ctx.observer.phase(f"connecting {len(self.sessions)} session{'s' if len(self.sessions) != 1 else ''}")
        tasks = await self._connect_all(start=early)
        self.connect_seconds = time.monotonic() - t_connect
        await self._open_monitoring()
        if not early:
            self._agree_start()
            tasks = [asyncio.create_task(self._session_main(s)) for s in self.sessions]
            for session, task in zip(self.sessions, tasks):
                if session.node in self.lost:  # lost while connecting: never started
                    task.cancel()
        await self._start_together(tasks)
        self.start_seconds = time.monotonic() - t_connect
        await self._measure(tasks)
        early_end = await self._end_of_answering_nodes(tasks)
        await self.stopping.drain(tasks)
        await self._stop_background()
        await self._close_window(early_end)
        self._event("end", "all sessions finished" if self.status == "complete" else f"run {self.status}")

    async def _prepare(self) -> None:
        """Every node's control session and run row; the plans, checked on the first node."""
        params = {**self.plan.control, "client": self.ctx.client}
        await self._on_nodes(lambda r: r.prepare(params, self.ctx.observer.event,
                                                 answered=lambda: self.shared.liveness.answered(r.node.name)))
        scans = self.plan.control["scan_workers"] if self.plan.control["scan_pct"] else None
        self.plans = await asyncio.to_thread(self.nodes[0].plans, self.ctx.access_path, scans)

    async def _open_monitoring(self) -> None:
        opened, runs = [], []
        for r in self.nodes:
            got = None if r.node.name in self.lost else \
                await self._on_node(r.node.name, r.open_monitoring(self.ctx.access_path))
            if got is not None:  # None: lost meanwhile (frozen): not monitored, as a node lost later no longer is
                opened.append(got)
                runs.append(r)
        local = [r.node.info.caps.local for r in runs]
        own_cpu = [r.node.info.caps.has_backend_cpu for r in runs]  # a session's process or thread is its own
        self.monitor = Monitor(
            [o.probe for o in opened], any(local),
            [s.pid for r, mine in zip(runs, own_cpu) if mine for s in r.sessions if s.pid],
            [pid for o in opened for pid in o.background],
            {d for r, is_local in zip(runs, local) if is_local for d in r.node.devices},
            overhead_pids=[pid for o in opened for pid in o.overhead],
            read_helper_pids=[pid for o in opened for pid in o.read_helpers], liveness=self.shared.liveness)
        self.waits = WaitSampler([o.wait_target for o in opened], self.ctx.wait_interval,
                                 lost=self.monitor.lost, liveness=self.shared.liveness)
        self.monitor.lost.update(self.lost)
        if len(self.nodes) > 1:  # a node that stops mid-run ends only its own part of the run
            self.monitor.on_failure = lambda node, error: self._node_may_have_stopped(node, error)

    async def _start_together(self, tasks: list[asyncio.Task]) -> None:
        """Let every session reach the barrier every node holds, release them at one start."""
        await self._wait_at_barrier(tasks)
        if self.plan.start is not None:
            await self._until_agreed_start(tasks)
        # A start agreed in advance: a node that has not answered these steps by then is lost before the start
        # (frozen: it could not start with the others), the others start on time.
        by = None if self.plan.start is None else \
            time.monotonic() + self.plan.start + AGREED_START_SLACK - time.time()
        offsets = await self._on_nodes(NodeRun.clock_offset, by=by) if len(self.nodes) > 1 else []
        asked = time.time()
        first = await self.monitor.reading(per_process=self.plan.warmup == 0,
                                           partial_after=None if by is None else max(0.0, by - time.monotonic()))
        read_at = (asked + time.time()) / 2
        for r in self.nodes:
            if r.node.name not in self.lost and first["nodes"].get(r.node.name, True) is None:
                self._lose_node(r, "it did not answer before the agreed start: frozen, or unreachable",
                                ago=self.shared.liveness.quiet_for(r.node.name))
        first = {**first, "nodes": {n: raw for n, raw in first["nodes"].items()
                                    if raw is not None or n not in self.lost}}
        if self.plan.warmup == 0:
            self.begin = first
        if self.shared.stop.is_set():
            await self._abort_start(tasks)
            raise _Stopped()
        released_times = await self._release(by)
        if released_times is None:
            await self._abort_start(tasks)
            raise _Stopped()
        start, window_open, deadline = released_times
        # from here every wait on a node is bounded: the sessions' barrier waits, held on purpose, are over
        self.shared.liveness.restart([r.node.name for r in self.nodes if r.node.name not in self.lost])
        released = time.time()
        # server clock - client clock: from the release's own clock, or (a start agreed in advance) the
        # first reading's, against the middle of its round trip
        self.offset = start - released if self.plan.start is None else (reading_time(first) or read_at) - read_at
        measured = [o for o in offsets if o]
        if measured:  # several nodes: the first one's (still there), measured on a round trip of its own
            self.offset = measured[0][0]
        # barriers open ahead of an agreed start (the loop waits for it): late is only what came after it
        self.released_late = None if self.start_agreed != "start_at" else max(0.0, released - self.plan.start)
        if len(self.nodes) > 1:
            self.node_starts = self._node_starts(offsets, start)
        self.clock.start, self.clock.window_open, self.clock.deadline = start, window_open, deadline
        self.deadline_at = None if deadline is None else time.monotonic() + deadline - (time.time() + self.offset)
        self.window_open_at = time.monotonic() + window_open - (time.time() + self.offset)
        self._event("start", f"{len(self.sessions)} sessions started together")
        self.ctx.observer.phase("warming up" if self.plan.warmup else "measuring")
        self.background.append(asyncio.create_task(self.waits.run(self.sampler_stop)))
        # The reading taken just before the start is the series' first point (nothing ran since).
        await asyncio.to_thread(self.ctx.samples.write, {"k": 0, "t": start, "published_to": start,
                                                         "phase": "warmup", **first, "waits": {}, "statements": None})
        if self.ctx.room_paths:
            self.background.append(asyncio.create_task(self._guard_room()))
        for r in self.nodes:
            if r.node.name not in self.lost:  # a node lost before the start has no probe to run
                self.background.append(asyncio.create_task(r.read_probe.run(lambda: self.probing, self.sampler_stop)))
        self.background.append(asyncio.create_task(sample_on_grid(
            self.monitor, self.waits, self.ctx.samples, t_start=start, clock_offset=self.offset, grid=self.plan.grid,
            phase=self._phase_at, stop=self.sampler_stop, counts=self.counts.record,
            published=lambda: self.counts.published_to, on_sample=self._on_sample)))

    def _agree_start(self) -> None:
        """Several nodes (or a read-only one) start at an instant chosen before any session calls (read-only
        nodes get it in each call); --start-at has chosen it already."""
        if self.plan.start is not None:
            self.start_agreed = "start_at"
        elif len(self.nodes) > 1 or any(r.node.read_only for r in self.nodes):
            self.plan = replace(self.plan, start=time.time() + agreed_start.start_lead(len(self.sessions)))
            self.start_agreed = "nodes"
        for r in self.nodes:
            if r.node.read_only:
                control = agreed_start.read_only_control(self.plan.control, self.run_id, start=self.plan.start,
                                                   warmup=self.plan.warmup, run_time=self.plan.run_time)
                for session in r.sessions:
                    session.control = control

    async def _release(self, by: float | None) -> tuple[float, float, float | None] | None:
        """One node: released now (its server's clock fixes the start). A start agreed in advance: every
        node at once, a little before it (the loop waits until the start); one that does not take it by
        then is lost."""
        if self.plan.start is None:
            return (await self._on_nodes(lambda r: r.release(self.plan.warmup, self.plan.run_time, None)))[0]
        times = await self._on_nodes(lambda r: r.release(self.plan.warmup, self.plan.run_time, self.plan.start), by=by)
        return next((t for t in times if t is not None), None)  # None: every node lost meanwhile

    def _node_starts(self, offsets: list[tuple[float, float] | None], start: float) -> dict[str, dict[str, Any]]:
        """Each node's clock offset (measured on its control connection) and its start skew."""
        out = {}
        for r, measured in zip(self.nodes, offsets):
            offset, uncertainty = measured if measured else (None, None)
            out[r.node.name] = {**agreed_start.node_start(start, offset, r.released_at),
                                "clock_uncertainty_s": uncertainty}
        return out

    async def _measure(self, tasks: list[asyncio.Task]) -> None:
        """Open the measured window: at the start, or once every session ended its warm-up."""
        if self.plan.warmup == 0:
            self.window_start = self.clock.start
            self._open_window()
            return
        await self._wait_for_window(tasks)
        if self._window_can_open():
            if self.unwaited:
                self._event("window_without",
                            f"the window opened without the sessions of {', '.join(sorted(self.unwaited))}"
                            " (it answered nothing since its planned opening)")
                # their counters: the last reading they answered (silent since: nothing to add), unless they answer now
                begin = await self._reading(per_process=True, partial_after=SAMPLE_LATE_LIMIT / 2)
                self.begin = {**begin, "nodes": {name: raw if raw is not None or name not in self.unwaited
                                                 else self.monitor.last.get(name)
                                                 for name, raw in begin["nodes"].items()}}
            else:
                self.begin = await self._reading(per_process=True)
            self.window_start = reading_time(self.begin) or time.time() + self.offset
            self._open_window()
            self.ctx.observer.phase("measuring")
        elif not self.shared.stop.is_set() and self.status == "complete":  # every session done before the window
            self.status, self.reason = "failed", self._ended_in_warmup()
        self.shared.window_opened.set()

    def _ended_in_warmup(self) -> str:
        why = f"every session ended during the {self.plan.warmup:g} s warm-up: nothing was measured"
        if self.plan.work_loop and self.plan.work_loop_scope == "session":
            why += (f" (work_loop = {self.plan.work_loop:,} counts the warm-up's iterations: work_loop_scope = "
                    "session); give a larger work_loop, a shorter warmup, or work_loop_scope = window")
        return why

    async def _end_of_answering_nodes(self, tasks: list[asyncio.Task]) -> tuple[asyncio.Task, set[str]] | None:
        """An end reading begun when, past the deadline, the only sessions still running are on nodes that
        answered nothing since it (frozen, such a node is lost within seconds), and those nodes: so that the
        window of the others ends with their work, not seconds later. Not used unless those nodes were lost
        (_close_window). Begun again when those nodes change: a live node whose last slice's answer came late
        (a loaded host) is first among them, then done, and the reading begun with it would not do (seen: the
        end reading came at the frozen node's loss, a 10.57 s window for 4 s). Waits for every session (after a
        stop, the drain does); None when there is no such reading."""
        if self.deadline_at is None or self.window_start is None:
            return None
        early: tuple[asyncio.Task, set[str]] | None = None
        while not self.shared.stop.is_set():
            running = [(s, t) for s, t in zip(self.sessions, tasks) if not t.done()]
            if not running:
                return early
            quiet = {s.node for s, _ in running}
            heard = self.shared.liveness.heard
            if time.monotonic() >= self.deadline_at and (early is None or early[1] != quiet) and \
                    all(heard.get(node, float("-inf")) < self.deadline_at for node in quiet):
                reading = self._reading(per_process=True, partial_after=SAMPLE_LATE_LIMIT / 2)
                early = asyncio.ensure_future(reading), quiet
            await asyncio.wait([t for _, t in running], timeout=0.05)
        return early

    async def _close_window(self, early: tuple[asyncio.Task, set[str]] | None = None) -> None:
        """The end reading, which is also the last per-second sample: it holds the final second's flush. Taken
        early (_end_of_answering_nodes) when the nodes whose sessions outlasted the deadline were lost since:
        their entries are then their last readings, as in every reading after a node's loss."""
        self.probing = False
        if self.window_start is None:
            return
        reading = None if early is None else await early[0]  # bounded: each node answers, or is lost
        if reading is not None and early[1] <= set(self.lost):
            self.end = {**reading, "nodes": {name: self.monitor.last.get(name) if name in self.lost else raw
                                             for name, raw in reading["nodes"].items()}, "lost": sorted(self.lost)}
        else:
            self.end = await self._reading(per_process=True)
        self.window_end = reading_time(self.end) or time.time() + self.offset
        covered = [lost["covered_to"] for lost in self.lost.values() if lost["covered_to"] is not None]
        if len(self.lost) == len(self.nodes) and covered:  # no node left: the figures end where the nodes' did
            self.window_end = max(covered)
        if self.ctx.on_window is not None:
            self.ctx.on_window("close")
        self.waits.in_window = False
        boundary = int(round(self.window_end - self.clock.start))  # the last second any session published
        last = self.plan.grid.key(boundary)
        record = {"k": last, "covers_to": boundary, "t": self.window_end, "published_to": self.counts.published_to,
                  "phase": self._phase_at(self.window_end - SLICE_SECONDS / 2), **self.end, "waits": self.waits.take(),
                  **self.counts.record(last, final=True), "final": True}
        self.ctx.observer.second(record)  # the window's last reading: where the figures end
        await asyncio.to_thread(self.ctx.samples.write, record)

    async def _reading(self, *, per_process: bool, partial_after: float | None = None) -> dict[str, Any]:
        """A reading of every node, bounded after a signal; {"nodes": {}} when none came."""
        conns = [(r.engine, r.monitor_conn) for r in self.nodes]
        return await self.stopping.bounded(self.monitor.reading(per_process=per_process, partial_after=partial_after),
                                           conns) or {"nodes": {}}

    async def _clean_up(self) -> None:
        await self._stop_background()
        await self._close_sessions()
        leftover = self.counts.record(None, final=True)  # slices of a run that ended early
        if leftover.get("late_statements"):
            try:
                await asyncio.to_thread(self.ctx.samples.write, {"t": time.time() + self.offset, "phase": "late",
                                                                 **leftover})
            except Exception:
                pass
        for r in self.nodes:
            if r.node.name in self.lost:  # its server is gone: nothing to say goodbye to
                for conn in [*r.monitoring_connections(), *([r.control] if r.control is not None else [])]:
                    r.engine.abandon(conn)
                r.control = None
                continue
            await r.close_monitoring()
        # a frozen server keeps the run's row: the next run removes it (its dbio process is gone)
        controls = [r for r in self.nodes if r.control is not None]
        await self.stopping.bounded(self._on_nodes(NodeRun.forget, controls), [(r.engine, r.control) for r in controls])
        for r in controls:
            if r.control is not None:  # None: its node was lost meanwhile
                r.engine.close(r.control)
        if self.watch is not None:
            self.watch.cancel()

    def _outcome(self) -> RunOutcome:
        waits = self.waits
        return RunOutcome(
            status=self.status, reason=self.reason, run_id=self.run_id, clock=self.clock, sessions=self.sessions,
            begin=self.begin, end=self.end, window_start=self.window_start, window_end=self.window_end,
            totals=self.counts.totals, waits=dict(waits.window) if waits else {},
                          wait_samples=waits.samples if waits else 0,
            plans=self.plans, connect_seconds=self.connect_seconds, start_seconds=self.start_seconds,
            events=self.events, monitor_errors=list(self.monitor.errors) if self.monitor else [],
            samples_written=self.ctx.samples.lines, signal=self.stopping.signal, clock_offset=self.offset,
            node_waits={n: dict(c) for n, c in waits.window_by_node.items()} if waits else {},
            released_late=self.released_late, node_starts=self.node_starts, start_agreed=self.start_agreed,
            lost_nodes=self.lost,
            read_probe={r.node.name: r.read_probe.record(r.read_probe.method) for r in self.nodes
                        if r.read_probe is not None})

    # -- steps -------------------------------------------------------------------------
    def _on_results_error(self, exc: OSError) -> None:
        message = f"the results directory cannot be written ({exc.strerror}): the run stops"
        if self.status == "complete":
            self.status, self.reason = "failed", message
        self._event("results_unwritable", message)
        self.ctx.observer.event(message)
        self._stop()

    async def _connect_all(self, *, start: bool) -> list[asyncio.Task]:
        """Connect every session and, with start, start it (it waits at the barrier); the sessions'
        tasks, in order."""
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
        tasks: dict[int, asyncio.Task] = {}
        nodes = {r.node.name: r.node for r in self.nodes}

        async def connect(session: Session) -> None:
            async with gate:
                if session.node in self.lost:
                    return
                node = nodes[session.node]
                got = await self._on_node(session.node, session.engine.connect_session(
                    node.conninfo, application_name=session_application_name(self.run_id, session.number),
                    schema_index=session.schema_index, access_path=self.ctx.access_path, info=node.info))
                if got is None:  # its node was lost (frozen) meanwhile
                    return
                session.conn, session.pid = got
                session.state = "connected"
                if start:
                    tasks[session.number] = asyncio.create_task(self._session_main(session))

        results = await asyncio.gather(*(connect(s) for s in self.sessions), return_exceptions=True)
        failures = [r for s, r in zip(self.sessions, results)
                    if isinstance(r, BaseException) and s.node not in self.lost]
        started = [tasks[s.number] for s in self.sessions if s.number in tasks]
        if failures or len(self.lost) == len(self.nodes):
            await self._abort_start(started)
            if not failures:
                raise _Stopped()  # the connected sessions wait at the barrier: send them away
            first = failures[0]
            if isinstance(first, DbioError):
                raise DbioError(f"{len(failures)} of {len(self.sessions)} sessions could not connect: {first.message}",
                                first.hint)
            raise first
        return started

    async def _wait_at_barrier(self, tasks: list[asyncio.Task]) -> None:
        deadline = time.monotonic() + BARRIER_TIMEOUT
        while True:
            # count the waiters on the server only once every session sent its call: with 2,048
            # sessions, each count reads a lock table of thousands of entries
            # a node lost meanwhile (frozen before the start): the others start without it
            mine = [(s, t) for s, t in zip(self.sessions, tasks) if s.node not in self.lost]  # tasks: in session order
            if any(not (s.in_call or t.done()) for s, t in mine):
                waiting = 0
            else:
                # a start agreed in advance: a node whose count does not come in time to start is lost (frozen)
                by = None if self.plan.start is None else \
                    time.monotonic() + self.plan.start - agreed_start.RELEASE_AHEAD / 2 - time.time()
                waiting = sum(n or 0 for n in await self._on_nodes(NodeRun.waiting, by=by))
            if waiting >= len(mine) and mine:
                return
            failed = [t for s, t in mine if t.done() and s.node not in self.lost]
            stopped = self.shared.stop.is_set()
            if failed or stopped or time.monotonic() > deadline:
                await self._abort_start(tasks)
                error = self._first_error()
                # a signal while sessions connect ends those already at the barrier without an error: stopped
                if failed and (error or not stopped):
                    raise DbioError(f"a session failed before the start: {error or 'unknown error'}")
                if stopped:
                    raise _Stopped()
                raise DbioError(f"only {waiting} of {len(self.sessions)} sessions reached the start barrier "
                                f"in {BARRIER_TIMEOUT:.0f} s", "check the server log and its load")
            await asyncio.sleep(0.02)

    async def _abort_start(self, tasks: list[asyncio.Task]) -> None:
        """Never release a failed start into a run: remove the run first, then let the waiting
        sessions through the barrier, where they find no run and return at once."""
        self._stop()
        await self._on_nodes(NodeRun.forget)
        _, pending = await asyncio.wait(tasks, timeout=10)
        if pending:
            await self.stopping.cancel_running()
            for task in pending:
                task.cancel()
            await asyncio.wait(pending, timeout=5)

    async def _until_agreed_start(self, tasks: list[asyncio.Task]) -> None:
        """--start-at: every session waits at the barrier until the start agreed in advance (a signal
        ends the wait); a start that passed while connecting is refused, nothing having run."""
        delay = self.plan.start - agreed_start.RELEASE_AHEAD - time.time()
        if delay > 0:
            try:
                await asyncio.wait_for(self.shared.stop.wait(), timeout=delay)
            except asyncio.TimeoutError:
                pass
        late = time.time() - self.plan.start
        if self.shared.stop.is_set() or late > AGREED_START_SLACK:
            if self.start_agreed == "nodes" and not self.shared.stop.is_set():
                await self._abort_start(tasks)
                raise DbioError(f"the sessions were not all at their barriers {late:.1f} s after the start "
                                "chosen for the nodes", "check the servers' load, or give fewer sessions")
            await self._abort_start(tasks)
            if late > AGREED_START_SLACK and not self.stopping.signal:
                raise DbioError(f"the agreed start passed {late:.1f} s before every session was ready",
                                "give a later --start-at (connecting took longer than expected)")
            raise _Stopped()

    async def _wait_for_window(self, tasks: list[asyncio.Task]) -> None:
        """Until every running session reached the window's opening; past it, not for the sessions of a node
        silent since it (_silent_at_window_open; frozen: lost seconds later; its sessions join if it answers)."""
        while not self.shared.stop.is_set():
            running = [s for s in self.sessions if s.state == "running"]
            if self.shared.arrived >= len(running) or all(t.done() for t in tasks):
                return
            silent = self._silent_at_window_open()
            waited = [s for s in running if s.node not in silent]
            if silent and waited and all(s.arrived for s in waited):
                self.unwaited = silent
                return
            self.shared.arrival.clear()
            try:
                await asyncio.wait_for(self.shared.arrival.wait(), timeout=0.1 if self.window_open_at else 0.5)
            except asyncio.TimeoutError:
                pass

    def _silent_at_window_open(self) -> set[str]:
        """Past the window's planned opening: the nodes that answered nothing (no slice, no reading) since it,
        nor in the last WINDOW_SILENCE seconds."""
        now = time.monotonic()
        if self.window_open_at is None or now < self.window_open_at:
            return set()
        heard = self.shared.liveness.heard
        return {r.node.name for r in self.nodes if r.node.name not in self.lost
                and heard.get(r.node.name, float("-inf")) < min(self.window_open_at, now - WINDOW_SILENCE)}

    def _window_can_open(self) -> bool:
        return not self.shared.stop.is_set() and any(s.state == "running" for s in self.sessions)

    def _open_window(self) -> None:
        self.in_window = True
        self.probing = True
        self.waits.in_window = True
        self._event("window_open", "measured window opened")
        if self.begin is not None:  # the window's first reading: its counters are where the figures start
            self.ctx.observer.second(self.begin)
        if self.ctx.on_window is not None:
            self.ctx.on_window("open")

    async def _on_nodes(self, step: Callable[[NodeRun], Any], runs: list[NodeRun] | None = None,
                        by: float | None = None) -> list[Any]:
        """A sync step on every node (or those of runs) at once, each in a thread (nodes.in_threads), in their
        order; None for a node lost (before or during the step: its error is its loss). by (monotonic): a node
        whose step has not answered by then is lost."""
        runs = self.nodes if runs is None else runs
        live = [r for r in runs if r.node.name not in self.lost]
        tasks = {r.node.name: asyncio.ensure_future(in_threads([r], step, self.shared.liveness)) for r in live}
        if by is not None and tasks:
            # a step begun late (by passed) still waits a little: a node answering in milliseconds is not lost
            await asyncio.wait(tasks.values(), timeout=max(AGREED_START_SLACK, by - time.monotonic()))
            for r in live:
                if not tasks[r.node.name].done() and r.node.name not in self.lost:
                    self._lose_node(r, "it did not answer before the agreed start: frozen, or unreachable",
                                    ago=self.shared.liveness.quiet_for(r.node.name))
        out = []
        for r in runs:
            task = tasks.get(r.node.name)
            while task is not None and not task.done() and r.node.name not in self.lost:
                await asyncio.wait([task], timeout=0.25)  # until it answers, or its node is lost (the watch)
            if task is not None and not task.done():  # lost: its abandoned connection ends the call, unless it
                await asyncio.wait([task], timeout=ABANDONED_WAIT)  # had none yet (a connect): not waited for
            try:
                out.append(None if task is None or not task.done() else task.result()[0])
            except Exception:
                if r.node.name not in self.lost:
                    raise
                out.append(None)
        return out

    async def _on_node(self, node: str, call: Any) -> Any:
        """An async call on a node, cancelled if the node is lost meanwhile (None then)."""
        task = asyncio.ensure_future(call)
        self.node_calls.setdefault(node, set()).add(task)
        try:
            with self.shared.liveness.asking(node):
                return await task
        except (asyncio.CancelledError, Exception):
            if node in self.lost:
                return None
            raise
        finally:
            self.node_calls[node].discard(task)

    async def _stop_background(self) -> None:
        """Stop the sampler and the wait sampler (bounded: see Stopping.stop_tasks)."""
        self.sampler_stop.set()
        await self.stopping.stop_tasks(self.background,
                                       [(r.engine, c) for r in self.nodes for c in r.monitoring_connections()])

    async def _session_main(self, session: Session) -> None:
        try:
            await session.run(self.shared, len(self.plan.bounds_us) + 1)
        except asyncio.CancelledError:
            session.state = "stopped"
        except Exception as exc:
            if self.shared.stop.is_set() and (session.engine.is_cancelled(exc) or self.clock.start is None
                                              or session.number in self.stopping.abandoned):
                session.state = "stopped"  # stopped on purpose, or sent away from a start that never came
                return
            session.fail(exc, self.offset)
            if session.node in self.lost or await self._node_stopped(session.node, session.error):
                return  # its node's server stopped: the other nodes go on (see _lose_node)
            elapsed = "" if self.clock.start is None else f" at +{session.failed_at - self.clock.start:.1f} s"
            where = f"pid {session.pid}, schema {session.schema_index}" + (
                f", node {session.node}" if len(self.nodes) > 1 else "")
            message = f"session {session.number} ({where}) ended{elapsed}: {session.error}"
            self._event("session_failed", message)
            self.ctx.observer.event(message)
            if self.status == "complete":
                self.status, self.reason = "failed", message
            self._stop()

    # -- a node whose server stops mid-run (several nodes) ---------------------------------
    def _node_may_have_stopped(self, node: str, error: str) -> None:
        if self.clock.start is not None and node not in self.checks:
            self.checks[node] = asyncio.get_running_loop().create_task(self._check_node(node, error))

    async def _node_stopped(self, node: str, error: str | None) -> bool:
        """Whether a session's failure is its node's server stopping (then that node is lost, the run goes
        on); a run of one node, a failure before the start or a server that still answers: False."""
        if len(self.nodes) < 2 or self.clock.start is None or self.shared.stop.is_set():
            return False
        self._node_may_have_stopped(node, error or "a session ended")
        return await asyncio.shield(self.checks[node])

    async def _check_node(self, node: str, error: str) -> bool:
        run = next(r for r in self.nodes if r.node.name == node)
        try:
            conn = await asyncio.wait_for(run.engine.aconnect(run.node.conninfo, application_name="dbio:check"),
                                          NODE_CHECK_SECONDS)
        except Exception:
            self._lose_node(run, error)
            return True
        await run.engine.aclose(conn)
        self.checks.pop(node, None)  # it answers: a later failure is checked again
        return False

    def _lose_node(self, run: NodeRun, error: str, ago: float = 0.0) -> None:
        """Its server stopped (ago seconds before now: a silent one when it last answered): no more readings
        of it (each reading keeps its last, so its figures end there and the totals are partial), its
        sessions are over; the other nodes finish the window."""
        name = run.node.name
        t = time.time() + self.offset - ago
        last = self.monitor.last.get(name) if self.monitor else None
        start = self.clock.start if self.clock.start is not None else self.plan.start  # agreed in advance
        since = None if start is None else round(t - start, 3)
        covered = None if not last else self._covered_to(float(last["t"]))
        self.lost[name] = {"t": t, "since_start": since, "reason": error, "covered_to": covered}
        if self.monitor is not None:
            self.monitor.lost.add(name)
        self._abandon_node(run)  # whatever still waits on it ends now, and no more of its work is counted
        when = self._when(since)
        message = f"node {name} stopped{when} ({error}): the other nodes finish the window; its " \
                  "figures end at its last reading and the totals are partial" if len(self.nodes) > 1 else \
            f"the server stopped{when} ({error}): the figures end at its last reading"
        self._event("node_lost", message)
        self.ctx.observer.event(message)
        if len(self.lost) == len(self.nodes):
            if self.status == "complete":
                self.status, self.reason = "failed", "every node's server stopped" if len(self.nodes) > 1 else message
            self._stop()

    def _when(self, since: float | None) -> str:
        """When a node stopped, in words before the window (since: seconds after the start)."""
        if since is None or since < 0:
            return " before the start"
        if since < self.plan.warmup:
            return " during the warm-up"
        return f" at +{since:.1f} s"

    async def _watch_nodes(self) -> None:
        """A node that answers nothing for liveness.SILENT_AFTER seconds while dbio waits on it is lost, whatever
        the wait (a slice, a reading, a flush, the run's row): its connections are abandoned, which ends
        every wait on it at once."""
        while True:
            for name in self.shared.liveness.silent():
                run = next(r for r in self.nodes if r.node.name == name)
                if name not in self.lost:
                    quiet = self.shared.liveness.quiet_for(name)
                    self._lose_node(run, f"it answered nothing for {quiet:.0f} s: frozen, or unreachable", ago=quiet)
                else:
                    self._abandon_node(run)  # a call made on it since
            await asyncio.sleep(0.25)

    def _covered_to(self, t: float) -> float | None:
        """The sessions publish their counters at each slice's end, on the grid: a node's reading at t holds
        its work up to the last slice boundary before it."""
        if self.clock.start is None:
            return None
        return self.clock.start + math.floor((t - self.clock.start) / SLICE_SECONDS) * SLICE_SECONDS

    def _uncount_lost(self) -> None:
        """A lost node's figures end at its last reading: its slices that ended after it are not counted."""
        for name, lost in self.lost.items():
            if lost["covered_to"] is None:
                continue
            for session in (s for s in self.sessions if s.node == name):
                for result in session.uncount_after(lost["covered_to"]):
                    self.counts.totals.remove(result)

    def _abandon_node(self, run: NodeRun) -> None:
        conns = [s.conn for s in run.sessions if s.conn is not None]
        conns += [*run.monitoring_connections(), *([run.control] if run.control is not None else [])]
        self.stopping.abandon([(run.engine, conn) for conn in conns])
        for task in self.node_calls.get(run.node.name, ()):  # a connection still being made: given up
            task.cancel()

    async def _close_sessions(self) -> None:
        for session in self.sessions:
            if session.conn is not None:
                try:
                    await session.engine.aclose(session.conn)
                except Exception:
                    pass

    async def _guard_room(self) -> None:
        """Stop the run, cancelling the slices at once, before the servers' writes fill a filesystem."""
        history: list[tuple[float, int]] = []
        while not self.sampler_stop.is_set():
            found = disk_guard.tightest(self.ctx.room_paths)
            if found is not None:
                free, where = found
                history = [*history[-(int(2 * disk_guard.SPAN / disk_guard.INTERVAL)):], (time.monotonic(), free)]
                if disk_guard.runs_out(history, self.ctx.room_floor):
                    # why now, with room still left: a server's growth step seen as a rate stops a run early
                    message = (f"stopped before the disk filled: {free >> 20} MiB left on the filesystem of {where}, "
                               f"where the server writes ({self.ctx.room_floor >> 20} MiB are kept free there, and "
                               f"it was using {disk_guard.rate(history) / (1 << 20):,.0f} MiB/s)")
                    if self.status == "complete":
                        self.status, self.reason = "failed", message
                    self._event("disk_full", message)
                    self.ctx.observer.event(message)
                    self._stop()
                    self.stopping.force.set()  # no slice may finish: it could write the last megabytes
                    # cancelled now: the drain comes to it only at its next check, and in the warm-up only once
                    # the sessions have ended their slices (seen: 1.0-1.1 s after the stop, time enough for InnoDB
                    # to grow ibdata1 by 64 MiB twice more)
                    cancelled = await self.stopping.cancel_running()
                    if cancelled:
                        self._event("cancelled", f"cancelled {cancelled} session(s) still inside a slice: the "
                                                 "statements of that last slice are missing from the session "
                                                 "counts, while the engine counted its I/O")
                    return
            try:
                await asyncio.wait_for(self.sampler_stop.wait(), disk_guard.INTERVAL)
            except asyncio.TimeoutError:
                pass

    # -- callbacks ---------------------------------------------------------------------
    def _on_slice(self, session: Session, result: SliceResult, measured: bool) -> None:
        self.counts.add(result, measured, self.clock.start)

    def _on_sample(self, sample: dict[str, Any]) -> None:
        """A sample was taken: the slices its readings hold are settled (a node lost later keeps them)."""
        for name, raw in (sample.get("nodes") or {}).items():
            covered = None if not raw or name in self.lost else self._covered_to(float(raw["t"]))
            if covered is not None:
                for session in (s for s in self.sessions if s.node == name):
                    session.settle(covered)
        self.ctx.observer.second(sample)

    def _on_signal(self, sig: int) -> None:
        name = signal.Signals(sig).name
        if self.stopping.signal_received(name):
            self.ctx.observer.event(f"{name} again: cancelling the sessions now")
            return
        if self.status == "complete":
            self.status, self.reason = "interrupted", f"{name} received"
        self._event("interrupt", f"{name} received")
        self.ctx.observer.event(f"{name}: stopping after the current second (again to cancel now)")
        self._stop()

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
        t = time.time() + self.offset
        since = None if self.clock.start is None else round(t - self.clock.start, 3)
        self.events.append({"t": t, "since_start": since, "kind": kind, "message": message})

    def _first_error(self) -> str | None:
        return next((s.error for s in self.sessions if s.error), None)


class _Stopped(Exception):
    """A stop (signal) arrived before the sessions were released."""

