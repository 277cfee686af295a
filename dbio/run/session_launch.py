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
from dbio.run.monitor import Monitor, WaitSampler, sample_on_grid
from dbio.run.node_loss import AGREED_START_SLACK
from dbio.run.nodes import NodeRun
from dbio.run.readings import reading_time
from dbio.run.run_state import StoppedBeforeStart, Watching
from dbio.run.sessions import Session
from dbio.run.stop_and_clean_up import StopAndCleanUp

CONNECT_CONCURRENCY = 64  # sessions connecting at once: fast, without a connection storm
BARRIER_TIMEOUT = 120.0
# A release answered within this (seconds) dates the start well enough: the offset it gives is off by at most
# this, a twentieth of a slice. A slower answer's offset is measured again on round trips of its own.
RELEASE_ANSWER_TRUSTED = 0.05


class SessionLaunch(StopAndCleanUp):
    async def _prepare(self) -> None:
        """Every node's control session and run row; the plans, checked on the first node."""
        params = {**self.plan.control, "client": self.ctx.client}
        await self._on_nodes(lambda r: r.prepare(params, self.ctx.observer.event,
                                                 answered=lambda: self.shared.liveness.answered(r.node.name)))
        scans = self.plan.control["scan_workers"] if self.plan.control["scan_pct"] else None
        self.plans = await asyncio.to_thread(self.nodes[0].plans, self.ctx.access_path, scans)

    async def _open_monitoring(self) -> Watching:
        opened, runs = [], []
        for r in self.nodes:
            got = None if r.node.name in self.lost else \
                await self._on_node(r.node.name, r.open_monitoring(self.ctx.access_path))
            if got is not None:  # None: lost meanwhile (frozen): not monitored, as a node lost later no longer is
                opened.append(got)
                runs.append(r)
        local = [r.node.info.caps.local for r in runs]
        own_cpu = [r.node.info.caps.has_backend_cpu for r in runs]  # a session's process or thread is its own
        self.monitor = monitor = Monitor(
            [o.probe for o in opened], any(local),
            [s.pid for r, mine in zip(runs, own_cpu) if mine for s in r.sessions if s.pid],
            [pid for o in opened for pid in o.background],
            {d for r, is_local in zip(runs, local) if is_local for d in r.node.devices},
            overhead_pids=[pid for o in opened for pid in o.overhead],
            read_helper_pids=[pid for o in opened for pid in o.read_helpers], liveness=self.shared.liveness,
            time=self.time)
        self.waits = waits = WaitSampler([o.wait_target for o in opened], self.ctx.wait_interval,
                                         lost=monitor.lost, liveness=self.shared.liveness, time=self.time)
        monitor.lost.update(self.lost)
        if len(self.nodes) > 1:  # a node that stops mid-run ends only its own part of the run
            monitor.on_failure = lambda node, error: self._node_may_have_stopped(node, error)
        return Watching(monitor, waits)

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
                raise StoppedBeforeStart()  # the connected sessions wait at the barrier: send them away
            first = failures[0]
            if isinstance(first, DbioError):
                raise DbioError(f"{len(failures)} of {len(self.sessions)} sessions could not connect: {first.message}",
                                first.hint)
            raise first
        return started

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
            failed_at = self.time.wall() + self.offset
            session.fail(exc, failed_at)
            if session.node in self.lost or await self._node_stopped(session.node, session.error):
                return  # its node's server stopped: the other nodes go on (see _lose_node)
            elapsed = "" if self.clock.start is None else f" at +{failed_at - self.clock.start:.1f} s"
            where = f"pid {session.pid}, schema {session.schema_index}" + (
                f", node {session.node}" if len(self.nodes) > 1 else "")
            message = f"session {session.number} ({where}) ended{elapsed}: {session.error}"
            self._event("session_failed", message)
            self.ctx.observer.event(message)
            if self.status == "complete":
                self.status, self.reason = "failed", message
            self._stop()

    async def _wait_at_barrier(self, tasks: list[asyncio.Task]) -> None:
        deadline = self.time.monotonic() + BARRIER_TIMEOUT
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
                    self.time.monotonic() + self.plan.start - agreed_start.RELEASE_AHEAD / 2 - self.time.wall()
                waiting = sum(n or 0 for n in await self._on_nodes(NodeRun.waiting, by=by))
            if waiting >= len(mine) and mine:
                return
            failed = [t for s, t in mine if t.done() and s.node not in self.lost]
            stopped = self.shared.stop.is_set()
            if failed or stopped or self.time.monotonic() > deadline:
                await self._abort_start(tasks)
                error = self._first_error()
                # a signal while sessions connect ends those already at the barrier without an error: stopped
                if failed and (error or not stopped):
                    raise DbioError(f"a session failed before the start: {error or 'unknown error'}")
                if stopped:
                    raise StoppedBeforeStart()
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

    async def _until_agreed_start(self, tasks: list[asyncio.Task], start: float) -> None:
        """--start-at: every session waits at the barrier until the start agreed in advance (a signal
        ends the wait); a start that passed while connecting is refused, nothing having run."""
        delay = start - agreed_start.RELEASE_AHEAD - self.time.wall()
        if delay > 0:
            try:
                await asyncio.wait_for(self.shared.stop.wait(), timeout=delay)
            except asyncio.TimeoutError:
                pass
        late = self.time.wall() - start
        if self.shared.stop.is_set() or late > AGREED_START_SLACK:
            if self.start_agreed == "nodes" and not self.shared.stop.is_set():
                await self._abort_start(tasks)
                raise DbioError(f"the sessions were not all at their barriers {late:.1f} s after the start "
                                "chosen for the nodes", "check the servers' load, or give fewer sessions")
            await self._abort_start(tasks)
            if late > AGREED_START_SLACK and not self.stopping.signal:
                raise DbioError(f"the agreed start passed {late:.1f} s before every session was ready",
                                "give a later --start-at (connecting took longer than expected)")
            raise StoppedBeforeStart()

    def _agree_start(self) -> None:
        """Several nodes (or a read-only one) start at an instant chosen before any session calls (read-only
        nodes get it in each call); --start-at has chosen it already."""
        start = self.plan.start
        if start is not None:
            self.start_agreed = "start_at"
        elif len(self.nodes) > 1 or any(r.node.read_only for r in self.nodes):
            start = self.time.wall() + agreed_start.start_lead(len(self.sessions))
            self.plan = replace(self.plan, start=start)
            self.start_agreed = "nodes"
        if start is None:  # one node, not read-only: its release fixes the start
            return
        for r in self.nodes:
            if r.node.read_only:
                control = agreed_start.read_only_control(self.plan.control, self.run_id, start=start,
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

    async def _start_together(self, tasks: list[asyncio.Task], watching: Watching) -> None:
        """Let every session reach the barrier every node holds, release them at one start."""
        await self._wait_at_barrier(tasks)
        if self.plan.start is not None:
            await self._until_agreed_start(tasks, self.plan.start)
        # A start agreed in advance: a node that has not answered these steps by then is lost before the start
        # (frozen: it could not start with the others), the others start on time.
        by = None if self.plan.start is None else \
            self.time.monotonic() + self.plan.start + AGREED_START_SLACK - self.time.wall()
        offsets = await self._on_nodes(NodeRun.clock_offset, by=by) if len(self.nodes) > 1 else []
        asked = self.time.wall()
        partial_after = None if by is None else max(0.0, by - self.time.monotonic())
        first = await watching.monitor.reading(per_process=self.plan.warmup == 0, partial_after=partial_after)
        read_at = (asked + self.time.wall()) / 2
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
            raise StoppedBeforeStart()
        releasing = self.time.wall()
        released_times = await self._release(by)
        if released_times is None:
            await self._abort_start(tasks)
            raise StoppedBeforeStart()
        start, window_open, deadline = released_times
        # from here every wait on a node is bounded: the sessions' barrier waits, held on purpose, are over
        self.shared.liveness.restart([r.node.name for r in self.nodes if r.node.name not in self.lost])
        released = self.time.wall()
        # server clock - client clock: from the release's own clock, or (a start agreed in advance) the
        # first reading's, against the middle of its round trip
        self.offset = start - released if self.plan.start is None else (reading_time(first) or read_at) - read_at
        if self.plan.start is None and not offsets and released - releasing > RELEASE_ANSWER_TRUSTED:
            # the answer came late (a loaded host or network): the start it carries is not "now" on arrival,
            # so the offset is measured on round trips of its own (the sessions have been let go meanwhile)
            offsets = await self._on_nodes(NodeRun.clock_offset)
        measured = [o for o in offsets if o]
        if measured:  # several nodes: the first one's (still there), measured on a round trip of its own
            self.offset = measured[0][0]
        # barriers open ahead of an agreed start (the loop waits for it): late is only what came after it
        self.released_late = None if self.start_agreed != "start_at" or self.plan.start is None else \
            max(0.0, released - self.plan.start)
        if len(self.nodes) > 1:
            self.node_starts = self._node_starts(offsets, start)
        self.clock.start, self.clock.window_open, self.clock.deadline = start, window_open, deadline
        self.shared.released.set()
        for session in self.sessions:  # their slices done meanwhile, placed before the first sample reads them
            session.place_unplaced(self.shared)
        to_monotonic = self.time.monotonic() - (self.time.wall() + self.offset)  # server clock -> this host's monotonic
        self.deadline_at = None if deadline is None else deadline + to_monotonic
        self.window_open_at = window_open + to_monotonic
        self._event("start", f"{len(self.sessions)} sessions started together")
        self.ctx.observer.phase("warming up" if self.plan.warmup else "measuring")
        self.background.append(asyncio.create_task(watching.waits.run(self.sampler_stop)))
        # The reading taken just before the start is the series' first point (nothing ran since).
        await asyncio.to_thread(self.ctx.samples.write, {"k": 0, "t": start, "published_to": start,
                                                         "phase": "warmup", **first, "waits": {}, "statements": None})
        if self.ctx.room_paths:
            self.background.append(asyncio.create_task(self._guard_room()))
        for r in self.nodes:
            # a node lost before the start has no probe to run (nor one of an engine without it)
            if r.node.name not in self.lost and r.read_probe is not None:
                self.background.append(asyncio.create_task(r.read_probe.run(lambda: self.probing, self.sampler_stop)))
        self.background.append(asyncio.create_task(sample_on_grid(
            watching.monitor, watching.waits, self.ctx.samples, t_start=start, clock_offset=self.offset,
            grid=self.plan.grid, phase=self._phase_at, stop=self.sampler_stop, counts=self.counts.record,
            published=lambda: self.counts.published_to, on_sample=self._on_sample, time=self.time,
            published_by_all=self.published_by_all)))
