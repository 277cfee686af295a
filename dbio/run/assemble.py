"""Assembling result.json: from a finished run, or from what an abandoned run left on disk.

Both paths go through the same function: a manifest written when the run started (run.json:
configuration, server, setup, storage) plus the run's outcome. A run whose dbio process was
killed has no outcome in memory; `recover` rebuilds one from samples.jsonl, where every
interval was written (with its statement counts) as it ended.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from dbio import __version__
from dbio import jsondoc, shapes
from dbio import result as results
from dbio.collect import host
from dbio.config import Config, option_values
from dbio.engines.base import ServerInfo
from dbio.errors import UsageError
from dbio.run.identity import client_alive, client_id
from dbio.run.plan import SLICE_SECONDS, RunPlan
from dbio.run.runner import RunOutcome
from dbio.run.sessions import Clock
from dbio.run.tally import Tally
from dbio.stats import figures as figure_math
from dbio.stats import series as series_math
from dbio.stats import stalls as stall_math

MANIFEST_FILE = "run.json"


def manifest(config: Config, plan: RunPlan, info: ServerInfo, setup: dict[str, Any], storage: dict[str, Any],
             run_id: int) -> dict[str, Any]:
    return {
        "format": "dbio-run-manifest", "format_version": 1, "dbio_version": __version__,
        "run_id": run_id, "created": time.time(), "client": client_id(),
        "config": config.to_dict(), "options": option_values(config),
        "plan": {"warmup": plan.warmup, "run_time": plan.run_time, "interval": plan.interval,
                 "slice_seconds": plan.control["slice_seconds"], "bounds_us": list(plan.bounds_us)},
        "server": {"description": info.description, "version": info.caps.server_version,
                   "version_num": info.caps.version_num, "settings": info.settings,
                   "max_connections": info.max_connections, "shared_buffers_bytes": info.shared_buffers_bytes},
        "capabilities": info.caps.to_dict(),
        "setup": setup, "storage": storage, "host": host.host_facts(),
    }


def write_manifest(directory: Path, data: dict[str, Any]) -> None:
    (directory / MANIFEST_FILE).write_text(json.dumps(data, indent=1) + "\n")


def interval_statements(records: Iterable[dict[str, Any]], buckets: int) -> dict[int, dict[str, Any]]:
    """Each interval's statement counts as the samples file holds them (pure): the tally written
    with the interval's sample, plus slices that came back after it was written ("late_statements"
    of a later record)."""
    out: dict[int, dict[str, Any]] = {}
    late: dict[int, Tally] = {}
    for record in records:
        k = record.get("k")
        if record.get("statements") and isinstance(k, int) and k not in out:
            out[k] = record["statements"]
        for key, sparse in (record.get("late_statements") or {}).items():
            late.setdefault(int(key), Tally(buckets)).merge(Tally.from_sparse(sparse, buckets))
    for k, extra in late.items():
        if k in out:
            extra.merge(Tally.from_sparse(out[k], buckets))
        out[k] = extra.sparse()
    return out


def build(man: dict[str, Any], outcome: RunOutcome, engine: Any, samples: Callable[[], Iterable[dict[str, Any]]],
          directory_name: str, per_interval: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """result.json from the manifest and an outcome (live or recovered). samples() streams the run's
    sample records; it is read for the interval counts (unless per_interval already holds them),
    then for the series, and never held in memory whole."""
    clock = outcome.clock
    settings = man["server"]["settings"]
    plan = man["plan"]
    last_measured: dict[str, Any] | None = None
    if per_interval is None:
        per_interval = interval_statements(samples(), len(plan["bounds_us"]) + 1)

    def normalized() -> Iterator[dict[str, Any]]:
        nonlocal last_measured
        for s in samples():
            if s.get("engine"):
                if s.get("phase") == "measured":
                    last_measured = s
                yield {**s, "engine": engine.normalize(s["engine"])}
            elif s.get("missing"):
                yield s  # a gap in the series

    cores = man["host"].get("cpus") or os.cpu_count()
    series = series_math.per_interval(normalized(), per_interval, plan["bounds_us"], clock.start or 0.0,
                                      io_timing=_on(settings, "track_io_timing"), cores=cores) if clock.start else []
    if not clock.start:
        for _ in normalized():
            pass
    end, window_end = outcome.end, outcome.window_end
    events = list(outcome.events)
    if outcome.window_start is not None and (not end or not end.get("engine")) and last_measured is not None:
        # The end snapshot failed (server gone): the last sample that reached the engine closes the window.
        end, window_end = {"engine": last_measured["engine"], "os": last_measured.get("os")}, \
            last_measured["engine"]["t"]
        events.append({"t": window_end, "kind": "window_cut",
                       "message": "no end snapshot: the figures end at the last sample that reached the server"})
    normalized_ends = {name: engine.normalize(reading["engine"]) if reading and reading.get("engine") else None
                       for name, reading in (("begin", outcome.begin), ("end", end))}
    window_seconds = None
    if outcome.window_start is not None and window_end is not None:
        window_seconds = max(0.0, window_end - outcome.window_start)
    bounds = plan["bounds_us"]
    histograms = outcome.totals.histograms(bounds)
    w = man["config"]["workload"]
    caps = man["capabilities"]
    if window_seconds and normalized_ends["begin"] and normalized_ends["end"]:
        figures = figure_math.derive({
            "seconds": window_seconds, "engine_begin": normalized_ends["begin"],
            "engine_end": normalized_ends["end"],
            "totals": outcome.totals.counts(), "histograms": histograms,
            "os_begin": outcome.begin.get("os") if outcome.begin else None, "os_end": end.get("os") if end else None,
            "cores": cores, "shared_buffers": man["server"]["shared_buffers_bytes"],
            "data_bytes": w["scale"] * w["schemas"] * 8192, "direct_io": caps["direct_io"], "local": caps["local"],
            "io_timing": _on(settings, "track_io_timing"), "wal_io_timing": _on(settings, "track_wal_io_timing"),
            "work_unit": w["work_unit"]})
    else:
        figures = {"window_seconds": None}
    return {
        "format": results.FORMAT, "format_version": results.FORMAT_VERSION, "dbio_version": __version__,
        "run_id": f"{outcome.run_id:x}", "label": man["config"]["run"]["label"] or directory_name,
        "status": outcome.status, "status_reason": outcome.reason,
        "created_at": results.iso(man["created"]),
        "timeline": {
            "start": results.iso(clock.start), "window_open": results.iso(clock.window_open),
            "deadline": results.iso(clock.deadline), "window_start": results.iso(outcome.window_start),
            "window_end": results.iso(window_end), "window_seconds": window_seconds,
            "warmup_seconds": plan["warmup"], "connect_seconds": round(outcome.connect_seconds, 3),
            "start_seconds": round(outcome.start_seconds, 3), "slice_seconds": plan["slice_seconds"],
            "interval_seconds": plan["interval"],
        },
        "config": man["config"],
        "setup": man["setup"],
        "environment": {
            "dbio": __version__, "host": man["host"], "client": man["client"],
            "server": {k: v for k, v in man["server"].items() if k != "shared_buffers_bytes"},
            "storage": man["storage"],
        },
        "capabilities": caps,
        "plans": outcome.plans,
        "sessions": [s.summary() for s in outcome.sessions],
        "events": events,
        "snapshots": {"begin": outcome.begin, "end": end},
        "normalized": normalized_ends,
        "totals": outcome.totals.counts(),
        "histograms": histograms,
        "interval_statements": {str(k): v for k, v in sorted(per_interval.items())},
        "series": series,
        "stalls": _stalls(series, clock, outcome.window_start, man["config"]["workload"]),
        "waits": {"samples": outcome.wait_samples, "counts": outcome.waits,
                  "interval_seconds": man["config"]["run"]["wait_sample_interval"]},
        "monitor_errors": outcome.monitor_errors,
        "figures": figures,
        "files": {"samples": results.SAMPLES_FILE, "report": results.REPORT_FILE, "html": results.HTML_REPORT_FILE},
    }


def _stalls(series: list[dict[str, Any]], clock: Clock, window_start: float | None,
            workload: dict[str, Any]) -> list[dict[str, Any]]:
    """The window's stalls; a session thinking longer than a stall is not one."""
    if clock.start is None or window_start is None:
        return []
    thinking = (workload.get("think_time_max") or 0.0) if workload.get("think_time_frequency") else 0.0
    return stall_math.find(series, window_start - clock.start,
                           min_seconds=max(stall_math.STALL_SECONDS, thinking + SLICE_SECONDS))


