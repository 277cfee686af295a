"""Several hosts' runs as one result (pure): each input a node (or its nodes), plus their total.

Runs launched on several hosts against one storage (with --start-at, they measure the same
seconds) are one experiment. The merged result is format 2: its nodes are the inputs' nodes, with
their own figures as each input computed them (host CPU included: each host's own); its top level
is the total: the nodes' neutral counters summed over their windows, the sessions' statements and
histograms summed. The total is only as true as the windows are alike: inputs whose windows do not
overlap, or whose lengths differ by more than WINDOW_LENGTH_SPREAD, are refused.
"""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Any

from dbio import __version__
from dbio.engines.counters import combine
from dbio.stats import figures as figure_math

WINDOW_LENGTH_SPREAD = 0.05  # the longest window at most 5% longer than the shortest


class NotMergeable(ValueError):
    """Why the inputs cannot be one result (one line)."""


def merge(inputs: list[tuple[str, dict[str, Any]]], label: str) -> dict[str, Any]:
    """inputs: (name, result document as result.read gives it) for each host's run."""
    if len(inputs) < 2:
        raise NotMergeable("give at least two results")
    _refuse_repeats(inputs)
    windows = [_window(name, doc) for name, doc in inputs]
    overlap = min(end for _, end in windows) - max(start for start, _ in windows)
    if overlap <= 0:
        raise NotMergeable("the runs' windows do not overlap: start them with one --start-at")
    lengths = [end - start for start, end in windows]
    if max(lengths) > min(lengths) * (1 + WINDOW_LENGTH_SPREAD):
        raise NotMergeable(f"the runs' windows last {min(lengths):.1f} to {max(lengths):.1f} s: give them the same "
                           "--run-time (and one --start-at)")
    _refuse_other_workloads(inputs)
    nodes = [node for name, doc in inputs for node in _nodes(name, doc)]
    names = [n["name"] for n in nodes]
    if len(set(names)) != len(names):
        raise NotMergeable(f"two inputs have the same name "
                           f"({', '.join(sorted({n for n in names if names.count(n) > 1}))})"
                           ": name them apart with --names")
    first = inputs[0][1]
    seconds = statistics.fmean(lengths)
    begin, end = _combined(nodes, "begin"), _combined(nodes, "end")
    totals = _sum_totals([doc.get("totals") or {} for _, doc in inputs])
    histograms = _sum_histograms([doc.get("histograms") or {} for _, doc in inputs])
    if any("hot_rows" not in (doc.get("totals") or {}) for _, doc in inputs):
        totals.pop("hot_rows", None)  # a result from before the hot spot's parts: the total has none
    resets = [{**r, "node": _node_name(name, doc, r.get("node"))} for name, doc in inputs
              for r in doc.get("counter_resets") or [] if isinstance(r, dict)]
    figures = _total_figures(first, nodes, seconds, begin, end, totals, histograms,
                             sorted({r["counter"] for r in resets if isinstance(r.get("counter"), str)}))
    start = max(s for s, _ in windows)
    skew = start - min(s for s, _ in windows)
    return {
        "format": "dbio-result", "format_version": 2, "dbio_version": __version__,
        "run_id": "+".join(str(doc.get("run_id")) for _, doc in inputs), "label": label,
        "status": _status([doc.get("status") for _, doc in inputs]),
        "status_reason": _reason(inputs),
        "created_at": first.get("created_at"),
        "timeline": {"window_start": _iso(start), "window_end": _iso(start + overlap), "window_seconds": seconds,
                     "overlap_seconds": overlap, "start_skew_seconds": skew,
                     "warmup_seconds": (first.get("timeline") or {}).get("warmup_seconds"),
                     "interval_seconds": (first.get("timeline") or {}).get("interval_seconds"),
                     "start_seconds": 0.0},
        "config": first["config"], "setup": first.get("setup"),
        "environment": {"dbio": __version__, "host": (first.get("environment") or {}).get("host"),
                        "hosts": [(doc.get("environment") or {}).get("host") for _, doc in inputs],
                        "server": (first.get("environment") or {}).get("server"), "storage": None,
                        # each host's server's limits, named with its input: a quota on one host holds the total
                        **({"limits": limits} if (limits := _limits(inputs)) else {})},
        "capabilities": first.get("capabilities"), "nodes": nodes,
        "plans": first.get("plans"),
        "sessions": [{**s, "node": _session_node(name, doc, s)} for name,
                     doc in inputs for s in doc.get("sessions") or []],
        "events": [{"t": start, "kind": "merged",
                    "message": f"merged from {len(inputs)} runs ({', '.join(n for n, _ in inputs)}): their windows "
                               f"overlap for {overlap:.1f} s of {seconds:.1f} s (their starts {skew:.3f} s apart); "
                               "the total adds each node's counters over its own window"}],
        "normalized": {"begin": begin, "end": end}, "totals": totals, "histograms": histograms,
        "counter_resets": resets,  # an input's counters that went back: no total is built on them either
        "series": [], "stalls": [], "waits": _sum_waits(inputs), "monitor_errors": [],
        "figures": figures, "merged_from": [{"name": name, "run_id": doc.get("run_id"), "label": doc.get("label")}
                                           for name, doc in inputs],
    }


