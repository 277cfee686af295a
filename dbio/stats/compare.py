"""Deltas between results, and whether a difference is real or noise (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

MIN_INTERVALS = 10  # fewer measured intervals than this: too few samples to judge noise
UNSTABLE_CV = 20.0  # % coefficient of variation above which a run is called unstable
BATCHES = 10  # neighbouring intervals are alike (checkpoints, drift): compare means of batches


@dataclass(frozen=True)
class Delta:
    base: float | None
    other: float | None

    @property
    def absolute(self) -> float | None:
        if self.base is None or self.other is None:
            return None
        return self.other - self.base

    @property
    def pct(self) -> float | None:
        if self.base is None or self.other is None or self.base == 0:
            return None
        return 100.0 * (self.other - self.base) / abs(self.base)


@dataclass(frozen=True)
class Sample:
    """One figure's per-interval values in one run: enough to judge noise."""

    mean: float
    stdev: float  # of the batch means (or of the values, for short series)
    n: int  # batches (or values)
    raw_stdev: float = 0.0

    @property
    def standard_error(self) -> float:
        return self.stdev / math.sqrt(self.n) if self.n else float("inf")

    @property
    def cv_pct(self) -> float | None:
        """Interval-to-interval variation of the run itself."""
        return None if not self.mean else 100.0 * self.raw_stdev / abs(self.mean)


def sample(values: Sequence[float | None]) -> Sample | None:
    """Mean, deviation and count of a run's per-interval values, as batch means: the series is cut
    into BATCHES consecutive batches, whose means are nearly independent even when neighbouring
    intervals are not, so the standard error is not understated. `cv_pct` stays the raw series'."""
    given = [v for v in values if v is not None]  # an interval without the figure is a gap, not a zero
    if not given:
        return None
    values = given
    n = len(values)
    mean = sum(values) / n
    raw_stdev = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    if n < MIN_INTERVALS:
        return Sample(mean, raw_stdev, n, raw_stdev)
    size = n // BATCHES
    means = [sum(values[i * size:(i + 1) * size]) / size for i in range(BATCHES)]
    batch_mean = sum(means) / BATCHES
    batch_stdev = math.sqrt(sum((m - batch_mean) ** 2 for m in means) / (BATCHES - 1))
    return Sample(mean, batch_stdev, BATCHES, raw_stdev)


def judge(a: Sample | None, b: Sample | None) -> str:
    """'real', 'noise' (the difference is within twice its standard error), 'too few samples', or
    'unstable' (either run varies more than UNSTABLE_CV from interval to interval)."""
    if a is None or b is None or a.n < BATCHES or b.n < BATCHES:
        return "too few samples"
    if (a.cv_pct or 0) > UNSTABLE_CV or (b.cv_pct or 0) > UNSTABLE_CV:
        return "unstable"
    margin = 2.0 * math.sqrt(a.standard_error ** 2 + b.standard_error ** 2)
    return "real" if abs(b.mean - a.mean) > margin else "noise"


def differences(named: Sequence[tuple[str, dict[str, Any]]]) -> list[tuple[str, list[Any]]]:
    """Flattened keys whose values differ between the dicts, with each dict's value."""
    flat = [flatten(d) for _, d in named]
    keys = sorted(set().union(*[f.keys() for f in flat]))
    out = []
    for key in keys:
        values = [f.get(key) for f in flat]
        if any(v != values[0] for v in values[1:]):
            out.append((key, values))
    return out


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as one, keyed by dotted paths."""
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: data}
