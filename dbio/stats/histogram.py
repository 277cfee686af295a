"""Latency histograms: log-linear microsecond buckets that also hold AWR's edges (pure).

counts[0] holds values below bounds[0]; counts[i] holds [bounds[i-1], bounds[i]);
counts[-1] holds values >= bounds[-1]. Histograms with the same bounds add up.
"""

from __future__ import annotations

from typing import Sequence

SUB_BUCKETS = 8  # per power of two: a bucket is at most 12.5% wide
AWR_EDGES_US = (64, 128, 256, 512, 1000, 2000, 4000, 8000, 16000, 32000, 1_000_000)


def bounds_us() -> list[float]:
    edges = {float(v) for v in range(1, 8)}
    for exponent in range(3, 27):  # 8 us .. 2^27 us (134 s)
        base = 2 ** exponent
        edges.update(base * (1 + j / SUB_BUCKETS) for j in range(SUB_BUCKETS))
    edges.update(float(e) for e in AWR_EDGES_US)
    return sorted(edges)


def empty(bounds: Sequence[float]) -> list[int]:
    return [0] * (len(bounds) + 1)


def add(into: list[int], other: Sequence[int]) -> list[int]:
    if len(into) != len(other):
        raise ValueError("histograms with different bounds cannot be added")
    for i, v in enumerate(other):
        into[i] += v
    return into


def total(counts: Sequence[int]) -> int:
    return int(sum(counts))


def percentile(counts: Sequence[int], bounds: Sequence[float], q: float,
               max_value: float | None = None) -> float | None:
    """Value below which a share q (0..1) of the samples fall, interpolated inside its bucket."""
    n = total(counts)
    if n == 0:
        return None
    rank = q * n
    cumulative = 0
    for i, count in enumerate(counts):
        if count == 0:
            continue
        if cumulative + count >= rank:
            lo = 0.0 if i == 0 else bounds[i - 1]
            hi = bounds[i] if i < len(bounds) else (max_value if max_value is not None else lo)
            if max_value is not None:
                hi = min(hi, max_value)
                lo = min(lo, hi)
            fraction = (rank - cumulative) / count
            return lo + (hi - lo) * fraction
        cumulative += count
    return max_value


def awr_buckets(counts: Sequence[int], bounds: Sequence[float]) -> list[tuple[str, int]]:
    """Counts in AWR-like buckets: <64us, <128us, ..., <32ms, <1s, >=1s."""
    labels = [f"<{_label(e)}" for e in AWR_EDGES_US] + [f">={_label(AWR_EDGES_US[-1])}"]
    out = [0] * len(labels)
    for i, count in enumerate(counts):
        if not count:
            continue
        upper = bounds[i] if i < len(bounds) else float("inf")
        slot = next((k for k, edge in enumerate(AWR_EDGES_US) if upper <= edge), len(AWR_EDGES_US))
        out[slot] += count
    return list(zip(labels, out))


def _label(us: float) -> str:
    if us >= 1_000_000:
        return f"{us / 1_000_000:g}s"
    if us >= 1000:
        return f"{us / 1000:g}ms"
    return f"{us:g}us"