def _total_figures(first: dict[str, Any], nodes: list[dict[str, Any]], seconds: float, begin: dict[str, Any] | None,
                   end: dict[str, Any] | None, totals: dict[str, Any], histograms: dict[str, Any],
                   reset: list[str]) -> dict[str, Any]:
    """The total's figures: the nodes' counters summed over windows of (about) one length; no host
    figures (the hosts are several: each node has its own)."""
    if not (begin and end):
        return {"window_seconds": None}
    caps = [n.get("capabilities") or {} for n in nodes]
    page = caps[0].get("page_bytes") or 8192 if caps else 8192
    w = first["config"]["workload"]
    return figure_math.derive({
        "seconds": seconds, "engine_begin": begin, "engine_end": end, "totals": totals,
        "histograms": histograms, "os_begin": None, "os_end": None, "cores": None,
        "cache_bytes": _sum_or_none([n["figures"].get("validity", {}).get("cache_bytes")
                                     for n in nodes if n.get("figures")]),
        "data_bytes": (w.get("scale") or 0) * (w.get("schemas") or 0) * page,  # a row a page
        "direct_io": all(c.get("direct_io") for c in caps), "local": False,
        "io_timing": all(c.get("times_data_io", True) for c in caps),
        "wal_io_timing": all(c.get("times_redo_io", True) for c in caps), "work_unit": w.get("work_unit"),
        "page_bytes": page, "reset_counters": reset,
        "update_work_unit": w.get("update_work_unit") or w.get("work_unit")})


# Workload options hosts may set apart: how many of the sessions each host runs.
PER_HOST_OPTIONS = ("threads_per_schema", "sessions")


def _refuse_repeats(inputs: list[tuple[str, dict[str, Any]]]) -> None:
    """The same run given twice (or a copy of it) would count each of its reads twice."""
    seen: dict[str, str] = {}
    for name, doc in inputs:
        run_id = str(doc.get("run_id"))
        if run_id in seen:
            raise NotMergeable(f"{seen[run_id]} and {name} are the same run ({run_id}): each would count its reads "
                               "twice; give each host's run once")
        seen[run_id] = name


def _refuse_other_workloads(inputs: list[tuple[str, dict[str, Any]]]) -> None:
    """Runs of different workloads are no one experiment: their total would be read as the first's."""
    first_name, first = inputs[0]
    reference = ((first.get("config") or {}).get("workload") or {})
    for name, doc in inputs[1:]:
        workload = (doc.get("config") or {}).get("workload") or {}
        differ = sorted(k for k in set(reference) | set(workload)
                        if k not in PER_HOST_OPTIONS and reference.get(k) != workload.get(k))
        if differ:
            shown = ", ".join(f"{k} {reference.get(k)!r} vs {workload.get(k)!r}" for k in differ[:3])
            more = f" and {len(differ) - 3} more" if len(differ) > 3 else ""
            raise NotMergeable(f"{first_name} and {name} ran different workloads ({shown}{more}): runs merge only "
                               "when every workload option but the sessions is the same")


