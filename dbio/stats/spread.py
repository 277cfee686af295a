"""Run-to-run spread of repeated runs, and whether two sets of runs differ beyond it (pure).

A run's own interval-to-interval noise (stats/compare.py) cannot see what changes between runs: the
storage's speed drifting over minutes, a cache's state, other work on the host. Repeats can.

The judgement is the simplest rank test there is: two sets differ "beyond the noise" when their
ranges do not overlap (every run of one side above every run of the other). Under no difference,
each order of the m + n runs is equally likely, and a complete separation one way or the other has
the chance 2 / C(m+n, m): 0.1 for 3 runs a side, 0.029 for 4, 0.008 for 5. A Mann-Whitney test on
3 against 3 can reach nothing smaller than that same 0.1, so with the few repeats a run of minutes
allows, non-overlap is the rank test, said in words a reader can check against the min and max.
Sides whose separation could happen by chance more often than MAX_CHANCE (2 against 2: 1 in 3) are
"too few runs" whatever their figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

MAX_CHANCE = 0.1  # a complete separation likelier than this by chance alone judges nothing
MIN_RUNS = 3  # per side: the fewest with which MAX_CHANCE can be reached (3 against 3)

BEYOND, WITHIN, TOO_FEW = "beyond the noise", "within the noise", "too few runs"


@dataclass(frozen=True)
class Spread:
    """One figure over N repeated runs."""

    n: int
    median: float
    low: float
    high: float

    @property
    def spread_pct(self) -> float | None:
        """(max - min) / median, in %: how far apart the runs were, against their middle."""
        return None if not self.median else 100.0 * (self.high - self.low) / abs(self.median)

    def to_dict(self) -> dict[str, float | int | None]:
        return {"n": self.n, "median": self.median, "min": self.low, "max": self.high,
                "spread_pct": self.spread_pct}


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def spread(values: Sequence[float | None]) -> Spread | None:
    """The median, min and max of the runs that measured the figure; None when none did."""
    present = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if not present:
        return None
    return Spread(len(present), median(present), min(present), max(present))


def chance_of_separation(m: int, n: int) -> float:
    """How often m and n runs of one same distribution fall with every run of one side above every
    run of the other, either way round: 2 / C(m+n, m)."""
    return min(1.0, 2.0 / math.comb(m + n, m))


@dataclass(frozen=True)
class Judgement:
    verdict: str  # BEYOND, WITHIN or TOO_FEW
    chance: float | None  # of a separation this complete by chance alone (None: too few runs to say)
    a: Spread | None
    b: Spread | None

    @property
    def median_pct(self) -> float | None:
        """The difference of the medians, in % of the first side's."""
        if self.a is None or self.b is None or not self.a.median:
            return None
        return 100.0 * (self.b.median - self.a.median) / abs(self.a.median)

    def words(self) -> str:
        """The verdict as the compare table says it, with the chance that backs it."""
        if self.verdict == TOO_FEW:
            return f"{TOO_FEW} (repeat with --repeat {MIN_RUNS})"
        if self.verdict == BEYOND:
            return f"{BEYOND} (ranges apart; by chance {self.chance:.2g})"
        return f"{WITHIN} (ranges overlap)"


def judge(a: Sequence[float | None], b: Sequence[float | None]) -> Judgement:
    """Two sets of repeated runs of one figure: beyond the noise when their ranges do not overlap and
    that separation is unlikely by chance (at most MAX_CHANCE), within it when they overlap."""
    sa, sb = spread(a), spread(b)
    if sa is None or sb is None:
        return Judgement(TOO_FEW, None, sa, sb)
    apart = sa.high < sb.low or sb.high < sa.low
    chance = chance_of_separation(sa.n, sb.n)
    if not apart:
        # one run inside another side's range is within its noise; one run a side shows no noise at all
        return Judgement(WITHIN if max(sa.n, sb.n) >= 2 else TOO_FEW, None, sa, sb)
    if chance > MAX_CHANCE:
        return Judgement(TOO_FEW, chance, sa, sb)
    return Judgement(BEYOND, chance, sa, sb)
