"""The figures a result holds of its run (pure): the window's, in total and per node, from its two
readings (the end's without what sessions that failed left in it); each interval's (the series);
the stalls among them; and the limits the servers ran under at the window's ends.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Iterator

from dbio.collect.procfs import UNREAD
from dbio.run import result_events
from dbio.run.manifest import manifest_nodes
from dbio.run.phase import Phase
from dbio.run.plan import SLICE_SECONDS
from dbio.run.readings import Normalize, answered, normalized, raw_nodes, reading_time
from dbio.run.outcome import RunOutcome
from dbio.run.sessions import Clock, Session
from dbio.run.slice_totals import Tally
from dbio.stats import figures as figure_math
from dbio.stats import resets
from dbio.stats import series as series_math
from dbio.stats import disruptions as disruption_math
from dbio.stats import stalls as stall_math


def window_readings(outcome: RunOutcome, last_measured: dict[str, Any] | None, normalize: Normalize) -> dict[str, Any]:
    """The window's two readings, normalized, and its length. When the end reading failed (the
    server went away), the last sample that reached every node closes the window."""
    end_reading, window_end, events = outcome.window.end, outcome.window.closed, list(outcome.events)
    if outcome.window.opened is not None and not answered(end_reading) and last_measured is not None:
        end_reading = {"nodes": raw_nodes(last_measured), "os": last_measured.get("os")}
        window_end = reading_time(last_measured)
        events.append(result_events.window_cut(window_end))
    seconds = None
    if outcome.window.opened is not None and window_end is not None:
        seconds = max(0.0, window_end - outcome.window.opened)
    return {"begin": normalized(outcome.window.begin, normalize) if answered(outcome.window.begin) else None,
            "end": normalized(end_reading, normalize) if answered(end_reading) else None,
            "end_reading": end_reading, "window_end": window_end, "seconds": seconds,
            "scheduled_seconds": scheduled_seconds(outcome.clock, outcome.window.opened, window_end), "events": events}


def scheduled_seconds(clock: Clock, opened: float | None, window_end: float | None) -> float | None:
    """The span of the window whose statements the sessions' tallies hold: from its planned opening (where their
    first measured slice begins) to the deadline (where the loops start no statement more), or to the window's end
    when it ended before (a stop). The end reading comes later, once every session drained and the readings were
    taken (seen: 0.05 s after a 4 s run on a loaded host): a rate of statements over the readings' span would be
    short by that. None: no deadline (a work loop), or no window."""
    if clock.deadline is None or window_end is None or opened is None:
        return None
    begun = clock.window_open if clock.window_open is not None else opened
    return max(0.0, min(window_end, clock.deadline) - begun)


def window_figures(man: dict[str, Any], totals: Tally, begin: dict[str, Any] | None, end: dict[str, Any] | None,
                   window: dict[str, Any], caps: dict[str, Any], node: str | None = None,
                   own: tuple[set[str], set[str]] | None = None, reset: list[str] | None = None,
                   read_probe: dict[str, dict[str, Any]] | None = None, sessions: int = 0) -> dict[str, Any]:
    """The window's figures: the run's total, or one node's (node). A node's host figures are the
    run's when it is the run's one node; of several, each has only its own processes' CPU and its
    own devices (own: its sessions' pids and its devices), the host's CPU being the run's. reset: the
    counters that went back inside the window (stats/resets.py), on which no figure is built. sessions: how many
    sessions the tally holds (with --rate, the rate they were asked for is theirs)."""
    if begin is None or end is None:
        return {"window_seconds": None}
    engine_begin = begin.get("engine") if node is None else (begin.get("nodes") or {}).get(node)
    engine_end = end.get("engine") if node is None else (end.get("nodes") or {}).get(node)
    if not (window["seconds"] and engine_begin and engine_end):
        return {"window_seconds": None}
    with_host = node is None or len(manifest_nodes(man)) == 1
    os_begin, os_end = (begin.get("os"), end.get("os")) if with_host else \
        (_node_os(begin.get("os"), own), _node_os(end.get("os"), own))
    w = man["config"]["workload"]
    return figure_math.derive({
        "seconds": window["seconds"], "engine_begin": engine_begin, "engine_end": engine_end,
        # its planned opening to its deadline: a begin reading taken late makes the readings' span the shorter
        "scheduled_seconds": window.get("scheduled_seconds"),
        "totals": totals.counts(), "histograms": totals.histograms(man["plan"]["bounds_us"]),
        "os_begin": os_begin, "os_end": os_end,
        "cores": man["host"].get("cpus") or os.cpu_count(), "cache_bytes": man["server"]["cache_bytes"],
        "data_bytes": w["scale"] * w["schemas"] * (caps.get("page_bytes") or 8192),  # a row a page
        "direct_io": caps["direct_io"], "local": caps["local"],
        "io_timing": bool(caps.get("times_data_io")), "wal_io_timing": bool(caps.get("times_redo_io")),
        "page_bytes": caps.get("page_bytes") or 8192, "work_unit": w["work_unit"],
                               "update_work_unit": w.get("update_work_unit") or w["work_unit"],
        "reset_counters": reset or [], "read_probe": read_probe or None,
        "rate_asked_per_s": None if not (per := man["plan"].get("rate_per_session")) else per * sessions,
        "rate_schedule": w.get("rate_schedule") or "poisson", "latency_limit_us": (w.get("latency_limit") or 0) * 1e6})


def _node_os(reading: dict[str, Any] | None, own: tuple[set[str], set[str]] | None) -> dict[str, Any] | None:
    """The part of a /proc reading that is one node's: its sessions' CPU and wait for a CPU, and its devices."""
    if not reading or own is None:
        return None
    pids, devices = own
    return {"t": reading.get("t"),
            "session_cpu": {pid: v for pid, v in (reading.get("session_cpu") or {}).items() if pid in pids} or None,
            "session_run_delay": {pid: v for pid, v in (reading.get("session_run_delay") or {}).items()
                                  if pid in pids} or None,
            "disks": {d: v for d, v in (reading.get("disks") or {}).items() if d in devices} or None,
            UNREAD: {d: why for d, why in (reading.get(UNREAD) or {}).items() if d in devices} or None}


def node_tallies(outcome: RunOutcome, names: list[str]) -> dict[str, Tally]:
    """Each node's sessions' counts; unknown (absent) for the nodes of a recovered run of several."""
    if len(names) == 1:
        return {names[0]: outcome.totals}
    tallies: dict[str, Tally] = {}
    for session in outcome.sessions:
        if session.measured is not None:
            tallies.setdefault(session.node, Tally(session.measured.buckets)).merge(session.measured)
    return tallies


def interval_series(man: dict[str, Any], outcome: RunOutcome, normalize: Normalize,
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
                if s.get("phase") == Phase.WINDOW.label:
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
            if raw:  # measured on its own sessions' work point where the sample has it (several nodes)
                own = (s.get("nodes_published") or {}).get(name) or {}
                yield {**s, **own, "engine": normalize(name, raw), "os": None}
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


def stalls(series: list[dict[str, Any]], clock: Clock, window_start: float | None, window_seconds: float | None,
            workload: dict[str, Any]) -> list[dict[str, Any]]:
    """The window's stalls; a session thinking longer than a stall is not one."""
    if clock.start is None or window_start is None:
        return []
    thinking = (workload.get("think_time_max") or 0.0) if workload.get("think_time_frequency") else 0.0
    return stall_math.find(series, window_start - clock.start, window_seconds=window_seconds,
                           min_seconds=max(stall_math.STALL_SECONDS, thinking + SLICE_SECONDS))


def disruptions(events: list[dict[str, Any]], series: list[dict[str, Any]], outcome: RunOutcome,
                window_seconds: float | None, workload: dict[str, Any],
                node_series: dict[str, list[dict[str, Any]]] | None = None) -> list[dict[str, Any]] | None:
    """What each --event did to the workload: its reads' dip and, in an update run, its writes' (None: the window
    never opened). An event on one node (stall@NODE) is measured on that node's series, with the run's as a whole
    and each other node's beside it (`run`, `other_nodes`: their dips, or that they had none)."""
    if outcome.window.opened is None or outcome.clock.start is None:
        return None
    offset, writes = outcome.window.opened - outcome.clock.start, bool(workload.get("update_pct"))
    whole = disruption_math.disruptions(events, series, offset, window_seconds, writes=writes)
    if not node_series or not any(e.get("node") for e in events):
        return whole
    each = {name: disruption_math.disruptions(events, rows, offset, window_seconds, writes=writes)
            for name, rows in node_series.items()}
    out = []
    for i, event in enumerate(events):
        node = event.get("node")
        if node not in each:
            out.append(whole[i])
            continue
        out.append({**each[node][i], "node": node, "run": _brief(whole[i]),
                    "other_nodes": {name: _brief(dips[i]) for name, dips in each.items() if name != node}})
    return out


def _brief(dip: dict[str, Any]) -> dict[str, Any]:
    """An event's reads' dip on a series other than the one it acted on."""
    keys = ("before_reads_per_s", "floor_reads_per_s", "floor_pct", "seconds_below_90pct", "recovery_seconds",
            "reads_lost", "absent", "not_recovered")
    return {k: dip[k] for k in keys if k in dip}


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