def _on(settings: dict[str, Any], name: str) -> bool:
    return (settings.get(name) or {}).get("setting") == "on"


# -- runs their dbio process never finished --------------------------------------------------

RESCUE_MARK = "rescued-from"


def rescue_bases() -> list[Path]:
    """Where results go when their run directory cannot be written (the first that can be made)."""
    import platformdirs
    import tempfile

    return [platformdirs.user_state_path("dbio") / "rescued", Path(tempfile.gettempdir()) / "dbio-rescued"]


def rescued_runs() -> set[str]:
    """Run directories whose result was written to a rescue directory instead."""
    origins = set()
    for base in rescue_bases():
        for mark in base.glob(f"*/{RESCUE_MARK}") if base.is_dir() else []:
            try:
                origins.add(mark.read_text().strip())
            except OSError:
                continue
    return origins


def abandoned(results_dir: Path) -> list[Path]:
    """Run directories (also inside sweeps) with a manifest, no result, and no live dbio process.
    A run whose result was rescued elsewhere is not abandoned."""
    found: list[Path] = []
    if not results_dir.is_dir():
        return found
    rescued = rescued_runs()
    for manifest_path in list(results_dir.glob(f"*/{MANIFEST_FILE}")) + list(results_dir.glob(f"*/*/{MANIFEST_FILE}")):
        directory = manifest_path.parent
        if (directory / results.RESULT_FILE).exists() or str(directory) in rescued:
            continue
        try:
            man = json.loads(manifest_path.read_bytes())
        except (OSError, ValueError):
            continue  # not yet written whole, or unreadable: nothing to recover from
        client = man.get("client") if isinstance(man, dict) else None
        if not isinstance(client, str) or not client_alive(client):  # recover() says what is wrong
            found.append(directory)
    return sorted(found)


