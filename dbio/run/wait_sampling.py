"""The sessions' waits: what each session is doing (its wait event), sampled many times a second on a connection
of each node's own, counted per wait event for each per-second sample and over the window, in total and per node.
A listener of the run (listeners.py): its sampler starts with the sessions, counts for the window while it is
open, and adds to each sample the counts since the last; the outcome holds the window's (WaitCounts).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Container, Mapping

from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run.listeners import Listener, RunView
from dbio.run.liveness import Liveness
from dbio.run.nodes import WaitTarget
from dbio.run.phase import Phase

KEY = "waits"  # its record in the outcome (result.json's "waits" and each node's are assemble.py's)


@dataclass
class WaitSampler:
    """Samples what each session is doing many times a second; counts per wait event."""

    targets: list[WaitTarget]
    interval: float
    current: Counter = field(default_factory=Counter)  # since the last per-second sample
    window: Counter = field(default_factory=Counter)  # inside the measured window
    window_by_node: dict[str, Counter] = field(default_factory=dict)  # the same, each node's
    in_window: bool = False
    samples: int = 0
    errors: int = 0
    lost: Container[str] = field(default_factory=set)  # nodes whose server stopped (node_loss.py): not asked
    liveness: Liveness = field(default_factory=Liveness)  # the run's: when each node last answered
    time: TimeSource = REAL_TIME  # the run's (clock.py)

    def live(self) -> list[WaitTarget]:
        return [t for t in self.targets if t.node not in self.lost]

    async def run(self, stop: asyncio.Event) -> None:
        # Its own cost is dbio's (ten samples a second at one session): one waiter on the stop event
        # for the whole run, and no task per sample when there is one node.
        stopped = asyncio.ensure_future(stop.wait())
        next_at = self.time.monotonic()
        try:
            while not stop.is_set():
                targets = self.live()
                self._count(targets, await self._ask(targets))
                self.samples += 1
                next_at += self.interval
                delay = next_at - self.time.monotonic()
                if delay < 0:
                    next_at = self.time.monotonic()
                    delay = 0
                if self.errors > 50:
                    return
                await asyncio.wait((stopped,), timeout=delay)
        finally:
            stopped.cancel()

    async def _ask(self, targets: list[WaitTarget]) -> list[Any]:
        if len(targets) == 1:
            try:
                return [await self._ask_one(targets[0])]
            except Exception as exc:
                return [exc]
        return await asyncio.gather(*(self._ask_one(t) for t in targets), return_exceptions=True)

    async def _ask_one(self, target: WaitTarget) -> list[str]:
        with self.liveness.asking(target.node):
            return await target.engine.session_states(target.conn, target.pids)

    def _count(self, targets: list[WaitTarget], answers: list[Any]) -> None:
        if any(isinstance(a, BaseException) for a in answers):
            self.errors += 1
        for target, answer in zip(targets, answers):
            if isinstance(answer, BaseException):
                continue
            for label in answer:
                self.current[label] += 1
                if self.in_window:
                    self.window[label] += 1
                    self.window_by_node.setdefault(target.node, Counter())[label] += 1

    def take(self) -> dict[str, int]:
        counts, self.current = dict(self.current), Counter()
        return counts


@dataclass
class WaitCounts:
    """The window's wait samples: the count of each wait event, in total and per node, and how many samples were
    taken (None: not known, a run rebuilt from its samples file)."""

    counts: dict[str, int] = field(default_factory=dict)
    samples: int | None = 0
    by_node: dict[str, dict[str, int]] = field(default_factory=dict)


class WaitSampling(Listener):
    """The wait sampler, for one run: made once monitoring is open (its connections are the nodes'), started
    with the sessions, counting for the window from its opening."""

    key = KEY
    title = "the wait sampler"

    def __init__(self, interval: float):
        self.interval = interval  # seconds between two samples
        self.sampler: WaitSampler | None = None

    def phase(self, phase: Phase, run: RunView) -> None:
        if phase is Phase.START:
            self.sampler = WaitSampler([m.wait_target for m in run.monitoring], self.interval, lost=run.lost,
                                       liveness=run.liveness, time=run.time)
        elif self.sampler is None:
            return
        elif phase is Phase.WARMUP:
            run.spawn(self, self.sampler.run(run.background_stop))
        elif phase is Phase.WINDOW:
            self.sampler.in_window = True
        elif phase is Phase.CLEAN_UP:
            self.sampler.in_window = False

    def fields(self) -> Mapping[str, Any]:
        return {"waits": self.sampler.take() if self.sampler is not None else {}}

    def record(self) -> WaitCounts:
        sampler = self.sampler
        if sampler is None:  # the run stopped before its monitoring opened
            return WaitCounts()
        return WaitCounts(dict(sampler.window), sampler.samples,
                          {node: dict(counts) for node, counts in sampler.window_by_node.items()})
