"""What limited a multi-writer cluster's writes (pure): flow control, conflicts, a lost quorum.

A Galera cluster commits no faster than its slowest node applies (flow control pauses every node
while one's receive queue is long), and UPDATEs of the same rows on several nodes conflict (one
wins certification, the others roll back and run again). Either, when large, is the limit of the
run's writes rather than its storage; a node left in a component of half the nodes or fewer has
lost its quorum and takes no more writes."""

from __future__ import annotations

from dbio.report.finding import Finding, found
from dbio.result_records import Result
from dbio.stats.catalogue import value

FLOW_CONTROL_PCT = 5.0  # % of the window the cluster's commits were paused beyond which it is the limit
CONFLICT_PCT = 1.0  # % of UPDATEs that met a conflict beyond which conflicts limit the writes


def flow_control(r: Result) -> Finding | None:
    f = dict(r.figures)
    share = value(f, "flow_control_paused_pct")
    if share is None or share < FLOW_CONTROL_PCT:
        return None
    worst = max(((value(n.figures, "flow_control_paused_pct") or 0.0, n.name) for n in r.nodes if n.figures),
                default=(share, "?"))
    return found("warning", "flow_control", f"flow control paused the cluster's commits {share:.1f}% of the window "
                 f"(the most on {worst[1]}: {worst[0]:.1f}%): a node applied the others' write-sets too slowly, so the "
                 "writes were held to the slowest node's pace, not the storage's", "flow_control_paused_pct", share)


def conflicts(r: Result) -> Finding | None:
    f = dict(r.figures)
    rate, updates = value(f, "cert_failures_per_s"), value(f, "updates_per_s")
    aborts = value(f, "bf_aborts_per_s")
    if rate is None or aborts is None or not updates:
        return None
    pct = 100.0 * (rate + aborts) / updates
    if pct < CONFLICT_PCT:
        return None
    retried = value(f, "conflict_retries_per_s")
    again = f"; the sessions ran {retried:,.1f} UPDATEs/s again" if retried is not None else ""
    return found("warning", "conflicts", f"{pct:.1f}% of UPDATEs met a conflict across the nodes ({rate:,.1f} "
                 f"certification failures/s, {aborts:,.1f} brute-force aborts/s{again}): nodes updating the same rows "
                 "(--hot-schema-frequency) limited the writes", "cert_failures_per_s", rate)


def quorum(r: Result) -> Finding | None:
    """A node whose primary component held half the cluster or less as the window closed."""
    sizes = [(n.name, value(n.figures, "cluster_size_end")) for n in r.nodes if n.figures]
    known = [(name, size) for name, size in sizes if size is not None]
    if len(known) < 2:
        return None
    whole = len(r.nodes)
    short = [(name, size) for name, size in known if size * 2 <= whole]
    lost = [n.name for n in r.nodes if n.stopped]
    if short:
        name, size = short[0]
        return found("warning", "quorum_lost", f"{name} was in a component of {size:.0f} of the {whole} nodes as the "
                     "window closed: the cluster lost its quorum and took no more writes there", "cluster_size_end",
                     size)
    if lost:
        size = min(size for _, size in known)
        return found("info", "quorum_kept", f"{', '.join(lost)} left the cluster; the others kept a quorum "
                     f"({size:.0f} of {whole} nodes) and went on committing", "cluster_size_end", size)
    return None
