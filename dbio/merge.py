"""Several hosts' runs as one result (pure): each input a node (or its nodes), plus their total.

Runs launched on several hosts against one storage (with --start-at, they measure the same
seconds) are one experiment. The merged result is format 2: its nodes are the inputs' nodes, with
their own figures as each input computed them (host CPU included: each host's own); its top level
is the total: the nodes' neutral counters summed over their windows, the sessions' statements and
histograms summed. The total is only as true as the windows are alike: inputs whose windows do not
overlap, or whose lengths differ by more than WINDOW_LENGTH_SPREAD, are refused (but the parts of one
run on one server: a part cut short is named, the server's counters hold what its sessions did).

Inputs may share a server (the parts of one run, --part i/N, or hosts given one --dsn): each such
input's server-wide counters count every input's reads, so the total takes each server's counters
once (a server is its identity, as the server gave it, not the connection string) and its sessions'
own counts (PostgreSQL 18: per backend) from every input; the two are checked against each other.
A part that was not given, started late or did not complete is named; the others' figures stand.
"""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Any

from dbio import __version__
from dbio import merge_disruptions
from dbio import parts as run_parts
from dbio.engines.counters import combine
from dbio.merge_inputs import (NotMergeable, refuse_other_workloads, refuse_repeats, refuse_same_readings,
                               refuse_unidentified, server_identity)
from dbio.stats import figures as figure_math
from dbio.stats import rate as rates

WINDOW_LENGTH_SPREAD = 0.05  # the longest window at most 5% longer than the shortest,
READING_LATENESS_SECONDS = 1.0  # or this much: a busy host reads a window's end up to a second late
# The sessions' own reads and their server's, as counts over one interval when the runs' windows opened
# together: apart by more than the report's own limit for other sessions' share, they disagree (other
# clients or the server's own processes read). As rates over each run's own window (windows opened
# apart), each rate also carries its readings' lateness: a wider margin.
AGREEMENT_PCT = figure_math.OTHER_SESSIONS_SHARE_LIMIT_PCT
RATES_AGREEMENT_PCT = 2.0
LATE_PART_SECONDS = 1.0  # a part whose window opened this much after the first one's is named late (a slice)