def read_manifest(directory: Path) -> dict[str, Any]:
    """run.json, checked against what `build` reads (UsageError naming the file otherwise)."""
    path = directory / MANIFEST_FILE
    man = results.load(path, "the run cannot be recovered; remove its directory")
    try:
        jsondoc.check(man, shapes.MANIFEST)
    except jsondoc.Malformed as exc:
        raise UsageError(f"{path}: {exc}", "the run cannot be recovered; remove its directory") from None
    return man


def recover(directory: Path, engine: Any) -> dict[str, Any]:
    """result.json for a run whose dbio process died: figures up to its last sample, marked lost.
    Lines of samples.jsonl that cannot be read are skipped; the result's events say how many."""
    man = read_manifest(directory)
    samples_path = directory / results.SAMPLES_FILE
    skipped: list[str] = []
    plan = man["plan"]
    warmup = plan["warmup"]
    buckets = len(plan["bounds_us"]) + 1
    start = begin = end = None
    last_t = None
    waits: dict[str, int] = {}
    for sample in results.iter_samples(samples_path, skipped):  # one pass: the file may be long
        last_t = sample.get("t", last_t)
        if sample.get("k") == 0:
            start = sample["t"]
        if not sample.get("engine"):
            continue
        if sample.get("k") == int(warmup):
            begin = sample
        if sample.get("phase") != "measured":
            continue
        end = sample
        for event, count in (sample.get("waits") or {}).items():
            waits[event] = waits.get(event, 0) + count
    per_interval = interval_statements(results.iter_samples(samples_path), buckets)
    totals = Tally(buckets)
    for counts in per_interval.values():
        totals.merge(Tally.from_sparse(counts, buckets))
    clock = Clock(start=start, window_open=None if start is None else start + warmup,
                  deadline=None if start is None or not plan["run_time"] else start + warmup + plan["run_time"],
                  warmup=warmup)
    reason = (f"the dbio process ({man['client']}) ended before the run finished; the figures cover the window up "
              f"to its last sample ({results.iso(last_t)})")
    outcome = RunOutcome(
        status="lost", reason=reason, run_id=int(man["run_id"]), clock=clock,
        sessions=[], begin=_reading(begin), end=_reading(end),
        window_start=begin["engine"]["t"] if begin else None,
        window_end=end["engine"]["t"] if end else None,
        totals=totals, waits=waits, wait_samples=None, plans={},
        connect_seconds=0.0, start_seconds=0.0,
        events=[{"t": last_t, "kind": "lost", "message": reason},
                {"t": time.time(), "kind": "recovered",
                 "message": f"result rebuilt from samples.jsonl by dbio on {platform.node()}"}]
        + ([skipped_event(skipped)] if skipped else []))
    return build(man, outcome, engine, lambda: results.iter_samples(samples_path), directory.name, per_interval)


def skipped_event(skipped: list[str]) -> dict[str, Any]:
    """The event that records the lines of samples.jsonl a recovery could not use."""
    return {"t": time.time(), "kind": "samples_skipped", "skipped_lines": len(skipped),
            "message": f"{len(skipped)} line{'s' if len(skipped) != 1 else ''} of {results.SAMPLES_FILE} could not be "
                       f"read and {'were' if len(skipped) != 1 else 'was'} skipped (first: {skipped[0]})"}


def _reading(sample: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if sample is None else {"engine": sample.get("engine"), "os": sample.get("os")}
