"""The Disruptions section (pure), right after the verdict: what each --event did to the workload (figures.disruptions,
stats/disruptions.py), one row per event, the writes' table beside it in an update run; the verdict's rule on an
event the workload did not recover from; the events' bands for the per-interval charts (report/charts.py)."""

from __future__ import annotations

from typing import Any

from dbio.report.finding import Finding
from dbio.report.tables import table
from dbio.result_records import Result
from dbio.stats import catalogue
from dbio.units import format_bytes

COLUMNS = ["Event", "Start s", "End s", "Before/s", "Noise/s", "Floor/s", "Floor %", "Below 90% s", "Recovery s",
           "Lost", "p99 before us", "p99 during us"]
KINDS = ["text", "seconds", "seconds", "rate", "rate", "rate", "pct", "seconds", "seconds", "count", "us", "us"]


def section(r: Result) -> dict[str, Any]:
    found = catalogue.disruptions(r.figures)
    if not found:
        return {"id": "disruptions", "title": "Disruptions"}
    tables = [table("disruption_reads", "Reads (the engine's reads/s)", COLUMNS, KINDS,
                    [_row(d, d) for d in found], _notes(found, r))]
    if any(isinstance(d.get("writes"), dict) for d in found):
        tables.append(table("disruption_writes", "Writes (the engine's writes/s)", COLUMNS, KINDS,
                            [_row(d, d.get("writes") or {}, writes=True) for d in found], []))
    return {"id": "disruptions", "title": "Disruptions", "tables": tables, "charts": ["series_iops"]}


def _row(event: dict[str, Any], dip: dict[str, Any], *, writes: bool = False) -> list[Any]:
    before = dip.get("before") or {}
    per_s = "before_per_s" if writes else "before_reads_per_s"
    floor = "floor_per_s" if writes else "floor_reads_per_s"
    lost = "lost" if writes else "reads_lost"
    return [_name(event), event.get("start_s"), event.get("end_s"), dip.get(per_s), before.get("noise_per_s"),
            dip.get(floor), dip.get("floor_pct"), dip.get("seconds_below_90pct"), dip.get("recovery_seconds"),
            dip.get(lost), dip.get("before_select_p99_us"), dip.get("during_select_p99_us")]


def _name(event: dict[str, Any]) -> str:
    outcome = event.get("outcome")
    return str(event.get("event")) + ("" if outcome in (None, "done") else f" ({outcome})")


def _notes(found: list[dict[str, Any]], r: Result) -> list[str]:
    notes = ["Before: the rate over up to 10 s of intervals before the event, its noise their standard deviation; "
             "floor: the lowest interval from the event's start; recovery: from its end to three intervals in a row "
             "within twice the noise of before; lost: the area between before and the curve. Each rate is over the "
             "span of work its interval measured: a span the event froze is one interval of its own length."]
    for d in found:
        why = d.get("absent") or d.get("not_recovered")
        if why:
            notes.append(f"{d.get('event')}: {why}")
        if d.get("node") and isinstance(d.get("other_nodes"), dict):
            others = "; ".join(f"{name}'s floor {o.get('floor_pct')}% of its before" for name, o in
                               sorted(d["other_nodes"].items()))
            notes.append(f"{d.get('event')}: measured on {d['node']}'s sessions, the node it acted on ({others}; the "
                         f"run as a whole's {(d.get('run') or {}).get('floor_pct')}%)")
        lag = d.get("rate") or {}
        if lag.get("behind"):
            before = (lag.get("lag_before_us") or 0) / 1000
            notes.append(f"{d.get('event')}: --rate's schedule fell behind during it (mean lag up to "
                         f"{lag['lag_during_us'] / 1000:,.0f} ms, before it {before:,.1f} ms): the rate was broken "
                         "for its seconds, whatever the window's average says")
        fine: dict[str, Any] = d["fine"] if isinstance(d.get("fine"), dict) else {}
        if fine.get("resolution_seconds"):
            recovery = fine.get("recovery_seconds")
            notes.append(f"{d.get('event')}: from {fine.get('step_seconds'):g} s samples of the {fine.get('source')}"
                         f" (spans up to {fine['resolution_seconds']:g} s): floor {fine.get('floor_pct')}% of before, "
                         f"{fine.get('seconds_below_90pct')} s below 90%, "
                         + ("not recovered" if recovery is None else f"recovered {recovery} s after its end"))
        if d.get("ran_by"):
            notes.append(f"{d.get('event')}: run by {d['ran_by']}" + (f" (part {d['part']})" if d.get("part") else "")
                         + "; its figures are over the merged curve, the server's as a whole")
        if (d.get("resolution_seconds") or 0) > 1.5:
            notes.append(f"{d.get('event')}: its lowest interval spans {d['resolution_seconds']:g} s (no session's "
                         "work was counted in between)")
    for record in r.disruption_events:
        done = record.get("checkpoint")
        if isinstance(done, dict):
            notes.append(f"{record.get('event')}: the checkpoint took {done.get('seconds')} s and wrote "
                         f"{done.get('buffers_written')} buffers (write {done.get('write_ms')} ms, sync "
                         f"{done.get('sync_ms')} ms)")
        done = record.get("vacuum")
        if isinstance(done, dict):
            notes.append(f"{record.get('event')}: VACUUM of {len(done.get('tables') or [])} table(s) took "
                         f"{done.get('seconds')} s and wrote {format_bytes(done.get('wal_bytes') or 0)} of WAL")
        done = record.get("index")
        if isinstance(done, dict):
            notes.append(f"{record.get('event')}: dbio's index re-created on {len(done.get('indexes') or [])} "
                         f"table(s) in {done.get('seconds')} s ({format_bytes(done.get('index_bytes') or 0)})")
        done = record.get("backup")
        if isinstance(done, dict):
            notes.append(f"{record.get('event')}: the backup wrote {format_bytes(done.get('bytes') or 0)} to "
                         f"{done.get('target')} in {done.get('seconds'):.1f} s")
        if record.get("program"):
            read = record.get("read_bytes")
            notes.append(f"{record.get('event')}: {record['program']} exited with status {record.get('exit_status')}"
                         + (f", having read {format_bytes(read)} from storage by its own accounting (it and the "
                            "programs it waited for): another reader of the devices" if read else "")
                         + f"; its output is {record.get('output')}")
        if record.get("error"):
            notes.append(f"{record.get('event')}: {record['error']}")
    return notes


