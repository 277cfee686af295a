"""Adding up what the sessions report slice by slice: window totals and per-interval figures (pure).

Histograms are numpy arrays: every session returns one per slice, and adding them must cost
the client next to nothing (64 sessions, three histograms of ~200 buckets, every second).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dbio.engines.base import SliceResult
from dbio.run.plan import SLICE_SECONDS

# "hot": the random-range SELECTs that went to the hot spot (counted in selects too, timed apart from "select",
# which holds the others): the part meant to be served from memory, kept out of the storage part's latency
KINDS = ("select", "update", "scan", "hot")
# an open loop's (--rate) two more, over every statement: its latency from its intended start, and its schedule
# lag (its actual start less its intended one); in a tally's histograms only when the run had a rate
SCHEDULE = ("intended", "lag")
ALL_KINDS = KINDS + SCHEDULE
COUNT_FIELDS = ("iterations", "selects", "updates", "scans", "rows", "hot_rows", "retries")
# an open loop's own counts (SliceResult's fields of the same names), added up as the others and in a tally's
# counts only when the run had a rate: a new one is a field of both and a name here
SCHEDULE_COUNTS = ("late", "due_before_window", "wait_rounding_us")


@dataclass
class Tally:
    """Counts, summed and maximum latency, and histogram per statement kind."""

    buckets: int
    iterations: int = 0
    selects: int = 0
    updates: int = 0
    scans: int = 0
    rows: int = 0
    hot_rows: int = 0  # rows the hot spot's SELECTs counted (in rows too)
    retries: int = 0  # UPDATEs run again after a conflict rolled them back (SliceResult.retries)
    think_seconds: float = 0.0
    late: int = 0  # with a rate: statements later than the latency limit from their intended start
    due_before_window: int = 0  # with a rate: statements due in the warm-up, started in the window (SliceResult's)
    wait_rounding_us: float = 0.0  # with a rate: the waits' rounding by the engine's timer, summed (SliceResult's)
    sum_us: list[float] = field(default_factory=lambda: [0.0] * len(ALL_KINDS))
    max_us: list[float] = field(default_factory=lambda: [0.0] * len(ALL_KINDS))
    hist: np.ndarray = field(default=None)  # type: ignore[arg-type]  # (all kinds, buckets) int64

    def __post_init__(self) -> None:
        if self.hist is None:
            self.hist = np.zeros((len(ALL_KINDS), self.buckets), dtype=np.int64)

    def add(self, r: SliceResult) -> None:
        self._add_counts(r.iterations, r.selects, r.updates, r.scans, r.rows, r.hot_rows, r.think_seconds, r.sum_us,
                         r.max_us)
        hist = r.hist if isinstance(r.hist, np.ndarray) else np.asarray(r.hist, dtype=np.int64)
        self.hist[:len(hist)] += hist  # a closed loop's slice has the statement kinds alone
        self.retries += r.retries
        self._add_schedule(r, 1)

    def remove(self, r: SliceResult) -> None:
        """Take a slice added before back out (its work turned out to lie past what the figures cover); the
        maximum latencies stay, a statement that took that long having run."""
        self._add_counts(-r.iterations, -r.selects, -r.updates, -r.scans, -r.rows, -r.hot_rows, -r.think_seconds,
                         [-v for v in r.sum_us], [0.0] * len(r.sum_us))
        hist = r.hist if isinstance(r.hist, np.ndarray) else np.asarray(r.hist, dtype=np.int64)
        self.hist[:len(hist)] -= hist
        self.retries -= r.retries
        self._add_schedule(r, -1)

    def merge(self, other: "Tally") -> None:
        """Add another tally (an interval's) to this one."""
        self._add_counts(other.iterations, other.selects, other.updates, other.scans, other.rows, other.hot_rows,
                         other.think_seconds, other.sum_us, other.max_us)
        self.hist += other.hist
        self.retries += other.retries
        self._add_schedule(other, 1)

    def _add_schedule(self, other: "SliceResult | Tally", sign: int) -> None:
        for name in SCHEDULE_COUNTS:
            setattr(self, name, getattr(self, name) + sign * getattr(other, name))

    def _add_counts(self, iterations: int, selects: int, updates: int, scans: int, rows: int, hot_rows: int,
                    think: float, sum_us: list[float], max_us: list[float]) -> None:
        self.iterations += iterations
        self.selects += selects
        self.updates += updates
        self.scans += scans
        self.rows += rows
        self.hot_rows += hot_rows
        self.think_seconds += think
        for k in range(len(sum_us)):
            self.sum_us[k] += sum_us[k]
            self.max_us[k] = max(self.max_us[k], max_us[k])

    @classmethod
    def from_sparse(cls, sparse: dict[str, Any], buckets: int) -> "Tally":
        """The inverse of sparse(): a tally from a per-interval record."""
        tally = cls(buckets)
        for name in COUNT_FIELDS:
            setattr(tally, name, sparse.get(name, 0))
        tally.think_seconds = sparse.get("think_seconds", 0.0)
        for name in SCHEDULE_COUNTS:
            setattr(tally, name, sparse.get(name, getattr(tally, name)))
        for k, kind in enumerate(ALL_KINDS):
            entry = sparse.get(kind)
            if entry:
                tally.hist[k] = dense(entry["hist"], buckets)
                tally.sum_us[k] = entry["sum_us"]
                tally.max_us[k] = entry["max_us"]
        return tally

    @property
    def scheduled(self) -> bool:
        """The statements had intended starts (a run with --rate): the schedule's kinds hold them."""
        return bool(self.hist[len(KINDS):].any())

    def counts(self) -> dict[str, Any]:
        out = {"iterations": self.iterations, "selects": self.selects, "updates": self.updates,
               "scans": self.scans, "rows": self.rows, "hot_rows": self.hot_rows, "retries": self.retries,
               "think_seconds": self.think_seconds}
        return {**out, **{name: getattr(self, name) for name in SCHEDULE_COUNTS}} if self.scheduled else out

    def _kinds(self) -> tuple[str, ...]:
        return ALL_KINDS if self.scheduled else KINDS

    def histograms(self, bounds: list[float]) -> dict[str, Any]:
        out: dict[str, Any] = {"bounds_us": list(bounds)}
        for k, kind in enumerate(self._kinds()):
            out[kind] = {"counts": [int(v) for v in self.hist[k]], "sum_us": self.sum_us[k], "max_us": self.max_us[k]}
        return out

    def sparse(self) -> dict[str, Any]:
        """Compact form for per-interval records: only non-empty buckets."""
        out: dict[str, Any] = self.counts()
        for k, kind in enumerate(self._kinds()):
            n = int(self.hist[k].sum())
            if n:
                nonzero = np.flatnonzero(self.hist[k])
                out[kind] = {"count": n, "sum_us": self.sum_us[k], "max_us": self.max_us[k],
                             "hist": {str(int(i)): int(self.hist[k][i]) for i in nonzero}}
        return out


def dense(sparse_hist: dict[str, int], buckets: int) -> list[int]:
    counts = [0] * buckets
    for index, value in sparse_hist.items():
        counts[int(index)] = value
    return counts


class IntervalCounts:
    """The sessions' counts of a run: the window's total, and each interval's until it is written
    to the samples file with its sample ("statements"), or later with a later one, for slices that
    came back after their interval was written ("late_statements"). Nothing is kept once written:
    the samples file is the record, so an 8-hour run's memory stays flat."""

    def __init__(self, buckets: int, grid: Any):
        self.buckets, self.grid = buckets, grid
        self.totals = Tally(buckets)
        self.pending: dict[int, Tally] = {}
        self.last_sampled: int | None = None  # the newest interval written to the samples file
        self.published_to: float | None = None  # the latest slice end reported (server clock)

    def add(self, result: SliceResult, measured: bool, start: float | None) -> None:
        # a session publishes its counters as its slice ends: samples say up to when they hold work
        self.published_to = max(self.published_to or result.slice_end, result.slice_end)
        if not measured:
            return
        self.totals.add(result)
        if start is not None:
            key = self.grid.key(int(round((result.slice_end - start) / SLICE_SECONDS)))
            self.pending.setdefault(key, Tally(self.buckets)).add(result)

    def record(self, k: int | None, *, final: bool = False) -> dict[str, Any]:
        """What a sample record carries: "statements" of the interval ending at k, and
        "late_statements" of earlier intervals (with final, every interval still held)."""
        late: dict[str, Any] = {}
        statements = None
        for key in sorted(self.pending):
            if key == k and (self.last_sampled is None or k > self.last_sampled):
                statements = self.pending.pop(key).sparse()
            elif final or (k is not None and key <= k):
                late[str(key)] = self.pending.pop(key).sparse()
        if k is not None:
            self.last_sampled = k if self.last_sampled is None else max(k, self.last_sampled)
        return {"statements": statements, **({"late_statements": late} if late else {})}
