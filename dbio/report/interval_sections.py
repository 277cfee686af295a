"""The sections of a report read from the per-interval series (pure): Time Series and Stability.

Which figures they show, with which label and format, and which way is worse, comes from the
catalogue (each figure's `series` key names its column in the interval rows).
"""

from __future__ import annotations

from typing import Any

from dbio.report.tables import table
from dbio.result_records import Histograms, Result
from dbio.stats import catalogue, published
from dbio.stats import series as series_math
from dbio.stats import stability

TIME_SERIES = catalogue.figures("reads_per_s", "writes_per_s", "read_mib_per_s", "write_mib_per_s", "avg_read_us",
                                "statements_per_s", "select_p99_us", "host_busy_pct")
STABILITY = catalogue.figures("reads_per_s", "avg_read_us", "select_p99_us", "statements_per_s")
DRIFT = catalogue.figure("reads_per_s")  # the figure whose drift gets its own line
SLOW_US = 1000.0  # a statement this slow or slower is counted in the stability lines


def time_series(intervals: list[dict[str, Any]]) -> dict[str, Any]:
    measured = series_math.measured(intervals)
    rows = []
    for fig in TIME_SERIES:
        key, kind = str(fig.series), fig.kind
        s = series_math.summary(intervals, key)
        if not s["n"]:
            continue
        low = min(measured, key=lambda r: r[key] if r.get(key) is not None else float("inf"))
        high = max(measured, key=lambda r: r[key] if r.get(key) is not None else float("-inf"))
        rows.append([fig.label, {"value": s["mean"], "kind": kind}, {"value": s["stdev"], "kind": kind}, s["cv_pct"],
                     {"value": s["min"], "kind": kind}, interval_label(low), {"value": s["max"], "kind": kind},
                     interval_label(high), s["n"]])
    if not rows:  # no figure in any interval: why, when it is that the sessions' work was not published
        unpublished = _unpublished_note(intervals).strip()
        return {"id": "time_series", "title": "Time Series", **({"lines": [unpublished]} if unpublished else {})}
    return {"id": "time_series", "title": "Time Series (per interval, measured window)", "tables": [table(
        "series_stats", "", ["", "Mean", "Std dev", "CV", "Min", "in", "Max", "in", "Intervals"],
        ["text", "mixed", "mixed", "pct", "mixed", "text", "mixed", "text", "count"], rows,
        ["'in' is the interval, in seconds after the end of warm-up, where the minimum or maximum fell."
         + _partial_note(intervals) + _unpublished_note(intervals)])],
        "charts": ["series_iops", "series_latency"]}


def interval_label(row: dict[str, Any]) -> str:
    if row.get("from_s") is None:
        return "-"
    return f"{row['from_s']:g}-{row['to_s']:g} s"


def _partial_note(intervals: list[dict[str, Any]]) -> str:
    partial = [r for r in intervals if r.get("partial") and r.get("phase") == "measured"]
    if not partial:
        return ""
    named = ", ".join(interval_label(r) for r in partial)
    return (f" Left out, here and in the charts: {named}, measured for less than its length (a partial "
            "interval at the end of the run).")


def _unpublished_note(intervals: list[dict[str, Any]]) -> str:
    """The intervals without engine figures, because the sessions' counters had not published their work
    (stats/published.py): a statement in progress (a scan of a large table, a lock wait) holds it back."""
    measured = [r for r in series_math.measured(intervals) if not r.get("missing")]
    unpublished = [r for r in measured if r.get("unpublished")]
    if not unpublished:
        return ""
    in_progress = sum(1 for r in unpublished if r["unpublished"] == published.IN_PROGRESS)
    return (f" {len(unpublished)} of the {len(measured)} intervals have no engine figure nor statements per second: "
            f"the sessions publish their work as each slice ends, and {in_progress} held no session's (a statement "
            f"in progress), {len(unpublished) - in_progress} some sessions' and not others' (no span of work is the "
            "counters'). The window's figures hold all of it; the devices' are per interval in the charts.")


def stability_section(r: Result, intervals: list[dict[str, Any]]) -> dict[str, Any]:
    rows_in = series_math.measured(intervals)
    if len(rows_in) < 3:
        return {"id": "stability", "title": "Stability"}
    interval = r.timeline.interval_seconds or 1
    rows = [row for row in (_stability_row(fig, rows_in) for fig in STABILITY) if row]
    if not rows:  # no figure has three intervals (a scan's engine figures unpublished in each): no table
        return {"id": "stability", "title": f"Stability ({len(rows_in)} intervals of {interval:g} s)",
                "lines": _slow_lines(r.histograms)}
    return {"id": "stability", "title": f"Stability ({len(rows_in)} intervals of {interval:g} s)", "tables": [table(
        "stability", "", ["", "Mean", "CV", "Worst interval", "in", "p99 / p1 of intervals", "Drift"],
        ["text", "mixed", "pct", "mixed", "text", "mixed", "pct"], rows,
        ["Worst interval: the lowest throughput or the highest latency; p99 of the intervals for latencies, "
         "p1 for throughput (the level the run stays above 99% of the time); drift from the start of the window "
         "to its end."])], "lines": _drift_lines(rows_in) + _slow_lines(r.histograms)}


def _stability_row(fig: catalogue.Figure, rows_in: list[dict[str, Any]]) -> list[Any] | None:
    key, kind = str(fig.series), fig.kind
    larger_is_worse = fig.higher_is_better is False
    values = [r[key] for r in rows_in if r.get(key) is not None]
    if len(values) < 3:
        return None
    s = series_math.summary(rows_in, key)
    worst = (max if larger_is_worse else min)(rows_in, key=lambda r: r[key] if r.get(key) is not None else (
        float("-inf") if larger_is_worse else float("inf")))
    tail = stability.quantile(values, 0.99 if larger_is_worse else 0.01)
    drift = stability.drift(rows_in, key)
    return [fig.label, {"value": s["mean"], "kind": kind}, s["cv_pct"], {"value": worst[key], "kind": kind},
            interval_label(worst), {"value": tail, "kind": kind}, drift and drift["change_pct"]]


def _drift_lines(rows_in: list[dict[str, Any]]) -> list[str]:
    drift = stability.drift(rows_in, str(DRIFT.series))
    if not drift:
        return []
    return [f"drift of {DRIFT.label.lower()}, {drift['span']}: {drift['from']:,.0f} -> {drift['to']:,.0f}"
            + (f" ({drift['change_pct']:+.1f}%)" if drift["change_pct"] is not None else "")]


def _slow_lines(histograms: Histograms) -> list[str]:
    """The share of slow statements, from the run's whole histograms (not the figures' buckets)."""
    bounds = histograms.bounds_us
    lines = []
    for kind in ("select", "update"):
        counts = histograms.counts.get(kind)
        if bounds and counts and sum(counts):
            share = stability.share_at_or_above(counts, bounds, SLOW_US)
            lines.append(f"{share:.2f}% of {catalogue.STATEMENT_LABELS[kind]} statements took 1 ms or longer")
    return lines
