"""The --event records of merged runs (pure): each input's events kept, named with the input (and part) that ran
them, their start and end on the merged window's clock, and their figures computed again over the merged
per-interval curve, the whole of what the servers did rather than one input's view of it.

A run in parts runs each event on one part's side (dbio/disruption.py's of_part): the merge is where the event
meets the other parts' work. The merged curve is the sum, interval by interval, of each server's curve once: one
server's counters (a part's series reads the server's whole reads/s, every part's sessions' included) are taken
from one input, the grid input (the one that ran the event when it ran against that server); another server's
curve is added over each of the grid's spans as the work it did in that span (its rates times their overlap),
and a span that another server's curve does not wholly cover has no figure (a gap stays a gap). The SELECTs'
p99 of a summed curve would be no percentile of anything: where several servers' curves are summed the merged
dip has none, and the part's own p99 figures stay in its own record (`ran_by_figures`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Sequence

from dbio.stats import disruptions as dips

RATES = ("reads_per_s", "writes_per_s")
COVERED = 0.999  # of a span's seconds another curve must cover for their sum to have a figure there


def merged(inputs: Sequence[tuple[str, dict[str, Any]]], window_start: float, window_seconds: float | None,
           server_of: Callable[[str, dict[str, Any]], str | None]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the events' records, their figures) for the merged result; ([], []) where no input ran an event.
    window_start: the merged window's opening (epoch seconds); server_of(name, doc): an input's server identity."""
    records: list[dict[str, Any]] = []
    ran_by: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
    for name, doc in inputs:
        shift = _opened(doc) - window_start
        theirs = [d for d in (doc.get("figures") or {}).get("disruptions") or [] if isinstance(d, dict)]
        for i, record in enumerate(r for r in doc.get("disruptions") or [] if isinstance(r, dict)):
            part = (doc.get("part") or {}).get("index")
            fine = record.get("fine_samples")
            if isinstance(fine, dict):  # its fine samples on the merged window's clock too
                fine = {**fine, "samples": [[_shifted(t, shift), since] for t, since in fine.get("samples") or []]}
            records.append({**record, "ran_by": name, **({"part": part} if part else {}),
                            "start_s": _shifted(record.get("start_s"), shift),
                            "end_s": _shifted(record.get("end_s"), shift),
                            **({"fine_samples": fine} if fine is not None else {})})
            ran_by.append((name, doc, theirs[i] if i < len(theirs) else None))
    if not records:
        return [], []
    writes = bool(((inputs[0][1].get("config") or {}).get("workload") or {}).get("update_pct"))
    figures = []
    for k, (record, (name, doc, own)) in enumerate(zip(records, ran_by)):
        rows = curve(inputs, name, window_start, server_of)  # the grid: the server's curve as this input read it
        dip = dips.disruptions(records, rows, 0.0, window_seconds, writes=writes)[k]
        dip.update(ran_by=name, **({"part": record["part"]} if record.get("part") else {}))
        if own is not None:  # the part's own figures, as its result had them (its p99 among them)
            dip["ran_by_figures"] = {k: own[k] for k in ("floor_reads_per_s", "floor_pct", "seconds_below_90pct",
                                                          "recovery_seconds", "reads_lost", "before_select_p99_us",
                                                          "during_select_p99_us") if k in own}
        figures.append(dip)
    return records, figures


def curve(inputs: Sequence[tuple[str, dict[str, Any]]], grid_name: str, window_start: float,
          server_of: Callable[[str, dict[str, Any]], str | None]) -> list[dict[str, Any]]:
    """The merged per-interval curve, as measured series rows on the merged window's clock (work_to: seconds
    into it): each server's curve once, the grid input's for its server, summed over the grid's spans."""
    by_server: dict[str, tuple[str, dict[str, Any]]] = {}
    grid = next((name, doc) for name, doc in inputs if name == grid_name)
    grid_server = server_of(*grid) or f"#{grid_name}"
    by_server[grid_server] = grid
    for name, doc in inputs:
        key = server_of(name, doc) or f"#{name}"
        by_server.setdefault(key, (name, doc))
    others = [_spans(doc, window_start) for key, (name, doc) in by_server.items() if key != grid_server]
    return summed(_spans(grid[1], window_start), others)


def summed(grid: list[dict[str, Any]], others: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each of the grid's spans with every other curve's work over it added (its rates times their overlap, over
    the span's seconds); a span another curve does not wholly cover has no figure of that rate. p99: the grid's
    only when nothing was added."""
    out = []
    for span in grid:
        row = {"phase": "measured", "seconds": span["seconds"], "work_to": span["to"],
               "select_p99_us": span["select_p99_us"] if not others else None}
        for key in RATES:
            value = span.get(key)
            for other in others:
                if value is None:
                    break
                pieces = [(o[key], _overlap(o, span)) for o in other if o.get(key) is not None]
                covered = sum(seconds for _, seconds in pieces)
                value = (value + sum(v * s for v, s in pieces) / span["seconds"]
                         if covered >= COVERED * span["seconds"] else None)
            row[key] = value
        out.append(row)
    return out


def _spans(doc: dict[str, Any], window_start: float) -> list[dict[str, Any]]:
    """An input's measured rows as spans on the merged window's clock (stats/disruptions.spans' reading of them),
    each with its rates."""
    timeline = doc.get("timeline") or {}
    opened = _opened(doc)
    offset = opened - _epoch(timeline.get("start"), opened)  # its window's opening, seconds after its start
    shift = opened - window_start
    out = []
    for row in doc.get("series") or []:
        spans = dips.spans([row], offset, "reads_per_s") or dips.spans([row], offset, "writes_per_s")
        if not spans:
            continue
        span = spans[0]
        out.append({"from": span["from"] + shift, "to": span["to"] + shift, "seconds": span["seconds"],
                    "select_p99_us": row.get("select_p99_us"), **{k: row.get(k) for k in RATES}})
    return out


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> float:
    return max(0.0, min(a["to"], b["to"]) - max(a["from"], b["from"]))


def _shifted(value: Any, shift: float) -> float | None:
    return None if not isinstance(value, (int, float)) else round(float(value) + shift, 3)


def _opened(doc: dict[str, Any]) -> float:
    return _epoch((doc.get("timeline") or {}).get("window_start"), 0.0)


def _epoch(iso: Any, default: float) -> float:
    try:
        return datetime.fromisoformat(str(iso)).timestamp() if iso else default
    except ValueError:
        return default
