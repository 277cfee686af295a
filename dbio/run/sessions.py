"""One dbio session: a connection that runs the work loop slice after slice."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from dbio.engines.base import Engine, SliceRequest, SliceResult
from dbio.run.liveness import Liveness
from dbio.run.slice_totals import Tally

EPSILON = 1e-6
RECENT_SLICES = 16  # measured slices a session keeps until a reading of its node holds their work


@dataclass
class Clock:
    """The run's timeline, set when the barrier is released (server clock, epoch seconds)."""

    start: float | None = None
    window_open: float | None = None
    deadline: float | None = None
    warmup: float = 0.0


@dataclass
class Shared:
    """What the coordinator and all sessions share."""

    run_id: int
    work_loop: int
    clock: Clock
    stop: asyncio.Event = field(default_factory=asyncio.Event)  # no new slices
    released: asyncio.Event = field(default_factory=asyncio.Event)  # the clock set: the release's answer came
    window_opened: asyncio.Event = field(default_factory=asyncio.Event)  # begin snapshot taken
    arrived: int = 0  # sessions that reached the window's start
    arrival: asyncio.Event = field(default_factory=asyncio.Event)
    on_slice: Any = None  # callable(session, result, measured)
    liveness: Liveness = field(default_factory=Liveness)  # when each node last answered (a silent one is lost)
    work_loop_counts_warmup: bool = False  # work_loop bounds each session's iterations from its start (SLOB's)


