"""Assembling result.json: from a finished run, or from what an abandoned run left on disk.

Both paths go through the same function: a manifest written when the run started (run.json:
configuration, server, setup, storage) plus the run's outcome. A run whose dbio process was
killed has no outcome in memory; `recover` rebuilds one from samples.jsonl, where every
interval was written (with its statement counts) as it ended.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from dbio import __version__
from dbio import engines, jsondoc, parts, shapes, trust
from dbio import result as results
from dbio.collect import host
from dbio.config import Config, option_values
from dbio.engines.base import Engine, ServerInfo
from dbio.errors import UsageError
from dbio.filesystem import write_whole
from dbio.run.identity import client_alive, client_id
from dbio.run import agreed, dealing
from dbio.run.nodes import STANDBY, Node
from dbio.run.plan import SLICE_SECONDS, RunPlan
from dbio.run.readings import ONLY_NODE, answered, normalized, raw_nodes, reading_time
from dbio.run.runner import RunOutcome
from dbio.run.sessions import Clock, Session
from dbio.run.tally import Tally
from dbio.stats import figures as figure_math
from dbio.stats import resets
from dbio.stats import series as series_math
from dbio.stats import stalls as stall_math

MANIFEST_FILE = results.RUN_MANIFEST


Normalize = Callable[[str, dict[str, Any]], dict[str, Any]]  # (node name, raw snapshot) -> neutral counters


def normalizer(engines: dict[str, Engine]) -> Normalize:
    """Each node's raw snapshots normalized by that node's engine."""
    return lambda node, raw: engines[node].normalize(raw)


def manifest(config: Config, plan: RunPlan, nodes: list[Node], setup: dict[str, Any], storage: dict[str, Any],
             run_id: int) -> dict[str, Any]:
    """run.json: what a run's result is built from besides its outcome. "server" and "capabilities"
    are the first node's (what format-1 readers read); "nodes" has every node's."""
    described = [{"name": n.name, "engine": n.engine.name, "role": n.role, "server": _server(n.info),
                  "capabilities": n.info.caps.to_dict(), "devices": sorted(n.devices), "weight": n.weight}
                 for n in nodes]
    return {
        "format": "dbio-run-manifest", "format_version": 2, "dbio_version": __version__,
        "run_id": run_id, "created": time.time(), "client": client_id(),
        "config": config.to_dict(), "options": option_values(config),
        "plan": {"warmup": plan.warmup, "run_time": plan.run_time, "interval": plan.interval,
                 "slice_seconds": plan.control["slice_seconds"], "bounds_us": list(plan.bounds_us),
                 "window_at": None if plan.start is None else plan.start + plan.warmup},
        "server": described[0]["server"], "capabilities": described[0]["capabilities"], "nodes": described,
        "setup": setup, "storage": storage, "host": host.host_facts(),
        "part": None if (part := parts.of_config(config.run.part, config.run.run_id, config.run.start_at,
                                                 config.to_dict()["workload"])) is None else part.to_dict(),
    }


def _server(info: ServerInfo) -> dict[str, Any]:
    # identity: the server itself, however it was reached (dbio merge takes its counters once)
    return {"description": info.description, "identity": info.identity, "version": info.caps.server_version,
            "version_num": info.caps.version_num, "settings": info.settings,
            "max_connections": info.max_connections, "cache_bytes": info.cache_bytes}


def manifest_nodes(man: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes of a manifest; one written before nodes existed describes its one node at the top."""
    if man.get("nodes"):
        return man["nodes"]
    return [{"name": ONLY_NODE, "engine": man["capabilities"].get("engine"), "role": "primary",
             "server": man["server"], "capabilities": man["capabilities"]}]


def write_manifest(directory: Path, data: dict[str, Any]) -> None:
    write_whole(directory / MANIFEST_FILE, json.dumps(data, indent=1) + "\n")


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


