"""How steady a run was, interval by interval (pure): the figures sustained tests are judged by."""

from __future__ import annotations

from typing import Any, Sequence

from dbio.stats import histogram

HOUR = 3600.0


def quantile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated quantile of a small sample."""
    if not values:
        return None
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def drift(rows: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    """Change of the mean from the start to the end of the measured window: first and last hour
    of runs of two hours or more, otherwise the first and last tenth (at least one interval each)."""
    points = [(r["since_start"], r[key]) for r in rows if r.get("phase") == "measured" and r.get(key) is not None]
    if len(points) < 2:
        return None
    span = points[-1][0] - points[0][0]
    if span >= 2 * HOUR:
        head = [v for t, v in points if t <= points[0][0] + HOUR]
        tail = [v for t, v in points if t >= points[-1][0] - HOUR]
        label = "first hour to last hour"
    else:
        n = max(1, len(points) // 10)
        head, tail = [v for _, v in points[:n]], [v for _, v in points[-n:]]
        label = f"first {n} to last {n} interval{'s' if n > 1 else ''}"
    first, last = sum(head) / len(head), sum(tail) / len(tail)
    return {"from": first, "to": last, "change_pct": None if not first else 100.0 * (last - first) / first,
            "span": label}


def share_at_or_above(counts: Sequence[int], bounds: Sequence[float], threshold_us: float) -> float | None:
    """Share (%) of statements that took threshold_us or longer (threshold must be a bucket edge)."""
    total = histogram.total(counts)
    if not total:
        return None
    if threshold_us not in bounds:
        raise ValueError(f"{threshold_us} us is not a bucket edge")
    first = list(bounds).index(threshold_us) + 1  # counts[i] holds [bounds[i-1], bounds[i])
    return 100.0 * sum(counts[first:]) / total