def merge(inputs: list[tuple[str, dict[str, Any]]], label: str) -> dict[str, Any]:
    """inputs: (name, result document as result.read gives it) for each host's run."""
    # a run's parts merge however few of them wrote (one alone, the others named missing); whole runs, two or more
    if len(inputs) < 2 and not (inputs and run_parts.part_of(inputs[0][1])):
        raise NotMergeable("give at least two results (or the parts of one run that wrote a result)")
    refuse_repeats(inputs)
    given = inputs
    refuse_unidentified(inputs)
    inputs, unmeasured = _measured_parts(inputs)
    if not inputs:
        raise NotMergeable(f"no result given measured a window ({_reason(unmeasured)})" if unmeasured else
                           "give at least two results")
    if len(inputs) < 2 and not run_parts.part_of(inputs[0][1]):
        raise NotMergeable("give at least two results that measured a window")
    windows = [_window(name, doc) for name, doc in inputs]
    overlap = min(end for _, end in windows) - max(start for start, _ in windows)
    if overlap <= 0:
        raise NotMergeable("the runs' windows do not overlap: start them with one --start-at")
    lengths = [end - start for start, end in windows]
    refuse_other_workloads(inputs)
    nodes = [node for name, doc in inputs for node in _nodes(name, doc)]
    names = [n["name"] for n in nodes]
    if len(set(names)) != len(names):
        raise NotMergeable(f"two inputs have the same name "
                           f"({', '.join(sorted({n for n in names if names.count(n) > 1}))})"
                           ": name them apart with --names")
    refuse_same_readings(nodes, _session_pids(inputs))
    first = inputs[0][1]
    chosen = _once_per_server(nodes, "end")
    opened = _once_per_server(nodes, "begin")
    one_server = len(chosen) == 1 and len(nodes) > 1 and server_identity(nodes[chosen[0]]) is not None
    parts_of_one_server = one_server and any(run_parts.part_of(doc) for _, doc in inputs)
    if not _alike(max(lengths), min(lengths)) and not parts_of_one_server:
        cut = inputs[lengths.index(min(lengths))]
        raise NotMergeable(f"the runs' windows last {min(lengths):.1f} to {max(lengths):.1f} s: {cut[0]}'s was cut "
                           f"short ({cut[1].get('status')}); merge runs that measured their whole --run-time")
    # one server's counters, once: over their own interval (the last begin reading to the last end one),
    # which holds a part cut short as it holds the others; runs on several servers add over about one length
    interval = _server_rate(nodes[opened[0]], nodes[chosen[0]])[1] if one_server else None
    seconds = interval or statistics.fmean(lengths)
    begin, end = _combined(nodes, "begin", opened), _combined(nodes, "end", chosen)
    counting = _counting(nodes, opened, chosen)
    part_record = _parts(given, inputs, windows, unmeasured)
    totals = _sum_totals([doc.get("totals") or {} for _, doc in inputs])
    histograms = _sum_histograms([doc.get("histograms") or {} for _, doc in inputs])
    if any("hot_rows" not in (doc.get("totals") or {}) for _, doc in inputs):
        totals.pop("hot_rows", None)  # a result from before the hot spot's parts: the total has none
    resets = [{**r, "node": _node_name(name, doc, r.get("node"))} for name, doc in inputs
              for r in doc.get("counter_resets") or [] if isinstance(r, dict)]
    # each node's read probe timed its own single reads: their histograms add up (never their percentiles)
    probes = {_node_name(name, doc, node): probe for name, doc in inputs
              for node, probe in (doc.get("read_probe") or {}).items() if isinstance(probe, dict)}
    # --rate: each input asked its own share (a part's, a host's): the total asked is theirs added up
    asked = _sum_or_none([((doc.get("figures") or {}).get("rate") or {}).get("asked_per_s") for _, doc in inputs])
    # ...and achieved: each its statements over its own window. Their sum over the server's interval (the last begin
    # reading to the last end one, longer when a part's end reading came late) would understate it beside asked
    achieved = _sum_all([((doc.get("figures") or {}).get("rate") or {}).get("achieved_per_s") for _, doc in inputs])
    served = _sum_all([_served_per_s(((doc.get("figures") or {}).get("rate") or {})) for _, doc in inputs])
    figures = _total_figures(first, [nodes[i] for i in chosen], seconds, begin, end, totals, histograms,
                             sorted({r["counter"] for r in resets if isinstance(r.get("counter"), str)}), probes,
                             asked, achieved, served)
    start = max(s for s, _ in windows)
    skew = start - min(s for s, _ in windows)
    # --event: each input's events kept, their figures over the merged curve (an event ran on one part's side)
    events, dips = merge_disruptions.merged(inputs, start, overlap, _input_server)
    if dips:
        figures["disruptions"] = dips
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
        "events": [{"t": start, "kind": "merged", "message": _merged_message(inputs, overlap, seconds, skew,
                                                                              len(chosen) == len(nodes), len(chosen))},
                   *_counting_events(start, counting), *_part_events(start, part_record)],
        "normalized": {"begin": begin, "end": end}, "totals": totals, "histograms": histograms,
        **({"read_probe": probes} if probes else {}),
        "counter_resets": resets,  # an input's counters that went back: no total is built on them either
        "series": [], "stalls": [], "waits": _sum_waits(inputs), "monitor_errors": [],
        "figures": figures, "merged_from": [{"name": name, "run_id": doc.get("run_id"), "label": doc.get("label"),
                                            **({"part": doc["part"]} if doc.get("part") else {})}
                                           for name, doc in inputs],
        **({"counting": counting} if counting else {}), **({"parts": part_record} if part_record else {}),
        **({"disruptions": events} if events else {}),
    }