def window_limits(begin: dict[str, Any] | None, end: dict[str, Any] | None, key: str) -> list[dict[str, Any]]:
    """The limits read at the window's two ends (pure): the begin's, and each of the end's that differs (a
    quota or an I/O limit set during the window held the server for part of it), each once."""
    out: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    for reading in (begin, end):
        for entry in ((reading or {}).get("os") or {}).get(key) or []:
            same = {k: v for k, v in entry.items() if k != "pids"}  # its sessions' count may differ
            if same not in seen:
                seen.append(same)
                out.append(entry)
    return out


def without_ended_sessions(end: dict[str, Any] | None, sessions: list[Session]) -> dict[str, Any] | None:
    """The window's end reading without what it holds of sessions that had failed by then (pure), each part at
    its own clock. Their /proc figures: a process that ended is gone from it anyway, but a thread a server keeps
    for the next connection (MariaDB's thread cache) goes on counting another client's work under the session's
    id. And the engine's count of the run's own sessions' I/O, which forgot theirs when they ended (MariaDB's
    per-thread summaries, PostgreSQL's per-backend statistics): other sessions would seem to have done their
    I/O (seen: "other sessions did 94.2% of the client sessions' reads" after one of two was killed). Either way
    the figures are then absent (stats/figures.py)."""
    failed = [s for s in sessions if s.state == "failed" and s.failed_at is not None]
    if not end or not failed:
        return end
    out = dict(end)
    os_end = end.get("os")
    if os_end and os_end.get("t") is not None:
        ended = {str(s.pid) for s in failed if s.pid and s.failed_at <= os_end["t"]}
        if ended:
            out["os"] = {key: {pid: v for pid, v in value.items() if pid not in ended}
                         if key in ("session_cpu", "session_run_delay") and isinstance(value, dict) else value
                         for key, value in os_end.items()}
    nodes = end.get("nodes") or {}
    gone = {name for name, reading in nodes.items() if isinstance(reading, dict) and reading.get("t") is not None
            and any(s.node == name and s.failed_at <= reading["t"] for s in failed)}
    if gone:
        out["nodes"] = {name: _without_own_io(reading) if name in gone else reading for name, reading in nodes.items()}
        out["engine"] = _without_own_io(end.get("engine"))
    return out if any(value is not end.get(key) for key, value in out.items()) else end


