"""Differences and rates of cumulative counters (pure)."""

from __future__ import annotations

from typing import Any


def delta(begin: Any, end: Any) -> Any:
    """end - begin for nested dicts of numbers; keys missing at begin count from zero.

    None stays None (a counter the server does not have). Counters that went backwards
    (a stats reset inside the window) give None rather than a negative figure.
    """
    if isinstance(end, dict):
        base = begin if isinstance(begin, dict) else {}
        return {k: delta(base.get(k), v) for k, v in end.items()}
    if end is None or isinstance(end, bool) or not isinstance(end, (int, float)):
        return None
    start = begin if isinstance(begin, (int, float)) and not isinstance(begin, bool) else 0
    diff = end - start
    return diff if diff >= 0 else None


def rate(value: float | None, seconds: float) -> float | None:
    if value is None or seconds <= 0:
        return None
    return value / seconds


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def get(data: Any, *path: str) -> Any:
    """data[path0][path1]..., None where any level is missing."""
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data