def _input_server(name: str, doc: dict[str, Any]) -> str | None:
    """An input's server, as the total counts it once (its first node's identity)."""
    nodes = _nodes(name, doc)
    return server_identity(nodes[0]) if nodes else None


def _total_figures(first: dict[str, Any], nodes: list[dict[str, Any]], seconds: float, begin: dict[str, Any] | None,
                   end: dict[str, Any] | None, totals: dict[str, Any], histograms: dict[str, Any],
                   reset: list[str], probes: dict[str, dict[str, Any]], asked: float | None = None,
                   achieved: float | None = None, served: float | None = None) -> dict[str, Any]:
    """The total's figures: the nodes' counters summed over windows of (about) one length; no host
    figures (the hosts are several: each node has its own). asked: the inputs' --rate asked, added up (the
    rate held or not judged on the total's achieved and lag, there being no series of intervals)."""
    if not (begin and end):
        return {"window_seconds": None}
    caps = [n.get("capabilities") or {} for n in nodes]
    page = caps[0].get("page_bytes") or 8192 if caps else 8192
    w = first["config"]["workload"]
    figures = figure_math.derive({
        "seconds": seconds, "engine_begin": begin, "engine_end": end, "totals": totals,
        "histograms": histograms, "os_begin": None, "os_end": None, "cores": None,
        "cache_bytes": _sum_or_none([n["figures"].get("validity", {}).get("cache_bytes")
                                     for n in nodes if n.get("figures")]),
        "data_bytes": (w.get("scale") or 0) * (w.get("schemas") or 0) * page,  # a row a page
        "direct_io": all(c.get("direct_io") for c in caps), "local": False,
        "io_timing": all(c.get("times_data_io", True) for c in caps),
        "wal_io_timing": all(c.get("times_redo_io", True) for c in caps), "work_unit": w.get("work_unit"),
        "page_bytes": page, "reset_counters": reset,
        "read_probe": probes if probes and histograms.get("bounds_us") else None,
        "update_work_unit": w.get("update_work_unit") or w.get("work_unit"),
        "rate_asked_per_s": asked, "rate_schedule": w.get("rate_schedule") or "poisson",
        "latency_limit_us": (w.get("latency_limit") or 0) * 1e6})
    if figures.get("rate"):
        if achieved is not None:  # the inputs' own, added up (as asked is)
            asked_per_s = figures["rate"]["asked_per_s"]
            figures["rate"].update(achieved_per_s=achieved, achieved_pct=100.0 * achieved / asked_per_s,
                                   served_pct=100.0 * (achieved if served is None else served) / asked_per_s)
        figures["rate"] = rates.judge(figures["rate"], [], 0, 1)
    return figures


def _served_per_s(rate: dict[str, Any]) -> float | None:
    """An input's own arrivals served per second: its rate achieved less the warm-up's queue it carried in (a
    result from before that was counted: its rate achieved)."""
    achieved = rate.get("achieved_per_s")
    if not isinstance(achieved, (int, float)) or rate.get("served_pct") is None or not rate.get("asked_per_s"):
        return achieved
    return rate["served_pct"] * rate["asked_per_s"] / 100.0


def _sum_all(values: list[Any]) -> float | None:
    """The values added up when every one is a number; None when any is absent (an input without it)."""
    if not values or any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in values):
        return None
    return float(sum(values))


def _measured_parts(inputs: list[tuple[str, dict[str, Any]]]) -> tuple[list[tuple[str, dict[str, Any]]],
                                                                       list[tuple[str, dict[str, Any]]]]:
    """A run's parts that measured no window (ended before it opened) are left out, to be named; a
    whole run without a window is refused (_window)."""
    if not any(run_parts.part_of(doc) for _, doc in inputs):
        return inputs, []
    measured = [(n, d) for n, d in inputs if (d.get("timeline") or {}).get("window_start")
                and (d.get("timeline") or {}).get("window_end")]
    return measured, [(n, d) for n, d in inputs if (n, d) not in measured]


