"""The history report (dbio history): every run and sweep found, in time order, and a trend chart per
configuration with the changes larger than the runs' own noise marked (pure: entries in, a model out)."""

from __future__ import annotations

import statistics
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

from dbio.report.tables import table
from dbio.stats import history
from dbio.stats.history import Entry

MAX_CHANGED = 3  # settings named in a row's "changed since the run before" (the rest are counted)
REASON_WIDTH = 60  # a verdict's first reason, cut to this in the table (the run's own report has them all)
TREND_GROUPS = 6  # configurations drawn in the trend chart (those with most runs)


def build(entries: Sequence[Entry], where: Sequence[str], unreadable: Sequence[str]) -> dict[str, Any]:
    ordered = history.group(list(entries))
    beyond = [(e, change) for e in ordered if (change := e.change) and change.beyond_noise]
    findings = [{"level": "warning", "code": "change_beyond_noise",
                 "message": f"{_when(e.when)} {Path(e.path).name}: reads/s {change.pct:+.1f}% against "
                            f"{change.against}: beyond the runs' noise"} for e, change in beyond]
    if unreadable:
        shown = "; ".join(unreadable[:5]) + (f"; and {len(unreadable) - 5} more" if len(unreadable) > 5 else "")
        findings.append({"level": "warning", "code": "unreadable", "message": f"not listed: {shown}"})
    runs = sum(e.kind == "run" for e in ordered)
    groups = sorted({e.group for e in ordered})
    span = f", from {_when(ordered[0].when)} to {_when(ordered[-1].when)}" if ordered else ""
    headline = (f"{runs} run{'s' * (runs != 1)} and {len(ordered) - runs} sweep{'s' * (len(ordered) - runs != 1)} "
                f"in {len(groups)} configuration{'s' * (len(groups) != 1)}{span}; {len(beyond)} change"
                f"{'s' * (len(beyond) != 1)} beyond the runs' noise")
    return {
        "format": "dbio-history", "format_version": 1, "kind": "history",
        "title": "dbio history: " + ", ".join(where),
        "run": {"status": "complete", "run_id": None, "dbio_version": None},
        "headline_text": headline, "headline": [], "findings": findings,
        "sections": [s for s in (_runs(ordered), _configurations(ordered)) if s["tables"]],
        "trend": _trend(ordered), "charts": [["history_trend", "trend"]],
    }


def _when(iso: str | None) -> str:
    if not iso:
        return "-"
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def _verdict(e: Entry) -> str:
    if e.valid is None:
        return "-"
    if e.valid:
        return "valid" if e.kind == "run" else f"valid ({e.reasons[0]})" if e.reasons else "valid"
    first = e.reasons[0] if e.reasons else "no reason recorded"
    first = first if len(first) <= REASON_WIDTH else first[:REASON_WIDTH - 3] + "..."
    more = f" (+{len(e.reasons) - 1} more)" if len(e.reasons) > 1 else ""
    return f"NOT VALID: {first}{more}"


def _change(e: Entry) -> Any:
    if e.change is None:
        return None
    return f"{e.change.pct:+.1f}% ({e.change.judged})"


def _changed(e: Entry) -> str:
    if not e.changed:
        return ""
    more = f" and {len(e.changed) - MAX_CHANGED} more" if len(e.changed) > MAX_CHANGED else ""
    return ", ".join(e.changed[:MAX_CHANGED]) + more


def _runs(ordered: list[Entry]) -> dict[str, Any]:
    rated = any(e.rate for e in ordered)  # --rate runs: their rate asked, achieved and held, in a column of its own
    rows = [[_when(e.when), Path(e.path).name + (f" ({e.steps} steps)" if e.steps else ""), e.group,
             e.reads_per_s, e.avg_read_us, e.writes_per_s, *([e.rate or "-"] if rated else []), _change(e),
             _verdict(e), _changed(e)] for e in ordered]
    return {"id": "runs", "title": "Runs and sweeps", "tables": [table(
        "runs", "", ["When", "Run", "Configuration", "Reads/s", "Avg read", "Writes/s", *(["Rate"] if rated else []),
                     "Reads/s vs earlier runs", "Verdict", "Changed since the run before"],
        ["text", "text", "text", "count", "us", "count", *(["text"] if rated else []), "text", "text", "text"], rows,
        ["a sweep's figures are its best valid step's; 'vs earlier runs': against the median of the same "
         f"configuration's earlier valid runs, judged by their spread, once it has {history.MIN_RUNS_FOR_SPREAD}; "
         "before that against its previous valid run, judged by the two runs' own interval noise, which cannot see "
         "run-to-run noise"])]}


def _configurations(ordered: list[Entry]) -> dict[str, Any]:
    rows = []
    for name in sorted({e.group for e in ordered}):
        members = [e for e in ordered if e.group == name]
        values = sorted(e.reads_per_s for e in members if e.reads_per_s is not None and e.valid is not False)
        median = statistics.median(values) if values else None
        spread = 100.0 * (values[-1] - values[0]) / median if values and median else None
        rows.append([name, len(members), len(values), median, values[0] if values else None,
                     values[-1] if values else None, spread])
    return {"id": "configurations", "title": "Configurations", "tables": [table(
        "configurations", "", ["Configuration", "Runs", "Valid", "Median reads/s", "Lowest", "Highest",
                               "Range (% of median)"],
        ["text", "count", "count", "count", "count", "count", "pct"], rows,
        ["over valid runs only: a run that did not measure storage says nothing of its speed"])]}


def _trend(ordered: list[Entry]) -> dict[str, Any]:
    by_group: dict[str, list[Entry]] = {}
    for e in ordered:
        if e.when and e.reads_per_s is not None:
            by_group.setdefault(e.group, []).append(e)
    kept = sorted(by_group, key=lambda g: -len(by_group[g]))[:TREND_GROUPS]
    return {g: {"t": [datetime.fromisoformat(e.when).timestamp() for e in by_group[g] if e.when],
                "reads_per_s": [e.reads_per_s for e in by_group[g]],
                "valid": [e.valid is not False for e in by_group[g]],
                "beyond": [bool(e.change and e.change.beyond_noise) for e in by_group[g]]}
            for g in kept}
