"""Adding up what the sessions report slice by slice: window totals and per-interval figures (pure).

Histograms are numpy arrays: every session returns one per slice, and adding them must cost
the client next to nothing (64 sessions, three histograms of ~200 buckets, every second).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dbio.engines.base import SliceResult

KINDS = ("select", "update", "scan")
COUNT_FIELDS = ("iterations", "selects", "updates", "scans", "rows")


@dataclass
class Tally:
    """Counts, summed and maximum latency, and histogram per statement kind."""

    buckets: int
    iterations: int = 0
    selects: int = 0
    updates: int = 0
    scans: int = 0
    rows: int = 0
    think_seconds: float = 0.0
    sum_us: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    max_us: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    hist: np.ndarray = field(default=None)  # type: ignore[assignment]  # (kinds, buckets) int64

    def __post_init__(self) -> None:
        if self.hist is None:
            self.hist = np.zeros((len(KINDS), self.buckets), dtype=np.int64)

    def add(self, r: SliceResult) -> None:
        self._add_counts(r.iterations, r.selects, r.updates, r.scans, r.rows, r.think_seconds, r.sum_us, r.max_us)
        self.hist += r.hist if isinstance(r.hist, np.ndarray) else np.asarray(r.hist, dtype=np.int64)

    def merge(self, other: "Tally") -> None:
        """Add another tally (an interval's) to this one."""
        self._add_counts(other.iterations, other.selects, other.updates, other.scans, other.rows,
                         other.think_seconds, other.sum_us, other.max_us)
        self.hist += other.hist

    def _add_counts(self, iterations: int, selects: int, updates: int, scans: int, rows: int, think: float,
                    sum_us: list[float], max_us: list[float]) -> None:
        self.iterations += iterations
        self.selects += selects
        self.updates += updates
        self.scans += scans
        self.rows += rows
        self.think_seconds += think
        for k in range(len(KINDS)):
            self.sum_us[k] += sum_us[k]
            self.max_us[k] = max(self.max_us[k], max_us[k])

    @classmethod
    def from_sparse(cls, sparse: dict[str, Any], buckets: int) -> "Tally":
        """The inverse of sparse(): a tally from a per-interval record."""
        tally = cls(buckets)
        for name in COUNT_FIELDS:
            setattr(tally, name, sparse.get(name, 0))
        tally.think_seconds = sparse.get("think_seconds", 0.0)
        for k, kind in enumerate(KINDS):
            entry = sparse.get(kind)
            if entry:
                tally.hist[k] = dense(entry["hist"], buckets)
                tally.sum_us[k] = entry["sum_us"]
                tally.max_us[k] = entry["max_us"]
        return tally

    def counts(self) -> dict[str, Any]:
        return {"iterations": self.iterations, "selects": self.selects, "updates": self.updates,
                "scans": self.scans, "rows": self.rows, "think_seconds": self.think_seconds}

    def histograms(self, bounds: list[float]) -> dict[str, Any]:
        out: dict[str, Any] = {"bounds_us": list(bounds)}
        for k, kind in enumerate(KINDS):
            out[kind] = {"counts": [int(v) for v in self.hist[k]], "sum_us": self.sum_us[k], "max_us": self.max_us[k]}
        return out

    def sparse(self) -> dict[str, Any]:
        """Compact form for per-interval records: only non-empty buckets."""
        out: dict[str, Any] = self.counts()
        for k, kind in enumerate(KINDS):
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
