"""The raw-device baseline in a report (pure): the efficiency line a report opens with, and the
Baseline section (the database beside fio at the same sessions, fio's version and exact options).

Figures are read through the catalogue; the record (what fio ran, when) is the result's `baseline`."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from dbio.report.tables import table
from dbio.result_context import Baseline, FioRun
from dbio.result_records import Result, Timeline
from dbio.stats import catalogue
from dbio.stats.catalogue import value

EFFICIENCY = catalogue.figures("efficiency_reads", "efficiency_latency", "efficiency_cpu", "efficiency_reader_cpu")
SIDE_BY_SIDE = (  # row, the database's figure, fio's figure, their ratio
    ("Reads/s", "reads_per_s", "raw_reads_per_s", "efficiency_reads"),
    ("Avg read (us)", "avg_read_us", "raw_avg_read_us", "efficiency_latency"),
    ("Host CPU per read (us)", "host_cpu_us_per_read", "raw_host_cpu_us_per_read", "efficiency_cpu"),
    ("Readers' own CPU per read (us)", "db_cpu_us_per_read", "raw_process_cpu_us_per_read", "efficiency_reader_cpu"),
)
WRITE_SIDE = (  # row, the database's figure, the raw one (a run with updates)
    ("Avg data write (us)", "avg_write_us", "raw_avg_write_us"),
    ("Avg WAL sync (us)", "avg_wal_sync_us", "raw_avg_wal_sync_us"),
)


def efficiency_line(doc: Result) -> str | None:
    """'database efficiency at 4 sessions: 0.88 of the device's synchronous reads, ...'; None
    without a baseline beside a measured window."""
    f = dict(doc.figures)
    phrases = [str(fig.phrase).format(fig.value(f)) for fig in EFFICIENCY if fig.value(f) is not None]
    low, high = value(f, "efficiency_reads_low"), value(f, "efficiency_reads_high")
    if phrases and value(f, "efficiency_reads") is not None and low is not None and high is not None:
        rounds = (f.get("baseline") or {}).get("rounds")
        phrases[0] += f" ({low:.2f}-{high:.2f} over fio's {rounds} rounds)"
    scans = value(f, "scan_bandwidth_share")
    if catalogue.scans_dominate(f) and scans is not None:  # scans: fio's sequential bandwidth is their yardstick
        phrases = [f"its scans {scans:.2f} of the device's sequential bandwidth ({value(f, 'scan_mib_per_s'):,.1f} "
                   f"vs fio's {value(f, 'raw_seq_read_mib_per_s'):,.1f} MiB/s; fio's random reads, in the Baseline "
                   "table, are not theirs)"]
        return f"Database efficiency: {phrases[0]}"
    if not phrases:
        return None
    sessions = value(f, "raw_reads_per_s") and (f.get("baseline") or {}).get("sessions")
    at = f" at {sessions} session{'s' if sessions != 1 else ''}" if sessions else ""
    ceiling = value(f, "efficiency_ceiling")
    tail = f" ({ceiling:.2f} of the device's deep-queue ceiling)" if ceiling is not None else ""
    return f"Database efficiency{at}: {', '.join(phrases)}{tail}"


def section(r: Result) -> dict[str, Any]:
    rec = r.baseline
    if rec is None:
        return {"id": "baseline", "title": "Baseline"}
    f = dict(r.figures)
    rows = [[label, value(f, db), value(f, raw), value(f, ratio)] for label, db, raw, ratio in SIDE_BY_SIDE]
    rows += [[label, value(f, db), value(f, raw), _ratio(value(f, db), value(f, raw))]
             for label, db, raw in WRITE_SIDE if value(f, raw) is not None]
    compared = table("baseline", "The database and fio at the same sessions", ["", "Database", "Raw (fio)",
                                                                                 "Database / raw"],
                     ["text", "rate", "rate", "rate"], rows,
                     ["Raw: fio's O_DIRECT synchronous random reads of the engine's page size, one job per session, "
                      "half right before the database's run and half right after (pooled, with further rounds after it "
                      "while the two disagreed by over 1.2x), host CPU from /proc/stat "
                      "over its runs; readers' own CPU: the sessions' processes against fio's jobs while they read, "
                      "which other work on the host does not move."])
    runs = [_run_row(name, run) for name, run in rec.runs.items()]
    writes = rec.writes
    if writes is not None:
        runs.append(["random writes (scratch file)", f"{writes.jobs} x 1", writes.writes_per_s, writes.avg_write_us,
                     writes.p99_write_us, writes.host_cpu_us_per_write, writes.process_cpu_us_per_write,
                     writes.seconds])
    fio_runs = table("baseline_runs", "fio's runs", ["Run", "Jobs x depth", "Reads/s", "Avg read", "p99 read",
                                                      "Host CPU/read", "fio's CPU/read", "Seconds"],
                     ["text", "text", "rate", "us", "us", "us", "us", "seconds"], runs)
    return {"id": "baseline", "title": "Baseline (raw device, fio)", "tables": [compared, fio_runs],
            "lines": _lines(rec, r.timeline)}


def _ratio(database: float | None, raw: float | None) -> float | None:
    return database / raw if database is not None and raw else None


def _run_row(name: str, run: FioRun) -> list[Any]:
    label = {"sync": "synchronous (psync), before", "sync_after": "synchronous (psync), after",
             "deep": f"ceiling ({run.engine})", "sequential": f"sequential 1 MiB ({run.engine})"}.get(name, name)
    if name.startswith("sync_more_"):  # a further round: the device had changed speed meanwhile
        label = f"synchronous (psync), after, round {int(name.rsplit('_', 1)[1]) + 1}"
    return [label, f"{run.jobs} x {run.iodepth}", run.reads_per_s, run.avg_read_us, run.p99_read_us,
            run.host_cpu_us_per_read, run.process_cpu_us_per_read, run.seconds]


def _lines(rec: Baseline, timeline: Timeline) -> list[str]:
    lines = [f"{rec.version or 'fio'} read {rec.place} ({rec.files} file(s))"]
    started, ended = rec.started_at, rec.ended_at
    if started is not None and ended is not None:
        lines.append(f"fio ran {_clock(started)} to {_clock(ended)} UTC ({ended - started:.1f} s), right before the "
                     f"database's run (window {_window(timeline)})")
    after = rec.runs.get("sync_after")
    if after is not None and after.started_at is not None and after.ended_at is not None:
        lines.append(f"and again {_clock(after.started_at)} to {_clock(after.ended_at)} UTC, right after it: the raw "
                     "synchronous figures pool both runs")
    if rec.after_skipped:
        lines.append(f"fio's run after the database's did not complete ({rec.after_skipped}): the raw figures are "
                     "from the run before it only")
    for name, run in rec.runs.items():
        lines.append(f"fio {name}: fio {' '.join(run.options)}")
    if rec.writes is not None:
        lines.append(f"fio writes: fio {' '.join(rec.writes.options)}")
    redo = rec.redo_sync
    if redo is not None:
        lines.append(f"redo log sync test: {_number(redo.syncs_per_s)} syncs/s, {_number(redo.avg_sync_us)} "
                     f"us each ({redo.method}, one 8 KiB write per sync): {' '.join(redo.command)}")
    return lines


def _number(x: Any) -> str:
    return f"{x:,.0f}" if isinstance(x, (int, float)) else "?"


def _clock(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%H:%M:%S")


def _window(timeline: Timeline) -> str:
    start, end = timeline.window_start, timeline.window_end
    if isinstance(start, str) and isinstance(end, str):
        return f"{start[11:19]} to {end[11:19]} UTC"
    return "not measured"
