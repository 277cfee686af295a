"""A multi-writer cluster's write-sets, per node and for the cluster (pure): the Galera table of a
run's Nodes section, the awr_rac analogue of its global cache and interconnect figures.

Every node applies every write-set, its own (replicated) and the others' (received): a node's
writes are the cluster's, so the nodes' writes summed are N times one node's, never N nodes'
work of their own. The cluster's write-sets are what its nodes replicated, summed."""

from __future__ import annotations

from typing import Any

from dbio.report.tables import table
from dbio.result_records import Node, Result
from dbio.stats import catalogue

COLUMNS = catalogue.figures("writesets_replicated_per_s", "writesets_received_per_s", "writesets_applied_per_s",
                            "writesets_replicated_kib_per_s", "writesets_received_kib_per_s", "cert_failures_per_s",
                            "bf_aborts_per_s", "replays_per_s", "conflict_retries_per_s", "flow_control_paused_pct",
                            "recv_queue_end", "send_queue_end", "update_mean_us")
PER_NODE = ("writesets_replicated_per_s", "writesets_replicated_kib_per_s", "writesets_received_per_s",
            "writesets_received_kib_per_s", "writesets_applied_per_s", "cert_failures_per_s", "bf_aborts_per_s",
            "replays_per_s", "conflict_retries_per_s", "flow_control_paused_s", "flow_control_paused_pct",
            "recv_queue_end", "send_queue_end", "cluster_size_end", "update_mean_us", "update_p99_us")


def clustered(nodes: tuple[Node, ...]) -> list[Node]:
    return [n for n in nodes if (n.figures or {}).get("writesets")]


def writesets_table(r: Result) -> dict[str, Any] | None:
    """A row per node of a multi-writer cluster and the cluster's; None when no node is one."""
    nodes = clustered(r.nodes)
    if not nodes:
        return None
    rows = [[n.name, *[c.value(n.figures) for c in COLUMNS]] for n in nodes]
    total = dict(r.figures)
    rows.append(["cluster", *[c.value(total) for c in COLUMNS]])
    return table("writesets", "Write-sets (each node of the multi-writer cluster, and the cluster)",
                 ["Node", *[c.short or c.label for c in COLUMNS]],
                 ["text", *[c.kind for c in COLUMNS]], rows, notes(r, nodes))


def notes(r: Result, nodes: list[Node]) -> list[str]:
    """What the cluster's row means: its write-sets once, each applied on every node."""
    rep = catalogue.figure("writesets_replicated_per_s")
    applied = catalogue.figure("writesets_applied_per_s")
    committed = rep.value(dict(r.figures))
    out = []
    if committed is not None:
        each = [applied.value(n.figures) for n in nodes]
        shown = ", ".join(f"{n.name} {v:,.1f}/s" for n, v in zip(nodes, each) if v is not None)
        out.append(f"The cluster committed {committed:,.1f} write-sets/s (its nodes' replicated, summed); every node "
                   f"applies every one ({shown}), so the nodes' writes summed are {len(nodes)} times one node's, "
                   "not work of their own: a cluster's write throughput is one node's.")
    out.append("Conflicts: a certification failure rolls back a transaction whose write-set met one committed first "
               "elsewhere; a brute-force abort, one whose locks another node's write-set took; the loop runs such an "
               "UPDATE again (retried). Flow control paused: the share of the window every node's commits waited "
               "for a node's receive queue to shrink (the cluster's: the mean of its nodes'). Queues: write-sets at "
               "the window's end.")
    return out
