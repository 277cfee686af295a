"""Assertions both engines' --rate tests make of a result: one place for what "the node's one schedule held"
means, so the PostgreSQL and MariaDB cases cannot drift apart."""

from __future__ import annotations

from dbio.stats import histogram


def percentile(hist: dict, bounds: list, q: float) -> float:
    value = histogram.percentile(hist["counts"], bounds, q, hist["max_us"])
    assert value is not None
    return value


def assert_shared_schedule_served(doc: dict, rate: float) -> None:
    """Two of four sessions held mid-window, the other two serving the node's one schedule: nearly every
    arrival was served, and only the held statements lie beyond p95 of the latency from the intended start
    (with one schedule per session, the held sessions' own shares queued behind them: p95 near a second)."""
    hists, window = doc["histograms"], doc["figures"]["window_seconds"]
    served = sum(hists["intended"]["counts"])
    assert served >= 0.9 * rate * window, (served, window)
    p95 = percentile(hists["intended"], hists["bounds_us"], 0.95)
    assert p95 < 250_000, p95