@dataclass
class Session:
    number: int  # 1-based
    schema_index: int
    engine: Engine  # the engine of the node it runs on
    node: str  # that node's name
    conn: Any = None
    pid: int | None = None
    state: str = "new"  # new | connected | running | done | stopped | failed
    error: str | None = None
    failed_at: float | None = None  # server epoch (approximate: client clock + offset)
    measured: Tally | None = None
    warmup_iterations: int = 0
    iterations: int = 0  # all slices, for the loop's exact UPDATE/scan patterns
    selects: int = 0
    in_call: bool = False
    arrived: bool = False  # it reached the window's opening (its warm-up done), waiting for it to open
    slices: int = 0
    # since when (this host's clock) its work is not all in its server's counters: set as a call is sent, cleared
    # as its result comes (the server publishes a slice's counters before it answers) or a flush after a cancel
    unpublished_since: float | None = None
    control: dict[str, Any] | None = None  # the run's control, carried by a read-only node's sessions
    # its measured slices no reading of its node has held yet: if the node is lost, its figures end at its
    # last reading, and these are taken back out (uncount_after)
    recent: deque = field(default_factory=lambda: deque(maxlen=RECENT_SLICES))
    # slices done before the release's answer told dbio the start (no warm-up): placed once it has (place_unplaced)
    unplaced: list[SliceResult] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        counts = self.measured.counts() if self.measured else {}
        return {"session": self.number, "node": self.node, "schema": self.schema_index, "pid": self.pid,
                "state": self.state, "error": self.error, "warmup_iterations": self.warmup_iterations, **counts}

    async def run(self, shared: Shared, buckets: int) -> None:
        self.measured = Tally(buckets)
        self.state = "running"
        clock = shared.clock
        previous_end: float | None = None
        think_left = 0.0
        due: float | None = None
        arrived = False
        while not shared.stop.is_set():
            if previous_end is None or clock.warmup == 0:
                measured = clock.warmup == 0  # without warm-up, every slice is measured: no need of the start
            else:
                assert clock.window_open is not None  # set before its first slice was placed (_until_released)
                measured = previous_end >= clock.window_open - EPSILON
            if measured and not arrived and clock.warmup > 0:
                arrived = self.arrived = True
                shared.arrived += 1
                shared.arrival.set()
                await shared.window_opened.wait()
                if shared.stop.is_set():
                    break
            limit = None
            if shared.work_loop and shared.work_loop_counts_warmup:
                limit = shared.work_loop - self.iterations
            elif shared.work_loop and measured:
                limit = shared.work_loop - self.measured.iterations
            self.in_call = True
            if self.unpublished_since is None:  # a cancelled call's work stays unpublished until a flush
                self.unpublished_since = shared.liveness.time.wall()
            try:
                # the first call waits at the start barrier, held on purpose: no silence until it opens
                with shared.liveness.asking(self.node, held=previous_end is None):
                    result: SliceResult = await self.engine.call_slice(self.conn, SliceRequest(
                        run_id=shared.run_id, session=self.number, barrier=previous_end is None,
                        iterations_before=self.iterations, selects_before=self.selects, max_iterations=limit,
                        think_left=think_left, control=self.control, due=due))
            finally:
                self.in_call = False
            self.slices += 1
            self.unpublished_since = None
            self.iterations += result.iterations
            self.selects += result.selects + result.scans
            if measured:
                self.measured.add(result)
                self.recent.append(result)
            else:
                self.warmup_iterations += result.iterations
            # The sessions go as the server releases them, and dbio learns the start from the release's answer,
            # which a loaded host may deliver after their first slices. A warm-up's end needs the start to be
            # known: the session waits for it (inside the warm-up). Without warm-up it goes on working, and its
            # slices are placed on the run's timeline once the start is known (idling would lower the rate).
            if not shared.released.is_set() and (clock.warmup > 0 or result.done):
                await _until_released(shared)
            if shared.released.is_set():
                self.place_unplaced(shared)
                self._place(shared, [result], measured)
            else:
                self.unplaced.append(result)
            previous_end = result.slice_end
            think_left, due = result.think_left, result.due
            if result.done:
                self.state = "done"
                return
        if shared.released.is_set():  # stopped before the next slice was placed
            self.place_unplaced(shared)
        self.state = "stopped"

    def place_unplaced(self, shared: Shared) -> None:
        """The slices done before the start was known, on the run's timeline now that it is (measured: without
        warm-up every slice is): the coordinator places them as it learns the start, before the next sample
        reads their interval, which would otherwise be read over the time the answer took."""
        results, self.unplaced = self.unplaced, []
        self._place(shared, results, True)

    def _place(self, shared: Shared, results: list[SliceResult], measured: bool) -> None:
        if shared.on_slice is not None:
            for result in results:
                shared.on_slice(self, result, measured)

    def settle(self, covered_to: float) -> None:
        """A reading of its node holds the work of the slices that ended by covered_to."""
        while self.recent and self.recent[0].slice_end <= covered_to + EPSILON:
            self.recent.popleft()

    def uncount_after(self, covered_to: float) -> list[SliceResult]:
        """Its node was lost, its figures ending at covered_to: the slices that ended after it are taken
        out of its counts (returned, for the run's)."""
        out = []
        while self.recent and self.recent[-1].slice_end > covered_to + EPSILON:
            out.append(self.recent.pop())
            if self.measured is not None:
                self.measured.remove(out[-1])
        return out

    def fail(self, error: BaseException, at: float) -> None:
        """It failed at `at` (server epoch)."""
        self.state = "failed"
        self.error = " ".join(str(error).split()) or type(error).__name__
        self.failed_at = at


def published_by_all(sessions: Iterable[Session], now: float) -> float:
    """The instant (this host's clock) before which every session's work is in its server's counters. A
    session's calls follow one another and the server publishes a slice's counters before it answers
    (PostgreSQL a backend's as it goes idle, pg_stat_force_next_flush making it whole; a parallel worker's as it
    exits, within its leader's statement): all a session did before its call in progress was sent is in them.
    The earliest such sending (or a cancelled call's, until its flush), `now` when no work is unpublished. On
    this host's clock, as the devices' readings are: the two compare whatever the server's clock offset."""
    since = [s.unpublished_since for s in sessions if s.unpublished_since is not None]
    return min(since) if since else now


def awaited(sessions: Iterable[Session], nodes: set[str]) -> list[Session]:
    """The sessions whose unpublished work their servers' counters are still to gain: those of the nodes given
    (not lost, counting a session's work only as its call ends: Capabilities.counts_at_call_end), but for a
    session that failed (its call will never answer; a backend publishes its counters as it ends)."""
    return [s for s in sessions if s.node in nodes and s.state != "failed"]


async def _until_released(shared: Shared) -> None:
    """Until the coordinator has set the run's clock, or the run stops (a start aborted)."""
    waits = [asyncio.ensure_future(event.wait()) for event in (shared.released, shared.stop)]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
