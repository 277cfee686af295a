"""The sessions' launch: every node prepared, its barrier held, the sessions connected and waiting at it,
monitoring opened, and all released at one start (one node: its release fixes the start; several, or a
read-only one: a start agreed in advance), then the run's background tasks begun. A failed start is
aborted before any session runs.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from dbio.engines.base import session_application_name
from dbio.errors import DbioError
from dbio.run import agreed_start
from dbio.run.monitor import Monitor, sample_on_grid
from dbio.run.node_loss import AGREED_START_SLACK
from dbio.run.nodes import NodeRun
from dbio.run.phase import Phase
from dbio.run.readings import reading_time
from dbio.run.run_status import Status
from dbio.run.node_loss import NodeLoss
from dbio.run.run_state import RunState, StoppedBeforeStart
from dbio.run.sessions import Session

CONNECT_CONCURRENCY = 64  # sessions connecting at once: fast, without a connection storm
BARRIER_TIMEOUT = 120.0
# A release answered within this (seconds) dates the start well enough: the offset it gives is off by at most
# this, a twentieth of a slice. A slower answer's offset is measured again on round trips of its own.
RELEASE_ANSWER_TRUSTED = 0.05


class SessionLaunch:
    """One run's launch: its nodes prepared, its sessions connected and released together, its sampling begun."""

    def __init__(self, state: RunState, node_loss: NodeLoss):
        self.state, self.node_loss = state, node_loss

    async def prepare(self) -> None:
        """Every node's control session and run row; the plans, checked on the first node."""
        state = self.state
        params = {**state.plan.control.row(), "client": state.ctx.client}
        loop = asyncio.get_running_loop()

        def notify(message: str) -> None:  # from the step's thread
            loop.call_soon_threadsafe(state.tell, message)
        await self.node_loss.on_nodes(lambda r: r.prepare(params, notify,
                                                          answered=lambda: state.liveness.answered(r.node.name)))
        scans = state.plan.control.scan_workers if state.plan.control.scan_pct else None
        state.plans = await asyncio.to_thread(state.nodes[0].plans, state.ctx.access_path, scans)

    async def open_monitoring(self) -> Monitor:
        state = self.state
        opened, runs = [], []
        for r in state.nodes:
            got = None if r.node.name in state.lost else \
                await self.node_loss.on_node(r.node.name, r.open_monitoring(state.ctx.access_path))
            if got is not None:  # None: lost meanwhile (frozen): not monitored, as a node lost later no longer is
                opened.append(got)
                runs.append(r)
        local = [r.node.info.caps.local for r in runs]
        own_cpu = [r.node.info.caps.has_backend_cpu for r in runs]  # a session's process or thread is its own
        state.monitor = monitor = Monitor(
            [o.probe for o in opened], any(local),
            [s.pid for r, mine in zip(runs, own_cpu) if mine for s in r.sessions if s.pid],
            [pid for o in opened for pid in o.background],
            {d for r, is_local in zip(runs, local) if is_local for d in r.node.devices},
            overhead_pids=[pid for o in opened for pid in o.overhead],
            read_helper_pids=[pid for o in opened for pid in o.read_helpers], liveness=state.liveness,
            time=state.time)
        monitor.lost.update(state.lost)
        state.monitoring = opened
        if len(state.nodes) > 1:  # a node that stops mid-run ends only its own part of the run
            monitor.on_failure = lambda node, error: self.node_loss.may_have_stopped(node, error)
        return monitor

    async def connect_all(self, *, start: bool) -> list[asyncio.Task]:
        """Connect every session and, with start, start it (it waits at the barrier); the sessions'
        tasks, in order."""
        state = self.state
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
        tasks: dict[int, asyncio.Task] = {}
        nodes = {r.node.name: r.node for r in state.nodes}

        async def connect(session: Session) -> None:
            async with gate:
                if session.node in state.lost:
                    return
                node = nodes[session.node]
                got = await self.node_loss.on_node(session.node, session.engine.connect_session(
                    node.conninfo, application_name=session_application_name(state.run_id, session.number),
                    schema_index=session.schema_index, access_path=state.ctx.access_path, info=node.info))
                if got is None:  # its node was lost (frozen) meanwhile
                    return
                session.conn, session.pid = got
                session.state = "connected"
                if start:
                    tasks[session.number] = asyncio.create_task(self.session_main(session))

        results = await asyncio.gather(*(connect(s) for s in state.sessions), return_exceptions=True)
        failures = [r for s, r in zip(state.sessions, results)
                    if isinstance(r, BaseException) and s.node not in state.lost]
        started = [tasks[s.number] for s in state.sessions if s.number in tasks]
        if failures or len(state.lost) == len(state.nodes):
            await self._abort_start(started)
            if not failures:
                raise StoppedBeforeStart()  # the connected sessions wait at the barrier: send them away
            first = failures[0]
            if isinstance(first, DbioError):
                raise DbioError(f"{len(failures)} of {len(state.sessions)} sessions could not connect: "
                                f"{first.message}", first.hint)
            raise first
        return started

    async def session_main(self, session: Session) -> None:
        state = self.state
        try:
            await session.run(state.shared, len(state.plan.bounds_us) + 1)
        except asyncio.CancelledError:
            session.state = "stopped"
        except Exception as exc:
            if state.shared.stop.is_set() and (session.engine.is_cancelled(exc) or state.clock.start is None
                                               or session.number in state.stopping.abandoned):
                session.state = "stopped"  # stopped on purpose, or sent away from a start that never came
                return
            failed_at = state.time.wall() + state.offset
            session.fail(exc, failed_at)
            if session.node in state.lost or await self.node_loss.stopped(session.node, session.error):
                return  # its node's server stopped: the other nodes go on (see NodeLoss.lose)
            elapsed = "" if state.clock.start is None else f" at +{failed_at - state.clock.start:.1f} s"
            where = f"pid {session.pid}, schema {session.schema_index}" + (
                f", node {session.node}" if len(state.nodes) > 1 else "")
            message = f"session {session.number} ({where}) ended{elapsed}: {session.error}"
            state.event("session_failed", message)
            state.tell(message)
            state.status.end(Status.FAILED, message)
            state.stop()

    async def _wait_at_barrier(self, tasks: list[asyncio.Task]) -> None:
        state, time = self.state, self.state.time
        deadline = time.monotonic() + BARRIER_TIMEOUT
        while True:
            # count the waiters on the server only once every session sent its call: with 2,048
            # sessions, each count reads a lock table of thousands of entries
            # a node lost meanwhile (frozen before the start): the others start without it
            mine = [(s, t) for s, t in zip(state.sessions, tasks) if s.node not in state.lost]  # tasks: session order
            if any(not (s.in_call or t.done()) for s, t in mine):
                waiting = 0
            else:
                # a start agreed in advance: a node whose count does not come in time to start is lost (frozen)
                by = None if state.plan.start is None else \
                    time.monotonic() + state.plan.start - agreed_start.RELEASE_AHEAD / 2 - time.wall()
                waiting = sum(n or 0 for n in await self.node_loss.on_nodes(NodeRun.waiting, by=by))
            if waiting >= len(mine) and mine:
                return
            failed = [t for s, t in mine if t.done() and s.node not in state.lost]
            stopped = state.shared.stop.is_set()
            if failed or stopped or time.monotonic() > deadline:
                await self._abort_start(tasks)
                error = state.first_error()
                # a signal while sessions connect ends those already at the barrier without an error: stopped
                if failed and (error or not stopped):
                    raise DbioError(f"a session failed before the start: {error or 'unknown error'}")
                if stopped:
                    raise StoppedBeforeStart()
                raise DbioError(f"only {waiting} of {len(state.sessions)} sessions reached the start barrier "
                                f"in {BARRIER_TIMEOUT:.0f} s", "check the server log and its load")
            await asyncio.sleep(0.02)

    async def _abort_start(self, tasks: list[asyncio.Task]) -> None:
        """Never release a failed start into a run: remove the run first, then let the waiting
        sessions through the barrier, where they find no run and return at once."""
        self.state.stop()
        await self.node_loss.on_nodes(NodeRun.forget)
        if not tasks:  # no session got as far as the barrier
            return
        _, pending = await asyncio.wait(tasks, timeout=10)
        if pending:
            await self.state.stopping.cancel_running()
            for task in pending:
                task.cancel()
            await asyncio.wait(pending, timeout=5)

    async def _until_agreed_start(self, tasks: list[asyncio.Task], start: float) -> None:
        """--start-at: every session waits at the barrier until the start agreed in advance (a signal
        ends the wait); a start that passed while connecting is refused, nothing having run."""
        state = self.state
        delay = start - agreed_start.RELEASE_AHEAD - state.time.wall()
        if delay > 0:
            try:
                await asyncio.wait_for(state.shared.stop.wait(), timeout=delay)
            except asyncio.TimeoutError:
                pass
        late = state.time.wall() - start
        if state.shared.stop.is_set() or late > AGREED_START_SLACK:
            if state.start.start_agreed == "nodes" and not state.shared.stop.is_set():
                await self._abort_start(tasks)
                raise DbioError(f"the sessions were not all at their barriers {late:.1f} s after the start "
                                "chosen for the nodes", "check the servers' load, or give fewer sessions")
            await self._abort_start(tasks)
            if late > AGREED_START_SLACK and not state.stopping.signal:
                raise DbioError(f"the agreed start passed {late:.1f} s before every session was ready",
                                "give a later --start-at (connecting took longer than expected)")
            raise StoppedBeforeStart()

    def agree_start(self) -> None:
        """Several nodes (or a read-only one) start at an instant chosen before any session calls (read-only
        nodes get it in each call); --start-at has chosen it already."""
        state = self.state
        start = state.plan.start
        if start is not None:
            state.start.start_agreed = "start_at"
        elif len(state.nodes) > 1 or any(r.node.read_only for r in state.nodes):
            start = state.time.wall() + agreed_start.start_lead(len(state.sessions))
            state.plan = replace(state.plan, start=start)
            state.start.start_agreed = "nodes"
        if start is None:  # one node, not read-only: its release fixes the start
            return
        plan = state.plan
        for r in state.nodes:
            if r.node.read_only:
                control = agreed_start.read_only_control(plan.control.row(), state.run_id, start=start,
                                                         warmup=plan.warmup, run_time=plan.run_time)
                for session in r.sessions:
                    session.control = control

    async def _release(self, by: float | None) -> tuple[float, float, float | None] | None:
        """One node: released now (its server's clock fixes the start). A start agreed in advance: every
        node at once, a little before it (the loop waits until the start); one that does not take it by
        then is lost."""
        plan = self.state.plan
        if plan.start is None:
            return (await self.node_loss.on_nodes(lambda r: r.release(plan.warmup, plan.run_time, None)))[0]
        times = await self.node_loss.on_nodes(lambda r: r.release(plan.warmup, plan.run_time, plan.start), by=by)
        return next((t for t in times if t is not None), None)  # None: every node lost meanwhile

    def _node_starts(self, offsets: list[tuple[float, float] | None], start: float) -> dict[str, dict[str, Any]]:
        """Each node's clock offset (measured on its control connection) and its start skew."""
        out = {}
        for r, measured in zip(self.state.nodes, offsets):
            offset, uncertainty = measured if measured else (None, None)
            out[r.node.name] = {**agreed_start.node_start(start, offset, r.released_at),
                                "clock_uncertainty_s": uncertainty}
        return out

    async def start_together(self, tasks: list[asyncio.Task], monitor: Monitor) -> dict[str, Any]:
        """Let every session reach the barrier every node holds, release them at one start; the reading taken
        just before it."""
        state, plan, time, facts = self.state, self.state.plan, self.state.time, self.state.start
        await self._wait_at_barrier(tasks)
        if plan.start is not None:
            await self._until_agreed_start(tasks, plan.start)
        # A start agreed in advance: a node that has not answered these steps by then is lost before the start
        # (frozen: it could not start with the others), the others start on time.
        by = None if plan.start is None else time.monotonic() + plan.start + AGREED_START_SLACK - time.wall()
        offsets = await self.node_loss.on_nodes(NodeRun.clock_offset, by=by) if len(state.nodes) > 1 else []
        asked = time.wall()
        partial_after = None if by is None else max(0.0, by - time.monotonic())
        first = await monitor.reading(per_process=plan.warmup == 0, partial_after=partial_after)
        read_at = (asked + time.wall()) / 2
        for r in state.nodes:
            if r.node.name not in state.lost and first["nodes"].get(r.node.name, True) is None:
                self.node_loss.lose(r, "it did not answer before the agreed start: frozen, or unreachable",
                                    ago=state.liveness.quiet_for(r.node.name))
        first = {**first, "nodes": {n: raw for n, raw in first["nodes"].items()
                                    if raw is not None or n not in state.lost}}
        if plan.warmup == 0:
            state.window.begin = first
        if state.shared.stop.is_set():
            await self._abort_start(tasks)
            raise StoppedBeforeStart()
        releasing = time.wall()
        released_times = await self._release(by)
        if released_times is None:
            await self._abort_start(tasks)
            raise StoppedBeforeStart()
        start, window_open, deadline = released_times
        # from here every wait on a node is bounded: the sessions' barrier waits, held on purpose, are over
        state.liveness.restart([r.node.name for r in state.nodes if r.node.name not in state.lost])
        released = time.wall()
        # server clock - client clock: from the release's own clock, or (a start agreed in advance) the
        # first reading's, against the middle of its round trip
        facts.offset = start - released if plan.start is None else (reading_time(first) or read_at) - read_at
        if plan.start is None and not offsets and released - releasing > RELEASE_ANSWER_TRUSTED:
            # the answer came late (a loaded host or network): the start it carries is not "now" on arrival,
            # so the offset is measured on round trips of its own (the sessions have been let go meanwhile)
            offsets = await self.node_loss.on_nodes(NodeRun.clock_offset)
        measured = [o for o in offsets if o]
        if measured:  # several nodes: the first one's (still there), measured on a round trip of its own
            facts.offset = measured[0][0]
        # barriers open ahead of an agreed start (the loop waits for it): late is only what came after it
        facts.released_late = None if facts.start_agreed != "start_at" or plan.start is None else \
            max(0.0, released - plan.start)
        if len(state.nodes) > 1:
            facts.node_starts = self._node_starts(offsets, start)
        state.clock.start, state.clock.window_open, state.clock.deadline = start, window_open, deadline
        state.shared.released.set()
        for session in state.sessions:  # their slices done meanwhile, placed before the first sample reads them
            session.place_unplaced(state.shared)
        to_monotonic = time.monotonic() - (time.wall() + facts.offset)  # server clock -> this host's monotonic
        facts.deadline_at = None if deadline is None else deadline + to_monotonic
        facts.window_open_at = window_open + to_monotonic
        state.event("start", f"{len(state.sessions)} sessions started together")
        return first

    async def first_sample(self, first: dict[str, Any]) -> None:
        """The reading taken just before the start is the series' first point (nothing ran since)."""
        state, start = self.state, self.state.clock.start
        assert start is not None  # released
        await state.write_sample({"k": 0, "t": start, "published_to": start, "phase": Phase.WARMUP.label, **first,
                                  **state.listeners.fields(), "statements": None})

    def begin_sampling(self, monitor: Monitor) -> None:
        """A sample each interval, from the start until the background stops."""
        state, start = self.state, self.state.clock.start
        assert start is not None  # released
        state.background.append(asyncio.create_task(sample_on_grid(
            monitor, state.listeners.fields, state.write_sample, t_start=start, clock_offset=state.offset,
            grid=state.plan.grid, phase=state.sample_label, stop=state.background_stop, counts=state.counts.record,
            published=lambda: state.counts.published_to, on_sample=self.node_loss.on_sample, time=state.time,
            published_by_all=state.published_by_all, nodes_published=state.nodes_published)))
