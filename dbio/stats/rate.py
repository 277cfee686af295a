"""An open loop's window (--rate) judged (pure): the rate asked against the rate achieved, each statement's latency
from its intended start and its schedule lag, held or not, and where it fell behind. The schedule's own arithmetic
(each session's share, the gaps) is rate_schedule.py's."""

from __future__ import annotations

import math
from typing import Any

from dbio.stats import histogram


# -- held or not: the rate asked against the rate achieved, and the schedule's lag ------------------------------

ACHIEVED_WITHIN = 0.01  # achieved within 1% of asked...
POISSON_SIGMAS = 3.0  # ...or, for a Poisson schedule, within 3 standard deviations of its count (a short window)
# A statement started this late behind its intended start waited in a queue the loop did not keep up with: a
# window interval whose mean lag exceeds it fell behind, and a rate whose last interval's does was not held.
LAG_BOUND_US = 100_000.0
STATEMENT_TOTALS = ("selects", "updates", "scans")
QUANTILES = (("p50", 0.50), ("p99", 0.99), ("p99_9", 0.999))


def _stats(h: dict[str, Any] | None, bounds: list[float]) -> dict[str, Any]:
    n = histogram.total(h["counts"]) if h else 0
    if not h or not n:
        return {"mean_us": None, "max_us": None, **{f"{name}_us": None for name, _ in QUANTILES}}
    return {"mean_us": h["sum_us"] / n, "max_us": h["max_us"],
            **{f"{name}_us": histogram.percentile(h["counts"], bounds, q, h["max_us"]) for name, q in QUANTILES}}


def derive(asked_per_s: float | None, schedule: str, latency_limit_us: float, totals: dict[str, Any],
           hists: dict[str, Any], seconds: float) -> dict[str, Any] | None:
    """figures.rate of a window (None: no rate asked, or an older loop without the schedule's histograms): the
    rate asked (this window's sessions' share) and achieved, the latency from the intended start and the lag.
    seconds: the span the statements were scheduled over (run/result_figures.scheduled_seconds)."""
    if asked_per_s is None or not seconds or not (hists.get("lag") and hists.get("intended")):
        return None
    statements = sum(totals.get(k) or 0 for k in STATEMENT_TOTALS)
    achieved = statements / seconds
    # the window's own arrivals served: without the warm-up's queue a late loop carried in (work the window did,
    # counted in every figure, but a loop behind as the window opened and caught up is no rate above the one asked)
    carried = totals.get("due_before_window") or 0
    intended, lag = _stats(hists["intended"], hists["bounds_us"]), _stats(hists["lag"], hists["bounds_us"])
    late = totals.get("late") if latency_limit_us else None
    return {"asked_per_s": asked_per_s, "achieved_per_s": achieved, "schedule": schedule, "seconds": seconds,
            "achieved_pct": 100.0 * achieved / asked_per_s,
            "served_pct": 100.0 * (statements - carried) / seconds / asked_per_s,
            "tolerance_pct": 100.0 * tolerance(asked_per_s * seconds, schedule),
            **{f"intended_{k}": v for k, v in intended.items()}, **{f"lag_{k}": v for k, v in lag.items()},
            "latency_limit_us": latency_limit_us or None, "late": late, "due_before_window": carried,
            # the loop's waits rounded up by its engine's timer (pg_sleep's whole milliseconds), per statement: left out
            # of the latency from the intended start and of the lag as dbio's own lateness (None: an older result's)
            "wait_rounding_mean_us": None if totals.get("wait_rounding_us") is None or not statements
            else totals["wait_rounding_us"] / statements,
            "late_pct": None if late is None or not statements else 100.0 * late / statements,
            "held": None, "behind": None, "lag_first_us": None, "lag_last_us": None}


def tolerance(expected: float, schedule: str) -> float:
    """How far achieved may fall from asked and the rate still be held: 1%, or for a Poisson schedule whose count
    in the window varies more than that by chance (sd sqrt(n)), three of its standard deviations."""
    if schedule != "poisson" or expected <= 0:
        return ACHIEVED_WITHIN
    return max(ACHIEVED_WITHIN, POISSON_SIGMAS * math.sqrt(expected) / expected)


def interval_lags(per_interval: dict[int, dict[str, Any]], warmup: float) -> list[tuple[int, float]]:
    """(seconds since the start at the interval's end, its statements' mean schedule lag in us) for each of the
    window's intervals with scheduled statements, in order (per_interval: run/slice_totals' sparse tallies)."""
    out = []
    for k in sorted(per_interval):
        lag = (per_interval[k] or {}).get("lag")
        if k > warmup and lag and lag.get("count"):
            out.append((k, lag["sum_us"] / lag["count"]))
    return out


def judge(rate: dict[str, Any], lags: list[tuple[int, float]], warmup: float, interval: float) -> dict[str, Any]:
    """rate with its judgement: held when the window's arrivals served (the rate achieved less the warm-up's queue
    carried in) are within tolerance of asked and the lag stayed bounded (its
    last interval's mean under LAG_BOUND_US); behind: the window's seconds (from, to) from the first interval whose
    mean lag passed the bound to the last, or None; the first and last interval's mean lag (a queue grows)."""
    first = lags[0][1] if lags else None
    last = lags[-1][1] if lags else None
    over = [k for k, lag in lags if lag > LAG_BOUND_US]
    behind = None if not over else {"from_s": max(0.0, over[0] - interval - warmup), "to_s": over[-1] - warmup}
    kept = abs(rate.get("served_pct", rate["achieved_pct"]) - 100.0) <= rate["tolerance_pct"]
    bounded = (last if last is not None else rate.get("lag_p99_us") or 0.0) <= LAG_BOUND_US
    return {**rate, "held": bool(kept and bounded), "behind": behind, "lag_first_us": first, "lag_last_us": last}


def during_events(events: list[dict[str, Any]], lags: list[tuple[int, float]], warmup: float,
                  interval: float) -> list[dict[str, Any] | None]:
    """Each --event's schedule lag (figures.disruptions' records, seconds into the window): the highest interval
    mean lag before it (the intervals that end at or before its start) and from its start until an interval after
    it was recovered from (or its end), and whether the schedule fell behind there (past LAG_BOUND_US): a rate
    the window held may have been broken for the event's seconds, which the window's own judgement hides."""
    out: list[dict[str, Any] | None] = []
    for event in events:
        start, end = event.get("start_s"), event.get("end_s")
        if start is None or end is None or not lags:
            out.append(None)
            continue
        until = float(end) + float(event.get("recovery_seconds") or 0.0) + interval
        before = [lag for k, lag in lags if k - warmup <= float(start) + 1e-9]
        during = [lag for k, lag in lags if k - warmup > float(start) + 1e-9 and k - interval - warmup < until]
        worst = max(during) if during else None
        out.append({"lag_before_us": max(before) if before else None, "lag_during_us": worst,
                    "behind": None if worst is None else worst > LAG_BOUND_US})
    return out
