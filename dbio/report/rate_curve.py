"""A sweep over rates (sweep --rate, or --vary rate=...) as the latency-throughput curve (pure): each step's rate
asked and achieved, held or not, its p50 and p99 from the intended start and its service p99 (SELECT, timed from
the actual start), a table, the knee over rates, and the steps whose rate was not held named as such.

A step whose rate was not held is no point of the curve at the rate asked: its statements were not started at
that rate. It is kept, at the rate it achieved, marked (the chart draws it apart, never joined to the held
points), and its latency from the intended start shows the queue it built."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.report.tables import table
from dbio.result_records import Result
from dbio.stats import catalogue
from dbio.stats import knee as knee_math
from dbio.sweep_records import Sweep

FIGURES = ("rate_asked_per_s", "rate_achieved_per_s", "rate_held", "intended_p50_us", "intended_p99_us",
           "select_p99_us", "schedule_lag_p99_us")
NOT_HELD = "NOT HELD"


def is_rate_sweep(sweep: Sweep) -> bool:
    return "rate" in sweep.varied or bool(sweep.search and sweep.search.axis == "rate")


def points(sweep: Sweep, rows: list[dict[str, Any]], results: Mapping[str, Result]) -> list[dict[str, Any]]:
    """Each complete step that ran at a rate: its figures, with the label of its curve (the other knobs varied)."""
    others = [k for k in sweep.varied if k != "rate"]
    out = []
    for row in rows:
        r = results.get(row["step"])
        if row["status"] != "complete" or r is None:
            continue
        f = catalogue.values(dict(r.figures), FIGURES)
        if f["rate_asked_per_s"] is None:
            continue
        label = ", ".join(f"{k}={row['values'].get(k)}" for k in others) or "all steps"
        out.append({"step": row["step"], "curve": label, "asked": f["rate_asked_per_s"],
                    "achieved": f["rate_achieved_per_s"], "held": f["rate_held"], "p50_us": f["intended_p50_us"],
                    "p99_us": f["intended_p99_us"], "service_p99_us": f["select_p99_us"],
                    "lag_p99_us": f["schedule_lag_p99_us"], "invalid": row["invalid"]})
    return sorted(out, key=lambda p: (p["curve"], p["asked"]))


def curves(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The points grouped into curves, in order of the rate asked."""
    by: dict[str, list[dict[str, Any]]] = {}
    for p in found:
        by.setdefault(p["curve"], []).append(p)
    return [{"label": label, "points": members} for label, members in by.items()]


def knee_lines(curve_list: list[dict[str, Any]], gain: float) -> list[str]:
    """Each curve's knee over the rates asked (knee.find_over_rates), or that it followed every rate asked."""
    lines = []
    for curve in curve_list:
        usable = [p for p in curve["points"] if not p["invalid"] and p["achieved"]]
        prefix = f"{curve['label']}: " if curve["label"] != "all steps" else ""
        found = knee_math.find_over_rates(
            [knee_math.Point(int(p["asked"]), p["achieved"], p["p99_us"]) for p in usable], gain)
        if found:
            lines.append(prefix + found.statement(
                what="the rate achieved", latency="the p99 from the intended start", read_latency=False,
                beyond=f"{found.after.sessions:,} statements/s asked"))
        elif len(usable) > 1:
            best = max((p for p in usable if p["held"]), key=lambda p: p["asked"], default=None)
            held = f"; the highest rate held: {best['asked']:,.0f}/s" if best else "; no rate was held"
            lines.append(prefix + "no knee over the rates: each added rate was served, or latency did not rise faster "
                                  f"than the rate achieved{held}")
    return lines


def not_held_lines(found: list[dict[str, Any]]) -> list[str]:
    return [f"rate not held: {p['step']}, asked {p['asked']:,.0f}/s, achieved {p['achieved']:,.0f}/s: shown at the "
            "rate it achieved and apart from the curve, its latency from the intended start the queue it built"
            for p in found if p["held"] is not True]


def _held(value: Any) -> str:
    return "yes" if value is True else NOT_HELD if value is False else "not judged"


def section(sweep: Sweep, found: list[dict[str, Any]], gain: float) -> dict[str, Any] | None:
    """The Latency against the rate section: its table, the knee and the steps not held."""
    if not found:
        return None
    several = len({p["curve"] for p in found}) > 1
    rows = [[p["step"], *([p["curve"]] if several else []), p["asked"], p["achieved"], _held(p["held"]), p["p50_us"],
             p["p99_us"], p["service_p99_us"], p["lag_p99_us"]] for p in found]
    notes = ["From intended start: each statement's end less the instant the schedule meant it to start (its wait "
             "behind a late loop included); service p99: the SELECTs' own time, from their actual start; lag: the "
             "actual start less the intended one. The curve is drawn against the rate achieved.",
             f"{NOT_HELD}: the rate achieved fell short of the rate asked, or the schedule's lag grew: that step's "
             "statements were not asked at its rate, and it is no point of the curve at it."]
    columns = ["Step", *(["Curve"] if several else []), "Asked/s", "Achieved/s", "Held", "p50 from intended",
               "p99 from intended", "Service p99", "Lag p99"]
    kinds = ["text", *(["text"] if several else []), "rate", "rate", "text", "us", "us", "us", "us"]
    lines = knee_lines(curves(found), gain) + not_held_lines(found)
    return {"id": "rate_curve", "title": "Latency against the rate",
            "tables": [table("sweep_rate_curve", "", columns, kinds, rows, notes)], "lines": lines}


def headline(found: list[dict[str, Any]]) -> str | None:
    """A sweep over rates' headline: the highest rate held (a storage result) with its latency from the intended
    start, and how many were not held; never the most reads/s of a step whose rate was not held."""
    if not found:
        return None
    held = [p for p in found if p["held"] is True and not p["invalid"]]
    missed = sum(1 for p in found if p["held"] is not True)
    tail = f"; {missed} of {len(found)} rates not held" if missed else f"; every one of {len(found)} rates held"
    if not held:
        return f"no rate was held as a storage result{tail}"
    best = max(held, key=lambda p: p["asked"])
    p99 = "-" if best["p99_us"] is None else (f"{best['p99_us'] / 1000:,.2f} ms" if best["p99_us"] >= 1000
                                             else f"{best['p99_us']:,.0f} us")
    where = f" ({best['curve']})" if best["curve"] != "all steps" else ""
    return (f"highest rate held {best['asked']:,.0f} statements/s{where} (achieved {best['achieved']:,.0f}/s, "
            f"{best['step']}), p99 from the intended start {p99}{tail}")
