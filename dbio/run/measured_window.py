"""The measured window: opened at the start, or once every session ended its warm-up (past its planned
opening, without the sessions of a node silent since), and closed by the end reading, which is also the
run's last sample.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dbio.run.monitor import SAMPLE_LATE_LIMIT, Monitor, WaitSampler
from dbio.run.plan import SLICE_SECONDS
from dbio.run.readings import reading_time
from dbio.run.run_state import RunState, Watching

# Past the window's planned opening, sessions whose node answered nothing since, nor for this long (not a slice's
# end, not a reading: a live node answers several a second) are not waited for; they join if it answers again.
WINDOW_SILENCE = 1.0


class MeasuredWindow(RunState):
    async def _measure(self, tasks: list[asyncio.Task], watching: Watching) -> None:
        """Open the measured window: at the start, or once every session ended its warm-up."""
        if self.plan.warmup == 0:
            self.window_start = self.clock.start
            self._open_window(watching.waits)
            return
        await self._wait_for_window(tasks)
        if self._window_can_open():
            if self.unwaited:
                self._event("window_without",
                            f"the window opened without the sessions of {', '.join(sorted(self.unwaited))}"
                            " (it answered nothing since its planned opening)")
                # their counters: the last reading they answered (silent since: nothing to add), unless they answer now
                begin = await self._reading(watching.monitor, per_process=True, partial_after=SAMPLE_LATE_LIMIT / 2)
                self.begin = {**begin, "nodes": {name: raw if raw is not None or name not in self.unwaited
                                                 else watching.monitor.last.get(name)
                                                 for name, raw in begin["nodes"].items()}}
            else:
                self.begin = await self._reading(watching.monitor, per_process=True)
            self.window_start = reading_time(self.begin) or self.time.wall() + self.offset
            self._open_window(watching.waits)
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
        now = self.time.monotonic()
        if self.window_open_at is None or now < self.window_open_at:
            return set()
        heard = self.shared.liveness.heard
        return {r.node.name for r in self.nodes if r.node.name not in self.lost
                and heard.get(r.node.name, float("-inf")) < min(self.window_open_at, now - WINDOW_SILENCE)}

    def _window_can_open(self) -> bool:
        return not self.shared.stop.is_set() and any(s.state == "running" for s in self.sessions)

    def _open_window(self, waits: WaitSampler) -> None:
        self.in_window = True
        self.probing = True
        waits.in_window = True
        self._event("window_open", "measured window opened")
        if self.begin is not None:  # the window's first reading: its counters are where the figures start
            self.ctx.observer.second(self.begin)
        if self.ctx.on_window is not None:
            self.ctx.on_window("open")

    async def _end_of_answering_nodes(self, tasks: list[asyncio.Task],
                                      watching: Watching) -> tuple[asyncio.Task, set[str]] | None:
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
            if self.time.monotonic() >= self.deadline_at and (early is None or early[1] != quiet) and \
                    all(heard.get(node, float("-inf")) < self.deadline_at for node in quiet):
                reading = self._reading(watching.monitor, per_process=True, partial_after=SAMPLE_LATE_LIMIT / 2)
                early = asyncio.ensure_future(reading), quiet
            await asyncio.wait([t for _, t in running], timeout=0.05)
        return early

    async def _close_window(self, watching: Watching, early: tuple[asyncio.Task, set[str]] | None = None) -> None:
        """The end reading, which is also the last per-second sample: it holds the final second's flush. Taken
        early (_end_of_answering_nodes) when the nodes whose sessions outlasted the deadline were lost since:
        their entries are then their last readings, as in every reading after a node's loss."""
        self.probing = False
        start = self.clock.start
        if self.window_start is None or start is None:  # no window opened (it opens at the start or after)
            return
        monitor, waits = watching.monitor, watching.waits
        end = None
        if early is not None:
            reading, quiet = await early[0], early[1]  # bounded: each node answers, or is lost
            if reading is not None and quiet <= set(self.lost):
                end = {**reading, "nodes": {name: monitor.last.get(name) if name in self.lost else raw
                                            for name, raw in reading["nodes"].items()}, "lost": sorted(self.lost)}
        if end is None:
            end = await self._reading(monitor, per_process=True)
        here = self.time.wall()  # its /proc (the devices) read by then, every session drained
        answered, by_all = here + self.offset, self.published_by_all(here) + self.offset
        self.end = end
        window_end = reading_time(end) or self.time.wall() + self.offset
        covered = [lost["covered_to"] for lost in self.lost.values() if lost["covered_to"] is not None]
        if len(self.lost) == len(self.nodes) and covered:  # no node left: the figures end where the nodes' did
            window_end = max(covered)
        self.window_end = window_end
        if self.ctx.on_window is not None:
            self.ctx.on_window("close")
        waits.in_window = False
        boundary = int(round(window_end - start))  # the last second any session published
        last = self.plan.grid.key(boundary)
        record = {"k": last, "covers_to": boundary, "t": window_end, "published_to": self.counts.published_to,
                  "answered": answered, "published_by_all": by_all,
                  "phase": self._phase_at(window_end - SLICE_SECONDS / 2), **end, "waits": waits.take(),
                  **self.counts.record(last, final=True), "final": True}
        self.ctx.observer.second(record)  # the window's last reading: where the figures end
        await asyncio.to_thread(self.ctx.samples.write, record)

    async def _reading(self, monitor: Monitor, *, per_process: bool,
                       partial_after: float | None = None) -> dict[str, Any]:
        """A reading of every node, bounded after a signal; {"nodes": {}} when none came."""
        conns = [(r.engine, r.monitor_conn) for r in self.nodes]
        return await self.stopping.bounded(monitor.reading(per_process=per_process, partial_after=partial_after),
                                           conns) or {"nodes": {}}
