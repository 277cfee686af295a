"""The read probe: single reads' latency under the run's load, timed by the engine itself.

Engines keep sums of read time, not each read's (PostgreSQL's pg_stat_io), and dbio's sessions time
whole statements of work_unit reads. So one more connection per node, no session of the run, looks up
single rows of the loaded data set at random (the loop's table, key and access path), RATE_PER_S times a
second while the window is open, and keeps from each lookup the blocks it read from outside the engine's
cache and the engine's own timer around those reads. A lookup that read exactly one block gives one
read's latency as the engine saw it (the OS page cache included when the server reads through it);
lookups that read nothing (cached) or more than one block (index and table) are counted and left out.
The probe's own reads are in the engine's counters of the window: it counts them, and the report says
what share they are. Its server process's CPU is dbio's monitoring overhead, not the sessions'.

A second's lookups are one batch, one statement the engine runs and times lookup by lookup (PostgreSQL's
EXPLAIN ANALYZE of a prepared UNION ALL, MariaDB's ANALYZE of one): one round trip and one wake-up of the
run's event loop a second instead of one per lookup, which made the probe most of dbio's own CPU (issue 39).
The batch's lookups follow each other under the sessions' load as single lookups did; only their spacing inside
the second differs.

The run's listener of it, which makes a probe for each node and counts their lookups while the window is open,
is read_probing.py.
"""

from __future__ import annotations

import asyncio
import bisect
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from dbio.engines.base import Engine, ProbeRead, read_probing
from dbio.run.clock import REAL_TIME, TimeSource

RATE_PER_S = 25  # lookups a second per node: next to nothing against the sessions' thousands of reads
BATCH_SECONDS = 1.0  # one batch of lookups (one statement) each second
GIVE_UP_AFTER = 5  # failed lookups in a row after which the probe stops (the reason is kept)


@dataclass
class ProbeTally:
    """The probe's lookups in the window (pure): single-block reads' latency histogram over the run's
    bounds, and what the other lookups were."""

    buckets: int
    counts: list[int] = field(default_factory=list)
    lookups: int = 0  # lookups made in the window
    single: int = 0  # read exactly one block, timed: in the histogram
    cached: int = 0  # read nothing: the row and its index entry were in the engine's cache
    multi: int = 0  # read more than one block: no single read's time
    untimed: int = 0  # read, but the engine gave no time
    blocks_read: int = 0  # every block the probe read (its share of the window's reads)
    sum_us: float = 0.0
    max_us: float = 0.0
    errors: int = 0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * self.buckets

    def add(self, read: ProbeRead, bounds: Sequence[float]) -> None:
        self.lookups += 1
        self.blocks_read += read.blocks_read
        if read.blocks_read == 0:
            self.cached += 1
        elif read.read_us is None:
            self.untimed += 1
        elif read.blocks_read > 1:
            self.multi += 1
        else:
            self.single += 1
            self.sum_us += read.read_us
            self.max_us = max(self.max_us, read.read_us)
            self.counts[bucket_of(read.read_us, bounds)] += 1

    def to_dict(self) -> dict[str, Any]:
        return {"lookups": self.lookups, "single": self.single, "cached": self.cached, "multi": self.multi,
                "untimed": self.untimed, "blocks_read": self.blocks_read, "errors": self.errors,
                "sum_us": self.sum_us, "max_us": self.max_us,
                "counts": {str(i): c for i, c in enumerate(self.counts) if c}}


def bucket_of(value: float, bounds: Sequence[float]) -> int:
    """The histogram slot of a value (stats/histogram.py: counts[i] holds [bounds[i-1], bounds[i]))."""
    return bisect.bisect_right(bounds, value)


class ReadProbe:
    """One node's probe: its connection (opened with the monitoring), its lookups while measuring()."""

    def __init__(self, engine: Engine, bounds: Sequence[float], schemas: Sequence[int], scale: int,
                 rate: float = RATE_PER_S, seed: int | None = None, application_name: str = "dbio:probe",
                 time: TimeSource = REAL_TIME):
        self.engine, self.bounds, self.time = engine, list(bounds), time
        self.prober = read_probing(engine)  # None: the engine declares no read probe
        self.application_name = application_name  # named with its run: parts sharing a server count their own
        self.schemas, self.scale, self.rate = sorted(set(schemas)), scale, rate
        # the schema of each lookup of a batch: every schema in turn, so each is read as often
        self.lookups = [self.schemas[i % len(self.schemas)] for i in range(max(1, round(rate * BATCH_SECONDS)))] \
            if self.schemas else []
        self.tally = ProbeTally(len(self.bounds) + 1)
        self.conn: Any = None
        self.pid: int | None = None
        self.why: str | None = None  # why it measured nothing (could not connect, time, or kept failing)
        self.random = random.Random(seed)

    async def open(self, conninfo: str, access_path: str) -> None:
        """Connect; a probe that cannot time reads keeps why, and the run goes on without it."""
        if not self.schemas or self.scale < 1:
            self.why = "no session reads this node's data set"
            return
        if self.prober is None:
            self.why = "this engine cannot time single reads"
            return
        try:
            self.conn, self.pid = await self.prober.read_probe_connect(conninfo, access_path, self.application_name,
                                                                       self.lookups)
        except Exception as exc:  # the run never fails for its probe
            self.why = f"the probe could not time reads: {getattr(exc, 'message', None) or exc}"

    async def run(self, measuring: Callable[[], bool], stop: asyncio.Event) -> None:
        """A batch of lookups on a fixed schedule (a late one is skipped, never made up in a burst) until stop;
        a batch counts when the window was open before and after it."""
        if self.conn is None or self.prober is None:
            return
        stopped = asyncio.ensure_future(stop.wait())  # one waiter for the whole run, none per batch
        due = self.time.monotonic()
        failures = 0
        try:
            while not stop.is_set():
                if measuring():
                    keys = [self.random.randint(1, self.scale) for _ in self.lookups]
                    try:
                        reads = await self.prober.read_probe(self.conn, keys)
                    except Exception as exc:
                        if stop.is_set():
                            return
                        self.tally.errors += 1
                        failures += 1
                        if failures >= GIVE_UP_AFTER:
                            self.why = f"the probe stopped after {failures} failed batches in a row: {exc}"
                            return
                    else:
                        failures = 0
                        if measuring():  # a batch the window's close overtook is not the window's
                            for read in reads:
                                self.tally.add(read, self.bounds)
                due += BATCH_SECONDS
                delay = due - self.time.monotonic()
                if delay < 0:
                    due, delay = self.time.monotonic(), 0.0
                await asyncio.wait((stopped,), timeout=delay)
        finally:
            stopped.cancel()

    @property
    def method(self) -> str:
        """How the engine times the probe's reads ('' when it has no probe)."""
        return "" if self.prober is None else self.prober.read_probe_method

    def record(self, method: str) -> dict[str, Any]:
        """The node's probe as result.json keeps it."""
        out: dict[str, Any] = {"rate_per_s": self.rate, "method": method, **self.tally.to_dict()}
        if self.why is not None:
            out["why"] = self.why
        return out