def _window(name: str, doc: dict[str, Any]) -> tuple[float, float]:
    timeline = doc.get("timeline") or {}
    if not timeline.get("window_start") or not timeline.get("window_end"):
        raise NotMergeable(f"{name} has no measured window")
    return (datetime.fromisoformat(timeline["window_start"]).timestamp(),
            datetime.fromisoformat(timeline["window_end"]).timestamp())


def _nodes(name: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """An input's nodes, named after the input (and their own name when it has several)."""
    own = doc.get("nodes") or []
    host = (doc.get("environment") or {}).get("host")
    return [{**n, "name": name if len(own) == 1 else f"{name}/{n['name']}", "host": host} for n in own]


def _limits(inputs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The inputs' environment.limits, each entry named with its input (its node in the merged result)."""
    return [{**entry, "node": name} for name, doc in inputs
            for entry in (doc.get("environment") or {}).get("limits") or [] if isinstance(entry, dict)]


def _session_node(name: str, doc: dict[str, Any], session: dict[str, Any]) -> str:
    return _node_name(name, doc, session.get("node"))


def _node_name(name: str, doc: dict[str, Any], node: Any) -> str:
    """A node of an input, as the merged result names it (see _nodes)."""
    return name if len(doc.get("nodes") or []) == 1 else f"{name}/{node}"


def _combined(nodes: list[dict[str, Any]], which: str) -> dict[str, Any] | None:
    readings = [(n.get("normalized") or {}).get(which) for n in nodes]
    return combine(readings) if readings and all(readings) else None


def _sum_or_none(values: list[Any]) -> float | None:
    return None if not values or any(v is None for v in values) else float(sum(values))


def _sum_totals(totals: list[dict[str, Any]]) -> dict[str, Any]:
    keys = dict.fromkeys(k for t in totals for k, v in t.items() if isinstance(v, (int, float)))
    return {k: sum(t.get(k) or 0 for t in totals) for k in keys}


def _sum_histograms(histograms: list[dict[str, Any]]) -> dict[str, Any]:
    bounds = histograms[0].get("bounds_us") if histograms else None
    if not bounds or any(h.get("bounds_us") != bounds for h in histograms):
        return {}
    out: dict[str, Any] = {"bounds_us": bounds}
    for kind in (k for k in histograms[0] if k != "bounds_us"):
        parts = [h[kind] for h in histograms if h.get(kind)]
        out[kind] = {"counts": [sum(c) for c in zip(*(p["counts"] for p in parts))],
                     "sum_us": sum(p.get("sum_us") or 0 for p in parts),
                     "max_us": max((p.get("max_us") or 0 for p in parts), default=0)}
    return out


def _sum_waits(inputs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    samples = 0
    for _, doc in inputs:
        waits = doc.get("waits") or {}
        samples += waits.get("samples") or 0
        for event, n in (waits.get("counts") or {}).items():
            counts[event] = counts.get(event, 0) + n
    return {"samples": samples, "counts": counts, "interval_seconds": (inputs[0][1].get("waits") or {})
            .get("interval_seconds")}


def _status(statuses: list[Any]) -> str:
    for worst in ("failed", "lost", "interrupted"):
        if worst in statuses:
            return worst
    return "complete"


def _reason(inputs: list[tuple[str, dict[str, Any]]]) -> str | None:
    reasons = [f"{name}: {doc.get('status_reason')}" for name, doc in inputs if doc.get("status") != "complete"]
    return "; ".join(reasons) or None


def _iso(epoch: float) -> str:
    from dbio.result import iso

    return iso(epoch) or ""