def not_recovered(r: Result) -> Finding | None:
    """An event the workload had not recovered from when the window ended: the window's averages hold its dip to
    the end."""
    late = [d for d in catalogue.disruptions(r.figures) if d.get("not_recovered")]
    if not late:
        return None
    names = ", ".join(str(d.get("event")) for d in late)
    return Finding("warning", "not_recovered", f"the workload had not recovered from {names} when the window "
                   "ended: its reads/s stayed below the steady state before it, and the window's averages hold the "
                   "dip", "disruptions.recovery_seconds", None)


def not_recovered_caveat(r: Result, finding: Finding) -> str:
    """The headline's caveat of an event not recovered from (report/verdict_rules.py)."""
    late = [str(d.get("event")) for d in catalogue.disruptions(r.figures) if d.get("not_recovered")]
    return f"not recovered from {', '.join(late) or 'an event'} by the window's end"


def bands(r: Result) -> list[list[Any]]:
    """[from_s, to_s, name] of each event that happened, seconds into the window (the charts' x axis)."""
    return [[d["start_s"], d["end_s"], str(d.get("event"))] for d in catalogue.disruptions(r.figures)
            if isinstance(d.get("start_s"), (int, float)) and isinstance(d.get("end_s"), (int, float))]



FINE_RESOLUTION = catalogue.member(catalogue.DISRUPTION_FINE_FIGURES, "fine_resolution_seconds")


def compare_section(named: list[tuple[str, Result]]) -> dict[str, Any]:
    """dbio compare: the events of each input side by side (the n-th event of each against the others' n-th: two
    arrays' failovers at one offset), one table per event position, a row per figure (each cell with its kind)."""
    each = [(name, catalogue.disruptions(r.figures)) for name, r in named]
    most = max((len(found) for _, found in each), default=0)
    if most == 0:
        return {"id": "disruptions", "title": "Disruptions"}
    tables = []
    for i in range(most):
        events = [found[i] if i < len(found) else {} for _, found in each]
        rows: list[list[Any]] = [["Event", *[e.get("event") for e in events]],
                ["Start s", *[{"value": e.get("start_s"), "kind": "seconds"} for e in events]],
                ["End s", *[{"value": e.get("end_s"), "kind": "seconds"} for e in events]]]
        # a short event seen finer (its quarter-second samples) on either side: those figures beside
        fine = catalogue.DISRUPTION_FINE_FIGURES if any(FINE_RESOLUTION.value(e) for e in events) else ()
        rows += [[fig.label, *[{"value": fig.value(e), "kind": fig.kind} for e in events]]
                 for fig in (*catalogue.DISRUPTION_FIGURES, *fine)]
        rows.append(["Recovered", *["-" if not e else "no" if e.get("not_recovered") else "yes" for e in events]])
        tables.append(table(f"disruption_{i + 1}", f"Event {i + 1}", ["", *[name for name, _ in each]],
                            ["text"] * (len(events) + 1), rows, []))
    return {"id": "disruptions", "title": "Disruptions", "tables": tables}
