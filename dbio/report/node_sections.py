"""The nodes of a run of several servers: one table, a row per node and the total (pure).

Like AWR's global report beside its instance reports: the total is the run's own figures; each
node's row is that node's figures (its counters, its sessions' statements). A run of one node
has no such section: its node is the run.
"""

from __future__ import annotations

from typing import Any, Mapping

from dbio.report import node_verdicts, writeset_section
from dbio.report.tables import table
from dbio.result_records import Node, Result
from dbio.stats import catalogue

COLUMNS = catalogue.figures("reads_per_s", "writes_per_s", "avg_read_us", "select_p99_us", "statements_per_s",
                            "db_cpu_us_per_read", "reads_per_host_cpu_second")
# Each node's own section (AWR's instance report beside the global one): its figures, by theme.
INSTANCE = (("Load", ("reads_per_s", "read_mib_per_s", "writes_per_s", "write_mib_per_s", "statements_per_s",
                      "selects_per_s", "updates_per_s", "wal_bytes_per_s")),
            ("Latency", ("avg_read_us", "avg_write_us", "avg_wal_sync_us", "select_mean_us", "select_p99_us")),
            ("CPU", ("db_cpu_cores", "db_cpu_us_per_read", "reads_per_db_cpu_second")),
            ("Validity", ("blocks_read_per_row", "buffer_hit_pct", "device_to_db_read_ratio")),
            ("Replication", ("wal_received_mib_per_s", "replay_lag_mib_max", "replay_lag_seconds_max")),
            ("Write-sets", writeset_section.PER_NODE))
REPLICATION = catalogue.figures("wal_received_mib_per_s", "replay_lag_mib_max", "replay_lag_seconds_max")


def section(r: Result) -> dict[str, Any] | None:
    nodes = r.nodes
    if len(nodes) < 2:
        return None
    sessions: dict[Any, int] = {}
    for s in r.sessions:
        sessions[s.get("node")] = sessions.get(s.get("node"), 0) + 1
    rows = [[n.name, _role(n), sessions.get(n.name), *_values(n.figures), _top_event(n.waits.counts)]
            for n in nodes]
    rows.append(["total", None, len(r.sessions) or None, *_values(dict(r.figures)),
                 _top_event(r.waits.counts)])
    notes = ["Each node's figures come from its own counters and its own sessions' statements; the total's "
             "are the run's (host CPU figures belong to the whole host, so they are in the total only)."]
    notes += [_describe(n) for n in nodes]
    notes += _cluster_notes(r)
    missing = [n.name for n in nodes if not n.figures]
    if missing:
        notes.append(f"No figures for {', '.join(missing)}: which session ran where was not recorded.")
    tables = [table("nodes", f"{len(nodes)} nodes",
                    ["Node", "Role", "Sessions", *[c.label for c in COLUMNS], "Top event"],
                    ["text", "text", "count", *[c.kind for c in COLUMNS], "text"], rows, notes)]
    replication = _replication(nodes)
    if replication is not None:
        tables.append(replication)
    writesets = writeset_section.writesets_table(r)
    if writesets is not None:
        tables.append(writesets)
    return {"id": "nodes", "title": "Nodes", "tables": tables}


def per_node(r: Result) -> list[dict[str, Any]]:
    """A section per node of a run of several: its figures by theme (those it measured), its verdicts."""
    if len(r.nodes) < 2:
        return []
    out = []
    for node in r.nodes:
        f = dict(node.figures or {})
        rows = [[theme, fig.label, {"value": fig.value(f), "kind": fig.kind}, fig.unit]
                for theme, names in INSTANCE for fig in catalogue.figures(*names) if fig.value(f) is not None]
        notes = [_describe(node)]
        if node.stopped:
            notes.append(node_verdicts.stopped(node, r.config.warmup))
        if node.start:
            notes.append(f"Clock offset from this host {_ms(node.start.get('clock_offset_s'))}, start "
                         f"{_ms(node.start.get('start_skew_s'))} from the agreed instant.")
        out.append({"id": f"node-{node.name}", "title": f"Node {node.name} ({node.role or '-'})",
                    "tables": [table(f"node-{node.name}", f"{node.name}: its own counters and sessions",
                                     ["Theme", "Figure", "Value", "Unit"], ["text", "text", "mixed", "text"], rows,
                                     notes)]})
    return out


def _describe(node: Node) -> str:
    """A node's server, and which sessions ran there (with its weight when it had one that mattered)."""
    text = f"{node.name}: {node.server.get('description') or '-'}"
    sessions = node.sessions
    if sessions.get("ranges"):
        text += f"; sessions {sessions['ranges']}"
    if node.weight not in (None, 1.0):
        text += f" (weight {node.weight:g})"
    if sessions.get("update_capable") is False:
        text += "; read-only: its sessions ran the loop without UPDATEs"
    return text


def _cluster_notes(r: Result) -> list[str]:
    """How the nodes started together, and how many sessions could UPDATE."""
    cluster, out = r.cluster, []
    if cluster.get("read_only_nodes"):
        out.append(f"UPDATE-capable sessions: {cluster.get('update_capable_sessions')} of "
                   f"{len(r.sessions)} (update_pct applies to the writable nodes' sessions only).")
    starts = {n.name: n.start for n in r.nodes if n.start}
    if cluster.get("start_agreed") and starts:
        skew = cluster.get("start_skew_seconds")
        offsets = ", ".join(f"{name} {_ms(s.get('clock_offset_s'))}" for name, s in starts.items())
        out.append(f"One start agreed in advance for every node (each server's sessions waited for it on its own "
                   f"clock): start skew across the nodes {_ms(skew)}; clock offsets from this host: {offsets}.")
    return out


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{1000 * seconds:+.1f} ms"


def _replication(nodes: tuple[Node, ...]) -> dict[str, Any] | None:
    """Each standby's WAL received and how far its replay lagged (read on the standby)."""
    standbys = [n for n in nodes if n.replication]
    if not standbys:
        return None
    rows = [[n.name, *[c.value(n.figures) for c in REPLICATION], node_verdicts.lagging(n) and "lagging"
             or "kept up"] for n in standbys]
    return table("replication", "Replication (each standby, as it saw itself)",
                 ["Node", *[f"{c.label} ({c.unit})" for c in REPLICATION], "Verdict"],
                 ["text", *[c.kind for c in REPLICATION], "text"], rows,
                 [f"Lag: WAL received but not yet replayed, and the age of the last transaction replayed while WAL "
                  f"waited; the largest of the window's samples. Lagging: beyond {node_verdicts.LAG_SECONDS_LIMIT:g} s "
                  f"or {node_verdicts.LAG_MIB_LIMIT:g} MiB."])


def _role(node: Node) -> str | None:
    if not node.stopped:
        return node.role
    since = node.stopped.since_start
    return f"{node.role}, stopped" + (f" +{since:.1f} s" if since is not None else "")


def _values(figures: Mapping[str, Any] | None) -> list[Any]:
    return [c.value(figures) if figures else None for c in COLUMNS]


def _top_event(counts: Mapping[str, float] | None) -> str | None:
    """The state the node's sessions were most often seen in, with its share of the samples."""
    if not counts:
        return None
    label, n = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
    return f"{label} {100.0 * n / sum(counts.values()):.0f}%"