def _without_own_io(reading: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if reading is None else {k: v for k, v in reading.items() if k != "sessions"}


def build(man: dict[str, Any], outcome: RunOutcome, normalize: Normalize,
          samples: Callable[[], Iterable[dict[str, Any]]], directory_name: str,
          per_interval: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """result.json (format 2) from the manifest and an outcome (live or recovered). samples()
    streams the run's sample records; it is read for the interval counts (unless per_interval
    already holds them), then for the series, and never held in memory whole."""
    plan = man["plan"]
    if per_interval is None:
        per_interval = interval_statements(samples(), len(plan["bounds_us"]) + 1)
    nodes = manifest_nodes(man)
    # each node's counters watched over the window, from its begin reading to its end: one that went back
    watch = resets.Watch(outcome.window_start)
    if outcome.begin and outcome.window_start is not None:
        watch.see(normalized(outcome.begin, normalize))
    series, last_measured, node_series = _series(man, outcome, normalize, samples, per_interval, len(nodes) > 1,
                                                 watch)
    window = _window(outcome, last_measured, normalize)
    watch.see(window["end"])
    begin, end = window["begin"], without_ended_sessions(window["end"], outcome.sessions)
    node_totals = _node_tallies(outcome, [n["name"] for n in nodes])
    figures = _figures(man, outcome.totals, begin, end, window, man["capabilities"], reset=watch.counters(),
                       read_probe=outcome.read_probe)
    return {
        "format": results.FORMAT, "format_version": results.FORMAT_VERSION, "dbio_version": __version__,
        "run_id": f"{outcome.run_id:x}", "label": man["config"]["run"]["label"] or directory_name,
        **({"part": man["part"]} if man.get("part") else {}),  # one process's part of a run (dbio/parts.py)
        "status": outcome.status, "status_reason": outcome.reason,
        "created_at": results.iso(man["created"]),
        "timeline": _timeline(man, outcome, window),
        "config": man["config"],
        "setup": man["setup"],
        "environment": {
            "dbio": __version__, "host": man["host"], "client": man["client"],
            "server": {k: v for k, v in man["server"].items() if k != "cache_bytes"},
            "storage": man["storage"],
            # cgroup limits and CPU affinity of the servers' processes, where any (collect/cgroup.py)
            **({"limits": limits} if (limits := window_limits(begin, end, "server_limits")) else {}),
            **({"client_limits": mine} if (mine := window_limits(begin, end, "client_limits")) else {}),
        },
        "capabilities": man["capabilities"],
        "nodes": [_node(man, node, begin, end, window, node_totals.get(node["name"]), node_series.get(node["name"]),
                        outcome.node_waits.get(node["name"]) if len(nodes) > 1 else None,
                        [s for s in outcome.sessions if s.node == node["name"]], outcome.node_starts.get(node["name"]),
                        outcome.lost_nodes.get(node["name"]), outcome.window_start, watch.counters(node["name"]),
                        outcome.read_probe.get(node["name"]))
                  for node in nodes],
        "cluster": _cluster(man, outcome, nodes),
        "plans": outcome.plans,
        "sessions": [s.summary() for s in outcome.sessions],
        "events": window["events"] + _refusals(outcome, samples),
        # counters that went back inside the window (statistics reset, server restart): the figures built on
        # them are absent, and the verdict says the result is none
        "counter_resets": watch.found,
        "snapshots": {"begin": outcome.begin, "end": window["end_reading"]},
        "normalized": {"begin": begin["engine"] if begin else None, "end": end["engine"] if end else None},
        "totals": outcome.totals.counts(),
        "histograms": outcome.totals.histograms(plan["bounds_us"]),
        "read_probe": outcome.read_probe,  # each node's probe lookups (run/read_probe.py), its figures' source
        "interval_statements": {str(k): v for k, v in sorted(per_interval.items())},
        "series": series,
        "stalls": _stalls(series, outcome.clock, outcome.window_start, window["seconds"], man["config"]["workload"]),
        "waits": {"samples": outcome.wait_samples, "counts": outcome.waits,
                  "interval_seconds": man["config"]["run"]["wait_sample_interval"]},
        "monitor_errors": outcome.monitor_errors,
        "figures": figures,
        "files": {"samples": results.SAMPLES_FILE, "report": results.REPORT_FILE, "html": results.HTML_REPORT_FILE},
    }


def _series(man: dict[str, Any], outcome: RunOutcome, normalize: Normalize,
            samples: Callable[[], Iterable[dict[str, Any]]], per_interval: dict[int, dict[str, Any]],
            per_node: bool, watch: resets.Watch | None = None
            ) -> tuple[list[dict[str, Any]], dict[str, Any] | None, dict[str, list[dict[str, Any]]]]:
    """The run's series (the nodes' totals), the last measured sample, and with several nodes each
    node's own series (engine counters only: the sessions' counts are the run's). watch: sees each
    measured sample's counters; an interval over which one went back has no rate of it."""
    start = outcome.clock.start
    last_measured: dict[str, Any] | None = None
    plan = man["plan"]
    cores = man["host"].get("cpus") or os.cpu_count()

    def normalized_samples() -> Iterator[dict[str, Any]]:
        nonlocal last_measured
        for s in samples():
            if answered(s):
                reading = normalized(s, normalize)
                if s.get("phase") == "measured":
                    last_measured = s
                    if watch is not None:
                        reading["reset_counters"] = watch.see(reading)
                yield reading
            elif s.get("missing"):
                yield s  # a gap in the series

    def one_node(name: str) -> Iterator[dict[str, Any]]:
        for s in samples():
            if name in (s.get("lost") or ()):
                return  # its server stopped: what the samples hold for it since is its last reading, not news
            raw = raw_nodes(s).get(name)
            if raw:
                yield {**s, "engine": normalize(name, raw), "os": None}
            elif s.get("missing"):
                yield s

    io_timing = bool(man["capabilities"].get("times_data_io"))
    if not start:
        for _ in normalized_samples():
            pass
        return [], last_measured, {}
    series = series_math.per_interval(normalized_samples(), per_interval, plan["bounds_us"], start,
                                      io_timing=io_timing, cores=cores)
    node_series = {node["name"]: series_math.per_interval(one_node(node["name"]), {}, plan["bounds_us"], start,
                                                          io_timing=io_timing, cores=cores)
                   for node in manifest_nodes(man)} if per_node else {}
    return series, last_measured, node_series
def _window(outcome: RunOutcome, last_measured: dict[str, Any] | None, normalize: Normalize) -> dict[str, Any]:
    """The window's two readings, normalized, and its length. When the end reading failed (the
    server went away), the last sample that reached every node closes the window."""
    end_reading, window_end, events = outcome.end, outcome.window_end, list(outcome.events)
    if outcome.window_start is not None and not answered(end_reading) and last_measured is not None:
        end_reading = {"nodes": raw_nodes(last_measured), "os": last_measured.get("os")}
        window_end = reading_time(last_measured)
        events.append({"t": window_end, "kind": "window_cut",
                       "message": "no end snapshot: the figures end at the last sample that reached the server"})
    seconds = None
    if outcome.window_start is not None and window_end is not None:
        seconds = max(0.0, window_end - outcome.window_start)
    return {"begin": normalized(outcome.begin, normalize) if answered(outcome.begin) else None,
            "end": normalized(end_reading, normalize) if answered(end_reading) else None,
            "end_reading": end_reading, "window_end": window_end, "seconds": seconds, "events": events}


def _refusals(outcome: RunOutcome, samples: Callable[[], Iterable[dict[str, Any]]]) -> list[dict[str, Any]]:
    """An event per node whose server answered counters that were no reading (run/readings.refused): how many
    of its readings, the first and why. Each such sample has no counters of it (a gap in its series)."""
    seen: dict[str, dict[str, Any]] = {}
    for reading in itertools.chain([outcome.begin], samples(), [outcome.end]):  # a stream: the file may be long
        for node, why in ((reading or {}).get("refused") or {}).items():
            entry = seen.setdefault(node, {"count": 0, "why": why, "t": (reading.get("os") or {}).get("t")})
            entry["count"] += 1
    several = len(raw_nodes(outcome.begin) or raw_nodes(outcome.end)) > 1
    out = []
    for node, entry in seen.items():
        whose = f"{node}'s" if several else "the server's"
        count = f"{entry['count']} reading{'s' if entry['count'] != 1 else ''}"
        out.append({"t": entry["t"], "kind": "readings_refused",
                    "message": f"{count} of {whose} counters refused, holding a number no counter can be (first: "
                               f"{entry['why']}): those samples have no figures of it"})
    return out


def _node_tallies(outcome: RunOutcome, names: list[str]) -> dict[str, Tally]:
    """Each node's sessions' counts; unknown (absent) for the nodes of a recovered run of several."""
    if len(names) == 1:
        return {names[0]: outcome.totals}
    tallies: dict[str, Tally] = {}
    for session in outcome.sessions:
        if session.measured is not None:
            tallies.setdefault(session.node, Tally(session.measured.buckets)).merge(session.measured)
    return tallies


def _figures(man: dict[str, Any], totals: Tally, begin: dict[str, Any] | None, end: dict[str, Any] | None,
             window: dict[str, Any], caps: dict[str, Any], node: str | None = None,
             own: tuple[set[str], set[str]] | None = None, reset: list[str] | None = None,
             read_probe: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The window's figures: the run's total, or one node's (node). A node's host figures are the
    run's when it is the run's one node; of several, each has only its own processes' CPU and its
    own devices (own: its sessions' pids and its devices), the host's CPU being the run's. reset: the
    counters that went back inside the window (stats/resets.py), on which no figure is built."""
    engine_begin = (begin or {}).get("engine") if node is None else ((begin or {}).get("nodes") or {}).get(node)
    engine_end = (end or {}).get("engine") if node is None else ((end or {}).get("nodes") or {}).get(node)
    if not (window["seconds"] and engine_begin and engine_end):
        return {"window_seconds": None}
    with_host = node is None or len(manifest_nodes(man)) == 1
    os_begin, os_end = (begin.get("os"), end.get("os")) if with_host else \
        (_node_os(begin.get("os"), own), _node_os(end.get("os"), own))
    w = man["config"]["workload"]
    return figure_math.derive({
        "seconds": window["seconds"], "engine_begin": engine_begin, "engine_end": engine_end,
        "totals": totals.counts(), "histograms": totals.histograms(man["plan"]["bounds_us"]),
        "os_begin": os_begin, "os_end": os_end,
        "cores": man["host"].get("cpus") or os.cpu_count(), "cache_bytes": man["server"]["cache_bytes"],
        "data_bytes": w["scale"] * w["schemas"] * (caps.get("page_bytes") or 8192),  # a row a page
        "direct_io": caps["direct_io"], "local": caps["local"],
        "io_timing": bool(caps.get("times_data_io")), "wal_io_timing": bool(caps.get("times_redo_io")),
        "page_bytes": caps.get("page_bytes") or 8192, "work_unit": w["work_unit"],
                               "update_work_unit": w.get("update_work_unit") or w["work_unit"],
        "reset_counters": reset or [], "read_probe": read_probe or None})


def _node_os(reading: dict[str, Any] | None, own: tuple[set[str], set[str]] | None) -> dict[str, Any] | None:
    """The part of a /proc reading that is one node's: its sessions' CPU and wait for a CPU, and its devices."""
    if not reading or own is None:
        return None
    pids, devices = own
    return {"t": reading.get("t"),
            "session_cpu": {pid: v for pid, v in (reading.get("session_cpu") or {}).items() if pid in pids} or None,
            "session_run_delay": {pid: v for pid, v in (reading.get("session_run_delay") or {}).items()
                                  if pid in pids} or None,
            "disks": {d: v for d, v in (reading.get("disks") or {}).items() if d in devices} or None}


def _node(man: dict[str, Any], node: dict[str, Any], begin: dict[str, Any] | None, end: dict[str, Any] | None,
          window: dict[str, Any], tally: Tally | None, series: list[dict[str, Any]] | None,
          waits: dict[str, int] | None, sessions: list[Session], start: dict[str, Any] | None,
          lost: dict[str, Any] | None = None, window_start: float | None = None,
          reset: list[str] | None = None, probe: dict[str, Any] | None = None) -> dict[str, Any]:
    name = node["name"]
    own = ({str(s.pid) for s in sessions if s.pid}, set(node.get("devices") or []))
    if lost is not None:  # its server stopped: its figures cover the window up to its last reading
        window = {**window, "seconds": _covered(window_start, lost.get("covered_to"), window["seconds"])}
        own = None  # /proc figures of the whole window would be divided by its shorter part: none
    out = {"name": name, "engine": node["engine"], "role": node["role"],
           "server": {k: v for k, v in node["server"].items() if k != "cache_bytes"},
           "capabilities": node["capabilities"],
           "normalized": {"begin": ((begin or {}).get("nodes") or {}).get(name),
                          "end": ((end or {}).get("nodes") or {}).get(name)},
           # a recovered run of several nodes lost which session ran where: no statement figures per node
           "figures": None if tally is None else _figures({**man, "server": node["server"]}, tally, begin, end,
                                                          window, node["capabilities"], node=name, own=own,
                                                          reset=reset, read_probe={name: probe} if probe else None)}
    if series is not None:
        out["series"] = series
        if out["figures"] and out["figures"].get("replication"):
            out["figures"]["replication"] = figure_math.lag_maxima(out["figures"]["replication"], series)
    if sessions:  # which sessions ran here (a recovered run of several nodes lost it)
        out["sessions"] = {"numbers": [s.number for s in sessions],
                           "ranges": dealing.ranges([s.number for s in sessions]),
                           "update_capable": node["role"] != STANDBY}
    if node.get("weight") is not None:
        out["weight"] = node["weight"]
    if start is not None:
        out["start"] = {k: None if v is None else round(v, 4) for k, v in start.items()}
    if lost is not None:
        out["stopped"] = {"at": results.iso(lost["t"]), "since_start": lost["since_start"], "reason": lost["reason"],
                          "figures_cover_seconds": window["seconds"]}
    if waits is not None:  # with several nodes: what this node's sessions waited on
        out["waits"] = {"counts": waits}
    return out


def _covered(window_start: float | None, last_reading: float | None, seconds: float | None) -> float | None:
    """The part of the window a stopped node's figures cover: from its opening to the node's last reading."""
    if window_start is None or last_reading is None or seconds is None:
        return None
    return min(seconds, max(0.0, last_reading - window_start)) or None


def _cluster(man: dict[str, Any], outcome: RunOutcome, nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """What a run of several nodes adds: how many sessions could UPDATE (none on a read-only node), how
    the start was agreed and its skew across the nodes."""
    read_only = [n["name"] for n in nodes if n["role"] == STANDBY]
    # a recovered run lost which session ran where: unknown, not none
    capable = sum(1 for s in outcome.sessions if s.node not in read_only) if outcome.sessions else None
    spread = agreed.skew_spread(list(outcome.node_starts.values())) if outcome.node_starts else None
    lost = sorted(outcome.lost_nodes)
    return {"nodes": len(nodes), "read_only_nodes": read_only, "update_capable_sessions": capable,
            "start_agreed": outcome.start_agreed, "start_skew_seconds": None if spread is None else round(spread, 4),
            "stopped_nodes": lost,
            # the totals hold a stopped node's work up to its last reading only
            "partial": [f"totals ({', '.join(lost)} stopped)"] + [f"{n} figures (to its stop)" for n in lost]
            if lost else []}


def _timeline(man: dict[str, Any], outcome: RunOutcome, window: dict[str, Any]) -> dict[str, Any]:
    clock, plan = outcome.clock, man["plan"]
    return {
        "start": results.iso(clock.start), "window_open": results.iso(clock.window_open),
        "deadline": results.iso(clock.deadline), "window_start": results.iso(outcome.window_start),
        "window_end": results.iso(window["window_end"]), "window_seconds": window["seconds"],
        "warmup_seconds": plan["warmup"], "connect_seconds": round(outcome.connect_seconds, 3),
        "start_seconds": round(outcome.start_seconds, 3), "slice_seconds": plan["slice_seconds"],
        "interval_seconds": plan["interval"],
        # when the start was agreed in advance (--start-at): the instant, how late the release came,
        # and this host's clock against the server's, so that runs of several hosts can be lined up
        "window_at": results.iso(plan.get("window_at")),
        "released_late_seconds": None if outcome.released_late is None else round(outcome.released_late, 4),
        "clock_offset_seconds": None if outcome.clock_offset is None else round(outcome.clock_offset, 4),
        "clock_source": host.clock_source(),
    }


def _stalls(series: list[dict[str, Any]], clock: Clock, window_start: float | None, window_seconds: float | None,
            workload: dict[str, Any]) -> list[dict[str, Any]]:
    """The window's stalls; a session thinking longer than a stall is not one."""
    if clock.start is None or window_start is None:
        return []
    thinking = (workload.get("think_time_max") or 0.0) if workload.get("think_time_frequency") else 0.0
    return stall_math.find(series, window_start - clock.start, window_seconds=window_seconds,
                           min_seconds=max(stall_math.STALL_SECONDS, thinking + SLICE_SECONDS))


# -- runs their dbio process never finished --------------------------------------------------

RESCUE_MARK = "rescued-from"  # in a rescue directory: the run directory its result could not be written to
RESCUED_TO = "rescued-to"  # in that run directory, as far as its full disk allowed: where the result went


def rescue_bases() -> list[Path]:
    """Where results go when their run directory cannot be written (the first that can be made)."""
    import platformdirs
    import tempfile

    return [platformdirs.user_state_path("dbio") / "rescued", Path(tempfile.gettempdir()) / "dbio-rescued"]


def rescued_runs() -> set[str]:
    """Run directories whose result was written to a rescue directory instead. A mark counts only
    when dbio's user (or root) made it where nobody else can change it: one base is in the shared
    temporary directory, where any user could plant a mark to keep root from recovering a run."""
    origins = set()
    for base in rescue_bases():
        for mark in base.glob(f"*/{RESCUE_MARK}") if base.is_dir() else []:
            if trust.path_problem(mark.parent):
                continue
            try:
                origins.add(trust.read_trusted(mark).decode(errors="replace").strip())
            except (OSError, trust.UntrustedFile):
                continue
    return origins


def abandoned(results_dir: Path) -> list[Path]:
    """Run directories (also inside sweeps) with a manifest, no result, and no live dbio process.
    A run whose result was rescued elsewhere is not abandoned, nor one in a directory another user could
    change (a manifest is copied easily: it would make root write a result where they choose)."""
    found: list[Path] = []
    if not results_dir.is_dir():
        return found
    rescued = rescued_runs()
    for manifest_path in list(results_dir.glob(f"*/{MANIFEST_FILE}")) + list(results_dir.glob(f"*/*/{MANIFEST_FILE}")):
        directory = manifest_path.parent
        if any((directory / name).exists() for name in (results.RESULT_FILE, RESCUED_TO)) or str(directory) in rescued:
            continue
        if trust.path_problem(directory):  # its result would be written through links another user put there
            continue
        try:
            man = jsondoc.loads(manifest_path.read_bytes().decode())
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
    man = engines.complete_manifest(man)  # one an older dbio wrote lacks facts this one reads
    try:
        jsondoc.check(man, shapes.MANIFEST)
    except jsondoc.Malformed as exc:
        raise UsageError(f"{path}: {exc}", "the run cannot be recovered; remove its directory") from None
    return man


def recover(directory: Path, engine_named: Callable[[str], Engine]) -> dict[str, Any]:
    """result.json for a run whose dbio process died: figures up to its last sample, marked lost.
    Lines of samples.jsonl that cannot be read are skipped; the result's events say how many.
    engine_named: the engine of that name (the manifest names each node's)."""
    man = read_manifest(directory)
    normalize = normalizer({n["name"]: engine_named(n["engine"]) for n in manifest_nodes(man)})
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
        if not answered(sample):
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
        window_start=reading_time(begin), window_end=reading_time(end),
        totals=totals, waits=waits, wait_samples=None, plans={},
        connect_seconds=0.0, start_seconds=0.0,
        events=[{"t": last_t, "kind": "lost", "message": reason},
                {"t": time.time(), "kind": "recovered",
                 "message": f"result rebuilt from samples.jsonl by dbio on {platform.node()}"}]
        + ([skipped_event(skipped)] if skipped else []))
    return build(man, outcome, normalize, lambda: results.iter_samples(samples_path), directory.name, per_interval)


def skipped_event(skipped: list[str]) -> dict[str, Any]:
    """The event that records the lines of samples.jsonl a recovery could not use."""
    return {"t": time.time(), "kind": "samples_skipped", "skipped_lines": len(skipped),
            "message": f"{len(skipped)} line{'s' if len(skipped) != 1 else ''} of {results.SAMPLES_FILE} could not be "
                       f"read and {'were' if len(skipped) != 1 else 'was'} skipped (first: {skipped[0]})"}


def _reading(sample: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if sample is None else {"nodes": raw_nodes(sample), "os": sample.get("os")}
