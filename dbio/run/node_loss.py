"""A node lost mid-run (several nodes) or before the start: its server stopped (a session's failure, checked
with a new connection, or a reading that failed) or it answered nothing for liveness.SILENT_AFTER seconds
(frozen). Its connections are abandoned, its last reading stands for it, its slices after that reading
are not counted; the other nodes finish the window. The calls on nodes (on_nodes, on_node) end at its
loss. The nodes lost are the run's record (RunState.lost); NodeLoss keeps the checks and calls under way.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, Callable

from dbio.run.nodes import NodeRun, in_threads
from dbio.run.plan import SLICE_SECONDS
from dbio.run.run_status import Status
from dbio.run.run_state import RunState
from dbio.run.stopping import ABANDONED_WAIT

NODE_CHECK_SECONDS = 3.0  # a node whose server does not take a new connection this fast has stopped
AGREED_START_SLACK = 0.5  # seconds after an agreed start by which the sessions must be released


class NodeLoss:
    """The nodes of one run lost, and its calls on nodes, which end at a node's loss."""

    def __init__(self, state: RunState):
        self.state = state
        self.checks: dict[str, asyncio.Task] = {}  # one check per node that may have stopped
        self.watch_task: asyncio.Task | None = None  # loses a node that stops answering (watch)
        self.node_calls: dict[str, set[asyncio.Task]] = {}  # each node's calls in flight that its loss cancels

    def begin_watching(self) -> None:
        # watched from the first call: a node frozen before the start is lost as one frozen later (calls held at
        # its barrier on purpose count from its release: liveness.asking; a standby waiting for the loop answers
        # each of its checks: Liveness.answered)
        self.watch_task = asyncio.create_task(self.watch())

    def end_watching(self) -> None:
        if self.watch_task is not None:
            self.watch_task.cancel()

    async def on_nodes(self, step: Callable[[NodeRun], Any], runs: list[NodeRun] | None = None,
                       by: float | None = None) -> list[Any]:
        """A sync step on every node (or those of runs) at once, each in a thread (nodes.in_threads), in their
        order; None for a node lost (before or during the step: its error is its loss). by (monotonic): a node
        whose step has not answered by then is lost."""
        runs = self.state.nodes if runs is None else runs
        live = [r for r in runs if r.node.name not in self.state.lost]
        tasks = {r.node.name: asyncio.ensure_future(in_threads([r], step, self.state.liveness)) for r in live}
        if by is not None and tasks:
            # a step begun late (by passed) still waits a little: a node answering in milliseconds is not lost
            await asyncio.wait(tasks.values(), timeout=max(AGREED_START_SLACK, by - self.state.time.monotonic()))
            for r in live:
                if not tasks[r.node.name].done() and r.node.name not in self.state.lost:
                    self.lose(r, "it did not answer before the agreed start: frozen, or unreachable",
                              ago=self.state.liveness.quiet_for(r.node.name))
        out = []
        for r in runs:
            task = tasks.get(r.node.name)
            while task is not None and not task.done() and r.node.name not in self.state.lost:
                await asyncio.wait([task], timeout=0.25)  # until it answers, or its node is lost (the watch)
            if task is not None and not task.done():  # lost: its abandoned connection ends the call, unless it
                await asyncio.wait([task], timeout=ABANDONED_WAIT)  # had none yet (a connect): not waited for
            try:
                out.append(None if task is None or not task.done() else task.result()[0])
            except Exception:
                if r.node.name not in self.state.lost:
                    raise
                out.append(None)
        return out

    async def on_node(self, node: str, call: Any) -> Any:
        """An async call on a node, cancelled if the node is lost meanwhile (None then)."""
        task = asyncio.ensure_future(call)
        self.node_calls.setdefault(node, set()).add(task)
        try:
            with self.state.liveness.asking(node):
                return await task
        except (asyncio.CancelledError, Exception):
            if node in self.state.lost:
                return None
            raise
        finally:
            self.node_calls[node].discard(task)

    def may_have_stopped(self, node: str, error: str) -> None:
        if self.state.clock.start is not None and node not in self.checks:
            self.checks[node] = asyncio.get_running_loop().create_task(self._check(node, error))

    async def stopped(self, node: str, error: str | None) -> bool:
        """Whether a session's failure is its node's server stopping (then that node is lost, the run goes
        on); a run of one node, a failure before the start or a server that still answers: False."""
        if len(self.state.nodes) < 2 or self.state.clock.start is None or self.state.shared.stop.is_set():
            return False
        self.may_have_stopped(node, error or "a session ended")
        return await asyncio.shield(self.checks[node])

    async def _check(self, node: str, error: str) -> bool:
        run = next(r for r in self.state.nodes if r.node.name == node)
        try:
            conn = await asyncio.wait_for(run.engine.aconnect(run.node.conninfo, application_name="dbio:check"),
                                          NODE_CHECK_SECONDS)
        except Exception:
            self.lose(run, error)
            return True
        await run.engine.aclose(conn)
        self.checks.pop(node, None)  # it answers: a later failure is checked again
        return False

    def lose(self, run: NodeRun, error: str, ago: float = 0.0) -> None:
        """Its server stopped (ago seconds before now: a silent one when it last answered): no more readings
        of it (each reading keeps its last, so its figures end there and the totals are partial), its
        sessions are over; the other nodes finish the window."""
        state, name = self.state, run.node.name
        t = state.time.wall() + state.offset - ago
        last = state.monitor.last.get(name) if state.monitor else None
        start = state.clock.start if state.clock.start is not None else state.plan.start  # agreed in advance
        since = None if start is None else round(t - start, 3)
        covered = None if not last else self._covered_to(float(last["t"]))
        state.lost[name] = {"t": t, "since_start": since, "reason": error, "covered_to": covered}
        if state.monitor is not None:
            state.monitor.lost.add(name)
        self.abandon(run)  # whatever still waits on it ends now, and no more of its work is counted
        when = self._when(since)
        several = len(state.nodes) > 1
        message = f"node {name} stopped{when} ({error}): the other nodes finish the window; its " \
                  "figures end at its last reading and the totals are partial" if several else \
            f"the server stopped{when} ({error}): the figures end at its last reading"
        state.event("node_lost", message)
        state.tell(message)
        if len(state.lost) == len(state.nodes):
            state.status.end(Status.FAILED, "every node's server stopped" if several else message)
            state.stop()

    def _when(self, since: float | None) -> str:
        """When a node stopped, in words before the window (since: seconds after the start)."""
        if since is None or since < 0:
            return " before the start"
        if since < self.state.plan.warmup:
            return " during the warm-up"
        return f" at +{since:.1f} s"

    async def watch(self) -> None:
        """A node that answers nothing for liveness.SILENT_AFTER seconds while dbio waits on it is lost, whatever
        the wait (a slice, a reading, a flush, the run's row): its connections are abandoned, which ends
        every wait on it at once."""
        while True:
            for name in self.state.liveness.silent():
                run = next(r for r in self.state.nodes if r.node.name == name)
                if name not in self.state.lost:
                    quiet = self.state.liveness.quiet_for(name)
                    self.lose(run, f"it answered nothing for {quiet:.0f} s: frozen, or unreachable", ago=quiet)
                else:
                    self.abandon(run)  # a call made on it since
            await asyncio.sleep(0.25)

    def _covered_to(self, t: float) -> float | None:
        """The sessions publish their counters at each slice's end, on the grid: a node's reading at t holds
        its work up to the last slice boundary before it."""
        start = self.state.clock.start
        if start is None:
            return None
        return start + math.floor((t - start) / SLICE_SECONDS) * SLICE_SECONDS

    def uncount_lost(self) -> None:
        """A lost node's figures end at its last reading: its slices that ended after it are not counted."""
        for name, lost in self.state.lost.items():
            if lost["covered_to"] is None:
                continue
            for session in (s for s in self.state.sessions if s.node == name):
                for result in session.uncount_after(lost["covered_to"]):
                    self.state.counts.totals.remove(result)

    def abandon(self, run: NodeRun) -> None:
        conns = [s.conn for s in run.sessions if s.conn is not None]
        conns += [*run.monitoring_connections(), *([run.control] if run.control is not None else [])]
        self.state.stopping.abandon([(run.engine, conn) for conn in conns])
        for task in self.node_calls.get(run.node.name, ()):  # a connection still being made: given up
            task.cancel()

    def on_sample(self, sample: dict[str, Any]) -> None:
        """A sample was taken: the slices its readings hold are settled (a node lost later keeps them)."""
        for name, raw in (sample.get("nodes") or {}).items():
            covered = None if not raw or name in self.state.lost else self._covered_to(float(raw["t"]))
            if covered is not None:
                for session in (s for s in self.state.sessions if s.node == name):
                    session.settle(covered)
        self.state.ctx.observer.second(sample)