def _once_per_server(nodes: list[dict[str, Any]], which: str) -> list[int]:
    """One node per server, in the order servers first appear (a node whose server gave no identity is
    its own): the one whose `which` reading (begin or end) the server took last. Each run flushes its
    own sessions' statistics before its readings, another run's pending ones reach the server's
    counters within a second or so: the last reading at each end of the window holds every run's."""
    latest: dict[str, int] = {}
    order: list[str] = []
    for i, node in enumerate(nodes):
        key = server_identity(node) or f"#{i}"
        if key not in latest:
            order.append(key)
            latest[key] = i
        elif _reading_time(node, which) > _reading_time(nodes[latest[key]], which):
            latest[key] = i
    return [latest[key] for key in order]


def _reading_time(node: dict[str, Any], which: str) -> float:
    t = ((node.get("normalized") or {}).get(which) or {}).get("t")
    return float(t) if isinstance(t, (int, float)) else float("-inf")


def _own_reads(node: dict[str, Any]) -> float | None:
    """The reads a node's own sessions made in its window (None where its engine cannot tell)."""
    normalized = node.get("normalized") or {}
    b, e = [((normalized.get(w) or {}).get("sessions") or {}).get("reads") for w in ("begin", "end")]
    return None if b is None or e is None else float(e) - float(b)


def _server_rate(first: dict[str, Any], last: dict[str, Any]) -> tuple[float | None, float | None]:
    """A server's reads/s from one node's begin reading to another's end reading (one server's counters
    and clock: any two of its readings make an interval), and that interval's seconds."""
    b, e = [((n.get("normalized") or {}).get(w) or {}) for n, w in ((first, "begin"), (last, "end"))]
    began, ended = [(r.get("data") or {}).get("reads") for r in (b, e)]
    if began is None or ended is None or not isinstance(b.get("t"), (int, float)) or \
            not isinstance(e.get("t"), (int, float)):
        return None, None
    seconds = float(e["t"]) - float(b["t"])
    return ((float(ended) - float(began)) / seconds, seconds) if seconds > 0 else (None, None)


def _opened_together(group: list[dict[str, Any]]) -> bool:
    """Whether the runs' begin readings came within one slice of each other: their sessions publish their
    counts once a slice, so no run's window had published a count before the last of them was read."""
    times = [float(t) for n in group if isinstance(t := ((n.get("normalized") or {}).get("begin") or {}).get("t"),
                                                     (int, float))]
    if len(times) < len(group):
        return False
    return max(times) - min(times) < LATE_PART_SECONDS


def _node_seconds(node: dict[str, Any]) -> float | None:
    seconds = (node.get("figures") or {}).get("window_seconds")
    return float(seconds) if isinstance(seconds, (int, float)) and seconds > 0 else None


