"""A multi-writer cluster node's write-sets in a window (pure): Galera's replication as figures.

Every node of a Galera cluster applies every write-set: its own commits it replicates, the
others' it receives and applies. So a node's writes are the cluster's, and the cluster's writes
summed over N nodes are N times one node's (the report explains it, never adds them as work
done N times). A conflict rolls a transaction back: a certification failure (its write-set met
one committed first elsewhere) or a brute-force abort (another node's write-set took its locks);
a replay is a transaction run again after such an abort, by the server. Flow control pauses every
node's commits while one node's receive queue is too long: its paused time is the share of the
window the cluster could not commit."""

from __future__ import annotations

from typing import Any

from dbio.stats.counters import get, rate

KiB = 1024.0


def derive(end: dict[str, Any] | None, d: dict[str, Any], seconds: float,
           totals: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The window's write-set figures of one node (or of the total, d summed over the nodes); None: no
    node of a multi-writer cluster. totals: the sessions' counts (their UPDATEs, the retries they ran)."""
    if not isinstance((end or {}).get("writesets"), dict):
        return None
    replicated, received = get(d, "writesets", "replicated"), get(d, "writesets", "received")
    paused_ns = get(d, "writesets", "flow_control_paused_ns")
    paused_s = paused_ns / 1e9 if paused_ns is not None else None
    nodes = get(end, "writesets", "nodes") or 1.0  # several: the total of a cluster's nodes (its share a mean)
    applied = replicated + received if replicated is not None and received is not None else None
    conflicts = [get(d, "writesets", k) for k in ("cert_failures", "bf_aborts")]
    out = {"replicated_per_s": rate(replicated, seconds),
           "replicated_kib_per_s": rate(_kib(get(d, "writesets", "replicated_bytes")), seconds),
           "received_per_s": rate(received, seconds),
           "received_kib_per_s": rate(_kib(get(d, "writesets", "received_bytes")), seconds),
           "applied_per_s": rate(applied, seconds),
           "cert_failures_per_s": rate(conflicts[0], seconds), "bf_aborts_per_s": rate(conflicts[1], seconds),
           "conflicts": sum(conflicts) if None not in conflicts else None,
           "replays_per_s": rate(get(d, "writesets", "replays"), seconds),
           "flow_control_paused_s": paused_s / nodes if paused_s is not None else None,
           "flow_control_paused_pct": 100.0 * paused_s / nodes / seconds if paused_s is not None and seconds else None,
           "flow_control_sent": get(d, "writesets", "flow_control_sent"),
           "recv_queue_end": get(end, "gauges", "recv_queue"), "send_queue_end": get(end, "gauges", "send_queue"),
           # the nodes in the node's primary component as the window closed (a total's sum would mean nothing)
           "cluster_size_end": get(end, "gauges", "cluster_size") if nodes == 1 else None,
           "nodes": nodes}
    if totals is not None and isinstance(totals.get("retries"), (int, float)):
        out["retries_per_s"] = rate(totals["retries"], seconds)
    return out


def _kib(value: float | None) -> float | None:
    return value / KiB if value is not None else None
