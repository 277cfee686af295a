"""Assembling result.json (format 2) from a run's manifest (run/manifest.py) and its outcome: a
finished run's, or one rebuilt from what an abandoned run left on disk (run/abandoned.py). The
window's figures, series and stalls are run/result_figures.py's; the events found in the readings,
run/result_events.py's; this module lays out the document, its nodes, cluster and timeline.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from dbio import __version__
from dbio import result as results
from dbio.collect import host
from dbio.run import agreed_start, read_probing, session_placement, result_events, result_figures, wait_sampling
from dbio.run.manifest import manifest_nodes
from dbio.run.nodes import STANDBY
from dbio.run.readings import Normalize, normalized
from dbio.run.outcome import RunOutcome, StartFacts
from dbio.run.sessions import Session
from dbio.run.slice_totals import Tally
from dbio.stats import figures as figure_math
from dbio.stats import rate as rates
from dbio.stats import resets


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
    watch = resets.Watch(outcome.window.opened)
    if outcome.window.begin and outcome.window.opened is not None:
        watch.see(normalized(outcome.window.begin, normalize))
    series, last_measured, node_series = result_figures.interval_series(man, outcome, normalize, samples,
                                                                        per_interval, len(nodes) > 1, watch)
    window = result_figures.window_readings(outcome, last_measured, normalize)
    watch.see(window["end"])
    begin, end = window["begin"], result_figures.without_ended_sessions(window["end"], outcome.sessions)
    node_totals = result_figures.node_tallies(outcome, [n["name"] for n in nodes])
    waits: wait_sampling.WaitCounts = outcome.records.get(wait_sampling.KEY) or wait_sampling.WaitCounts()
    probes: dict[str, dict[str, Any]] = outcome.records.get(read_probing.KEY) or {}
    node_starts = outcome.start.node_starts if outcome.start is not None else {}
    figures = result_figures.window_figures(man, outcome.totals, begin, end, window, man["capabilities"],
                                            reset=watch.counters(), read_probe=probes, sessions=len(outcome.sessions))
    if figures.get("rate"):  # held or not, and where it fell behind, from each interval's schedule lag
        figures["rate"] = rates.judge(figures["rate"], rates.interval_lags(per_interval, plan["warmup"]),
                                      plan["warmup"], plan["interval"])
    document = {
        "format": results.FORMAT, "format_version": results.FORMAT_VERSION, "dbio_version": __version__,
        "run_id": f"{outcome.run_id:x}", "label": man["config"]["run"]["label"] or directory_name,
        **({"part": man["part"]} if man.get("part") else {}),  # one process's part of a run (dbio/parts.py)
        "status": outcome.status.status.value, "status_reason": outcome.status.reason,
        "created_at": results.iso(man["created"]),
        "timeline": _timeline(man, outcome, window),
        "config": man["config"],
        "setup": man["setup"],
        "environment": {
            "dbio": __version__, "host": man["host"], "client": man["client"],
            "server": {k: v for k, v in man["server"].items() if k != "cache_bytes"},
            "storage": man["storage"],
            # cgroup limits and CPU affinity of the servers' processes, where any (collect/cgroup.py)
            **({"limits": limits} if (limits := result_figures.window_limits(begin, end, "server_limits")) else {}),
            **({"client_limits": mine}
               if (mine := result_figures.window_limits(begin, end, "client_limits")) else {}),
        },
        "capabilities": man["capabilities"],
        "nodes": [_node(man, node, begin, end, window, node_totals.get(node["name"]), node_series.get(node["name"]),
                        waits.by_node.get(node["name"]) if len(nodes) > 1 else None,
                        [s for s in outcome.sessions if s.node == node["name"]], node_starts.get(node["name"]),
                        outcome.lost_nodes.get(node["name"]), outcome.window.opened, watch.counters(node["name"]),
                        probes.get(node["name"]))
                  for node in nodes],
        "cluster": _cluster(man, outcome, nodes),
        "plans": outcome.plans,
        "sessions": [s.summary() for s in outcome.sessions],
        "events": window["events"] + result_events.refusals(outcome, samples),
        # counters that went back inside the window (statistics reset, server restart): the figures built on
        # them are absent, and the verdict says the result is none
        "counter_resets": watch.found,
        "snapshots": {"begin": outcome.window.begin, "end": window["end_reading"]},
        "normalized": {"begin": begin["engine"] if begin else None, "end": end["engine"] if end else None},
        "totals": outcome.totals.counts(),
        "histograms": outcome.totals.histograms(plan["bounds_us"]),
        "read_probe": probes,  # each node's probe lookups (run/read_probe.py), its figures' source
        "interval_statements": {str(k): v for k, v in sorted(per_interval.items())},
        "series": series,
        "stalls": result_figures.stalls(series, outcome.clock, outcome.window.opened, window["seconds"],
                                        man["config"]["workload"]),
        "waits": {"samples": waits.samples, "counts": waits.counts,
                  "interval_seconds": man["config"]["run"]["wait_sample_interval"]},
        "monitor_errors": outcome.monitor_errors,
        "figures": figures,
        "files": {"samples": results.SAMPLES_FILE, "report": results.REPORT_FILE,
                  **({"html": results.HTML_REPORT_FILE} if man["config"]["run"].get("html_report", True) else {})},
    }
    if outcome.records.get(DISRUPTIONS):  # what each --event did to the workload (stats/disruptions.py)
        figures["disruptions"] = result_figures.disruptions(outcome.records[DISRUPTIONS], series, outcome,
                                                            window["seconds"], man["config"]["workload"], node_series)
        if figures.get("rate") and figures["disruptions"]:  # --rate: its schedule during each event, said
            lags = rates.interval_lags(per_interval, plan["warmup"])
            for dip, lag in zip(figures["disruptions"], rates.during_events(figures["disruptions"], lags,
                                                                             plan["warmup"], plan["interval"])):
                if lag is not None:
                    dip["rate"] = lag
            figures["rate"]["behind_during_events"] = [d["event"] for d in figures["disruptions"]
                                                       if (d.get("rate") or {}).get("behind")]
    for key, record in outcome.records.items():  # what each of the run's listeners kept (run/listeners.py)
        if key in PLACED:
            continue
        if key in document:
            raise ValueError(f"a listener's record would replace the result's own {key!r}")
        document[key] = record
    return document


DISRUPTIONS = "disruptions"  # the --event listener's record (jobs/disruptions.py, a layer above)
PLACED = (wait_sampling.KEY, read_probing.KEY)  # the listeners' records the document holds in places of their own


def _node(man: dict[str, Any], node: dict[str, Any], begin: dict[str, Any] | None, end: dict[str, Any] | None,
          window: dict[str, Any], tally: Tally | None, series: list[dict[str, Any]] | None,
          waits: dict[str, int] | None, sessions: list[Session], start: dict[str, Any] | None,
          lost: dict[str, Any] | None = None, window_start: float | None = None,
          reset: list[str] | None = None, probe: dict[str, Any] | None = None) -> dict[str, Any]:
    name = node["name"]
    own: tuple[set[str], set[str]] | None = ({str(s.pid) for s in sessions if s.pid}, set(node.get("devices") or []))
    if lost is not None:  # its server stopped: its figures cover the window up to its last reading
        window = lost_window(window, window_start, lost.get("covered_to"))
        own = None  # /proc figures of the whole window would be divided by its shorter part: none
    out = {"name": name, "engine": node["engine"], "role": node["role"],
           "server": {k: v for k, v in node["server"].items() if k != "cache_bytes"},
           "capabilities": node["capabilities"],
           "normalized": {"begin": ((begin or {}).get("nodes") or {}).get(name),
                          "end": ((end or {}).get("nodes") or {}).get(name)},
           # a recovered run of several nodes lost which session ran where: no statement figures per node
           "figures": None if tally is None else result_figures.window_figures(
               {**man, "server": node["server"]}, tally, begin, end, window, node["capabilities"], node=name, own=own,
               reset=reset, read_probe={name: probe} if probe else None, sessions=len(sessions))}
    if out["figures"] and out["figures"].get("rate"):  # the run's intervals are every node's: judged on its own
        out["figures"]["rate"] = rates.judge(out["figures"]["rate"], [], 0, 1)
    if series is not None:
        out["series"] = series
        if out["figures"] and out["figures"].get("replication"):
            out["figures"]["replication"] = figure_math.lag_maxima(out["figures"]["replication"], series)
    if sessions:  # which sessions ran here (a recovered run of several nodes lost it)
        out["sessions"] = {"numbers": [s.number for s in sessions],
                           "ranges": session_placement.ranges([s.number for s in sessions]),
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


def lost_window(window: dict[str, Any], window_start: float | None, last_reading: float | None) -> dict[str, Any]:
    """A stopped node's window: cut at its last reading, and so the span its statements were scheduled in."""
    covered = _covered(window_start, last_reading, window["seconds"])
    scheduled = window.get("scheduled_seconds")
    return {**window, "seconds": covered,
            "scheduled_seconds": None if scheduled is None or covered is None else min(scheduled, covered)}


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
    start = outcome.start or StartFacts()
    spread = agreed_start.skew_spread(list(start.node_starts.values())) if start.node_starts else None
    lost = sorted(outcome.lost_nodes)
    return {"nodes": len(nodes), "read_only_nodes": read_only, "update_capable_sessions": capable,
            "start_agreed": start.start_agreed, "start_skew_seconds": None if spread is None else round(spread, 4),
            "stopped_nodes": lost,
            # the totals hold a stopped node's work up to its last reading only
            "partial": [f"totals ({', '.join(lost)} stopped)"] + [f"{n} figures (to its stop)" for n in lost]
            if lost else []}


def _timeline(man: dict[str, Any], outcome: RunOutcome, window: dict[str, Any]) -> dict[str, Any]:
    clock, plan, start = outcome.clock, man["plan"], outcome.start or StartFacts()
    return {
        "start": results.iso(clock.start), "window_open": results.iso(clock.window_open),
        "deadline": results.iso(clock.deadline), "window_start": results.iso(outcome.window.opened),
        "window_end": results.iso(window["window_end"]), "window_seconds": window["seconds"],
        "warmup_seconds": plan["warmup"], "connect_seconds": round(start.connect_seconds, 3),
        "start_seconds": round(start.start_seconds, 3), "slice_seconds": plan["slice_seconds"],
        "interval_seconds": plan["interval"],
        # when the start was agreed in advance (--start-at): the instant, how late the release came,
        # and this host's clock against the server's, so that runs of several hosts can be lined up
        "window_at": results.iso(plan.get("window_at")),
        "released_late_seconds": None if start.released_late is None else round(start.released_late, 4),
        # a run rebuilt from its samples does not know this host's clock against the server's
        "clock_offset_seconds": None if outcome.start is None else round(outcome.start.offset, 4),
        "clock_source": host.clock_source(),
    }