def _counting(nodes: list[dict[str, Any]], opened: list[int], chosen: list[int]) -> list[dict[str, Any]]:
    """For each server more than one input ran against: its reads/s (its counters, once, from the last
    begin reading to the last end reading) against every input's own sessions' reads, and whether they
    agree. Inputs whose windows opened together compare counts over that one interval ("compared":
    "counts"); others each its own sessions' rate over its own window ("rates")."""
    out = []
    for b, i in zip(opened, chosen):
        identity = server_identity(nodes[i])
        group = [n for n in nodes if identity is not None and server_identity(n) == identity]
        if len(group) < 2:
            continue
        own = [(_own_reads(n), _node_seconds(n)) for n in group]
        by = nodes[i]["name"] if b == i else f"{nodes[b]['name']} to {nodes[i]['name']}"
        server_rate, server_seconds = _server_rate(nodes[b], nodes[i])
        entry: dict[str, Any] = {"server": identity, "description": (nodes[i].get("server") or {}).get("description"),
                                 "nodes": [n["name"] for n in group], "counted_by": by,
                                 "server_reads_per_s": server_rate, "compared": None,
                                 "own_reads_per_s": None, "difference_pct": None, "agree": None, "others": None}
        if all(r is not None for r, _ in own) and server_seconds and _opened_together(group):
            # one interval holds every run's window: the counts compare as they are, whatever each run's
            # readings' own lateness made of its window's length (a busy host delays a reading by a second)
            entry["own_reads_per_s"] = sum(float(r) for r, _ in own if r is not None) / server_seconds
            entry["compared"] = "counts"
        elif all(r is not None and s for r, s in own):
            entry["own_reads_per_s"] = sum(r / s for r, s in own if r is not None and s)
            entry["compared"] = "rates"
        if entry["own_reads_per_s"] is not None and entry["server_reads_per_s"]:
            diff = 100.0 * (entry["server_reads_per_s"] - entry["own_reads_per_s"]) / entry["server_reads_per_s"]
            entry["difference_pct"] = diff
            margin = AGREEMENT_PCT if entry["compared"] == "counts" else RATES_AGREEMENT_PCT
            entry["agree"] = abs(diff) <= margin
            entry["others"] = diff > margin  # the server read more than the runs' sessions: others shared it
        out.append(entry)
    return out


