"""The measured window: opened at the start, or once every session ended its warm-up (past its planned
opening, without the sessions of a node silent since), and closed by the end reading, which is also the
run's last sample.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dbio.run.monitor import SAMPLE_LATE_LIMIT, Monitor
from dbio.run.plan import SLICE_SECONDS
from dbio.run.readings import reading_time
from dbio.run.run_status import Status
from dbio.run.run_state import RunState

# Past the window's planned opening, sessions whose node answered nothing since, nor for this long (not a slice's
# end, not a reading: a live node answers several a second) are not waited for; they join if it answers again.
WINDOW_SILENCE = 1.0


class MeasuredWindow:
    """One run's window: opened (its begin reading) and closed (its end reading, also its last sample)."""

    def __init__(self, state: RunState):
        self.state = state

    async def open(self, tasks: list[asyncio.Task], monitor: Monitor) -> bool:
        """Open the measured window: at the start, or once every session ended its warm-up; whether it opened."""
        state, window = self.state, self.state.window
        if state.plan.warmup == 0:
            window.opened = state.clock.start
            self._opened()
            return True
        unwaited = await self._wait_for_window(tasks)
        if self._window_can_open():
            if unwaited:
                state.event("window_without", f"the window opened without the sessions of {', '.join(sorted(unwaited))}"
                                              " (it answered nothing since its planned opening)")
                # their counters: the last reading they answered (silent since: nothing to add), unless they answer now
                begin = await self._reading(monitor, per_process=True, partial_after=SAMPLE_LATE_LIMIT / 2)
                window.begin = {**begin, "nodes": {name: raw if raw is not None or name not in unwaited
                                                   else monitor.last.get(name) for name, raw in begin["nodes"].items()}}
            else:
                window.begin = await self._reading(monitor, per_process=True)
            window.opened = reading_time(window.begin) or state.time.wall() + state.offset
            self._opened()
            return True
        if not state.shared.stop.is_set():  # every session done before the window
            state.status.end(Status.FAILED, self._ended_in_warmup())
        return False

    def _ended_in_warmup(self) -> str:
        plan = self.state.plan
        why = f"every session ended during the {plan.warmup:g} s warm-up: nothing was measured"
        if plan.work_loop and plan.work_loop_scope == "session":
            why += (f" (work_loop = {plan.work_loop:,} counts the warm-up's iterations: work_loop_scope = "
                    "session); give a larger work_loop, a shorter warmup, or work_loop_scope = window")
        return why

    async def _wait_for_window(self, tasks: list[asyncio.Task]) -> set[str]:
        """Until every running session reached the window's opening; past it, not for the sessions of a node
        silent since it (_silent_at_window_open; frozen: lost seconds later; its sessions join if it answers):
        those nodes, whose sessions were not waited for."""
        shared = self.state.shared
        while not shared.stop.is_set():
            running = [s for s in self.state.sessions if s.state == "running"]
            if shared.arrived >= len(running) or all(t.done() for t in tasks):
                return set()
            silent = self._silent_at_window_open()
            waited = [s for s in running if s.node not in silent]
            if silent and waited and all(s.arrived for s in waited):
                return silent
            shared.arrival.clear()
            try:
                await asyncio.wait_for(shared.arrival.wait(), timeout=0.1 if self.state.start.window_open_at else 0.5)
            except asyncio.TimeoutError:
                pass
        return set()

    def _silent_at_window_open(self) -> set[str]:
        """Past the window's planned opening: the nodes that answered nothing (no slice, no reading) since it,
        nor in the last WINDOW_SILENCE seconds."""
        state = self.state
        now, planned = state.time.monotonic(), state.start.window_open_at
        if planned is None or now < planned:
            return set()
        heard = state.liveness.heard
        return {r.node.name for r in state.nodes if r.node.name not in state.lost
                and heard.get(r.node.name, float("-inf")) < min(planned, now - WINDOW_SILENCE)}

    def _window_can_open(self) -> bool:
        return not self.state.shared.stop.is_set() and any(s.state == "running" for s in self.state.sessions)

    def _opened(self) -> None:
        self.state.event("window_open", "measured window opened")
        begin = self.state.window.begin
        if begin is not None:  # the window's first reading: its counters are where the figures start
            self.state.ctx.observer.second(begin)

    async def end_of_answering_nodes(self, tasks: list[asyncio.Task],
                                     monitor: Monitor) -> tuple[asyncio.Task, set[str]] | None:
        """An end reading begun when, past the deadline, the only sessions still running are on nodes that
        answered nothing since it (frozen, such a node is lost within seconds), and those nodes: so that the
        window of the others ends with their work, not seconds later. Not used unless those nodes were lost
        (close). Begun again when those nodes change: a live node whose last slice's answer came late (a loaded
        host) is first among them, then done, and the reading begun with it would not do (seen: the end reading
        came at the frozen node's loss, a 10.57 s window for 4 s). Waits for every session (after a stop, the
        drain does); None when there is no such reading."""
        state, deadline = self.state, self.state.start.deadline_at
        if deadline is None or state.window.opened is None:
            return None
        early: tuple[asyncio.Task, set[str]] | None = None
        await self._until_deadline(tasks, deadline)
        while not state.shared.stop.is_set():
            running = [(s, t) for s, t in zip(state.sessions, tasks) if not t.done()]
            if not running:
                return early
            quiet = {s.node for s, _ in running}
            heard = state.liveness.heard
            if state.time.monotonic() >= deadline and (early is None or early[1] != quiet) and \
                    all(heard.get(node, float("-inf")) < deadline for node in quiet):
                reading = self._reading(monitor, per_process=True, partial_after=SAMPLE_LATE_LIMIT / 2)
                early = asyncio.ensure_future(reading), quiet
            await asyncio.wait([t for _, t in running], timeout=0.05)
        return early

    async def _until_deadline(self, tasks: list[asyncio.Task], deadline: float) -> None:
        """Until the deadline, a stop or every session's end, without waking before (no end reading is begun
        before the deadline): one wait, where looking twenty times a second cost dbio's client its CPU."""
        stop = self.state.shared.stop
        stopped = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set():
                running = [t for t in tasks if not t.done()]
                left = deadline - self.state.time.monotonic()
                if not running or left <= 0:
                    return
                await asyncio.wait([*running, stopped], timeout=left, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()

    async def close(self, monitor: Monitor, early: tuple[asyncio.Task, set[str]] | None = None) -> None:
        """The end reading, which is also the last per-second sample: it holds the final second's flush. Taken
        early (end_of_answering_nodes) when the nodes whose sessions outlasted the deadline were lost since:
        their entries are then their last readings, as in every reading after a node's loss."""
        state, lost = self.state, self.state.lost
        start = state.clock.start
        if state.window.opened is None or start is None:  # no window opened (it opens at the start or after)
            return
        end = None
        if early is not None:
            reading, quiet = await early[0], early[1]  # bounded: each node answers, or is lost
            if reading is not None and quiet <= set(lost):
                end = {**reading, "nodes": {name: monitor.last.get(name) if name in lost else raw
                                            for name, raw in reading["nodes"].items()}, "lost": sorted(lost)}
        if end is None:
            end = await self._reading(monitor, per_process=True)
        here = state.time.wall()  # its /proc (the devices) read by then, every session drained
        answered, by_all = here + state.offset, state.published_by_all(here) + state.offset
        state.window.end = end
        window_end = reading_time(end) or state.time.wall() + state.offset
        covered = [node["covered_to"] for node in lost.values() if node["covered_to"] is not None]
        if len(lost) == len(state.nodes) and covered:  # no node left: the figures end where the nodes' did
            window_end = max(covered)
        state.window.closed = window_end
        boundary = int(round(window_end - start))  # the last second any session published
        last = state.plan.grid.key(boundary)
        record = {"k": last, "covers_to": boundary, "t": window_end, "published_to": state.counts.published_to,
                  "answered": answered, "published_by_all": by_all,
                  "phase": state.sample_label(window_end - SLICE_SECONDS / 2), **end, **state.listeners.fields(),
                  **state.counts.record(last, final=True), "final": True}
        state.ctx.observer.second(record)  # the window's last reading: where the figures end
        await state.write_sample(record)

    async def _reading(self, monitor: Monitor, *, per_process: bool,
                       partial_after: float | None = None) -> dict[str, Any]:
        """A reading of every node, bounded after a signal; {"nodes": {}} when none came."""
        conns = [(r.engine, r.monitor_conn) for r in self.state.nodes]
        reading = monitor.reading(per_process=per_process, partial_after=partial_after)
        return await self.state.stopping.bounded(reading, conns) or {"nodes": {}}