def _counting_events(t: float, counting: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events = []
    for c in counting:
        where = f"{c['description'] or 'the server'} (counted once, from {c['counted_by']})"
        if c["agree"] is None:
            message = (f"{len(c['nodes'])} runs shared {where}: their sessions' own reads are not counted apart on "
                       "this server, so only the server's total is known")
        else:
            message = (f"{len(c['nodes'])} runs shared {where}: their sessions read {c['own_reads_per_s']:,.0f}/s, "
                       f"the server {c['server_reads_per_s']:,.0f}/s ({c['difference_pct']:+.1f}%): "
                       + ("they agree" if c["agree"] else "other clients or the server's own processes shared the "
                          "server" if c["others"] else "the sessions' count exceeds the server's (windows apart?)"))
        events.append({"t": t, "kind": "counting", "message": message})
    return events


def _parts(given: list[tuple[str, dict[str, Any]]], measured: list[tuple[str, dict[str, Any]]],
           windows: list[tuple[float, float]], unmeasured: list[tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
    """The run's parts: which were given, which not, which started late, which did not complete."""
    found = [(name, run_parts.part_of(doc), doc) for name, doc in given]
    if not found or any(part is None for _, part, _ in found):
        return None
    first = found[0][1]
    assert first is not None
    indices = {part.index for _, part, _ in found if part}
    first_open = min(start for start, _ in windows)
    late = [{"name": name, "seconds": start - first_open}
            for (name, _), (start, _) in zip(measured, windows) if start - first_open > LATE_PART_SECONDS]
    longest = max(end - start for start, end in windows)
    short = [{"name": name, "seconds": end - start, "of_seconds": longest}
             for (name, _), (start, end) in zip(measured, windows)
             if not _alike(longest, end - start)]
    return {"run": first.run, "of": first.of,
            "given": [{"name": name, "index": part.index} for name, part, _ in found if part],
            "missing": sorted(set(range(1, first.of + 1)) - indices), "late": late, "short": short,
            "incomplete": [{"name": name, "status": doc.get("status"), "reason": doc.get("status_reason"),
                            "measured": (name, doc) not in unmeasured} for name, _, doc in found
                           if doc.get("status") != "complete"]}


def _merged_message(inputs: list[tuple[str, dict[str, Any]]], overlap: float, seconds: float, skew: float,
                    each_own: bool, servers: int) -> str:
    names = ", ".join(n for n, _ in inputs)
    if len(inputs) == 1:  # one part of a run alone: the parts missing are named after it
        return f"merged from 1 run ({names}), the only part given: its window lasted {seconds:.1f} s"
    return (f"merged from {len(inputs)} runs ({names}): their windows overlap for {overlap:.1f} s of {seconds:.1f} s "
            f"(their starts {skew:.3f} s apart); "
            + ("the total adds each node's counters over its own window" if each_own
               else f"the total takes each of {servers} server(s)' counters once and adds the sessions' own counts "
                    "of every run"))


def _part_events(t: float, record: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not record:
        return []
    missing = []  # a kind of its own: the headline marks the total's figures as not the whole run's
    if record["missing"]:
        missing.append({"t": t, "kind": "parts_missing", "message":
                        f"part(s) {', '.join(map(str, record['missing']))} of {record['of']} of run {record['run']} "
                        "were not given: the total is of the parts given, not the whole "
                        "run's"})
    out = []
    for late in record["late"]:
        out.append(f"part {late['name']} opened its window {late['seconds']:.1f} s after the first part's")
    for short in record.get("short") or []:
        out.append(f"part {short['name']} measured {short['seconds']:.1f} s of the {short['of_seconds']:.1f} s the "
                   "longest part did: its window was cut short, the server's counters hold what its sessions did")
    for bad in record["incomplete"]:
        left = "" if bad["measured"] else " and measured no window: it is left out of the total"
        out.append(f"part {bad['name']} is {bad['status']}{left} ({bad['reason']})")
    return missing + [{"t": t, "kind": "parts", "message": m} for m in out]


def _alike(longer: float, shorter: float) -> bool:
    """Whether two windows of one --run-time measured it alike (their lengths apart by their readings' lateness)."""
    return longer <= max(shorter * (1 + WINDOW_LENGTH_SPREAD), shorter + READING_LATENESS_SECONDS)


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


def _session_pids(inputs: list[tuple[str, dict[str, Any]]]) -> dict[str, frozenset[int]]:
    """Each node's sessions' process ids (as the server gave them), by the node's name in the merged result."""
    found: dict[str, set[int]] = {}
    for name, doc in inputs:
        for session in doc.get("sessions") or []:
            pid = session.get("pid") if isinstance(session, dict) else None
            if isinstance(pid, int) and not isinstance(pid, bool):
                found.setdefault(_session_node(name, doc, session), set()).add(pid)
    return {node: frozenset(pids) for node, pids in found.items()}


def _limits(inputs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The inputs' environment.limits, each entry named with its input (its node in the merged result)."""
    return [{**entry, "node": name} for name, doc in inputs
            for entry in (doc.get("environment") or {}).get("limits") or [] if isinstance(entry, dict)]


def _session_node(name: str, doc: dict[str, Any], session: dict[str, Any]) -> str:
    return _node_name(name, doc, session.get("node"))


def _node_name(name: str, doc: dict[str, Any], node: Any) -> str:
    """A node of an input, as the merged result names it (see _nodes)."""
    return name if len(doc.get("nodes") or []) == 1 else f"{name}/{node}"


def _combined(nodes: list[dict[str, Any]], which: str, chosen: list[int] | None = None) -> dict[str, Any] | None:
    """The total reading: each server's counters once (chosen: one node's reading per server, in the
    order servers first appear), and the sessions' own counts of every node (each counts only its own
    sessions)."""
    chosen = list(range(len(nodes))) if chosen is None else chosen
    readings: list[dict[str, Any]] = [r for n in nodes if (r := (n.get("normalized") or {}).get(which))]
    if not readings or len(readings) < len(nodes):
        return None
    total = combine([readings[i] for i in chosen])
    if len(chosen) < len(nodes):
        own = [o for r in readings if isinstance(o := r.get("sessions"), dict)]
        total = {k: v for k, v in total.items() if k != "sessions"}
        if len(own) == len(readings):
            total["sessions"] = {k: _sum_or_none([o.get(k) for o in own])
                                 for k in dict.fromkeys(k for o in own for k in o)}
    return total


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
    # a kind one input did not time would hold only the others' reads, while the totals count every input's
    for kind in (k for k in histograms[0] if k != "bounds_us" and all(h.get(k) for h in histograms)):
        parts = [h[kind] for h in histograms]
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
