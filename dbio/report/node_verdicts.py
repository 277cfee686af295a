"""Verdicts per node of a run of several servers (pure), as AWR reads each instance apart.

A node's own figures go through the same rules as the run's (its reads served by the cache, its
device doing more than its engine: shared with another node or process), each finding named
with its node; a standby whose replay fell behind its primary gets a finding of its own.
"""

from __future__ import annotations

from typing import Any, Callable

from dbio.result_records import Node, Result
from dbio.stats.catalogue import value

LAG_SECONDS_LIMIT = 1.0  # a standby whose replay fell this far behind read data older than its primary's
LAG_MIB_LIMIT = 16.0  # WAL received and not yet replayed


def node_findings(result: Result, rules: tuple[Callable[[Result], Any], ...],
                  make: Callable[..., Any]) -> list[Any]:
    """rules: verdict rules to run on each node's figures; make: the Finding constructor."""
    if len(result.nodes) < 2:
        return []
    out = []
    for node in result.nodes:
        if node.stopped:
            out.append(make("warning", "node_stopped", stopped(node, result.config.warmup),
                            "window_seconds", node.stopped.figures_cover_seconds))
        if not node.figures:
            continue
        view = result.node_view(node)  # the node's own facts too (a merge's nodes are hosts)
        for rule in rules:
            found = rule(view)
            if found is not None:
                out.append(make(found.level, f"node_{found.code}", f"{node.name}: {found.message}",
                                found.figure, found.value))
        lag = lagging(node)
        if lag is not None:
            out.append(make("warning", "node_lagging_standby", lag, "replication.replay_lag_seconds_max",
                            value(dict(node.figures), "replay_lag_seconds_max")))
    return out


def stopped_briefly(node: Node, warmup: float | None = None) -> str:
    """'node2 stopped during the warm-up (why)' (a node that did not stop: 'during the run')."""
    since = node.stopped.since_start if node.stopped else None
    if since is None:
        when = "during the run"
    elif since < 0:
        when = "before the start"
    elif warmup and since < warmup:
        when = "during the warm-up"
    else:
        when = f"+{since:.1f} s after the start"
    reason = node.stopped.reason if node.stopped else None
    return f"{node.name} stopped {when} ({reason or 'no reason recorded'})"


def stopped(node: Node, warmup: float | None = None) -> str:
    """A node whose server stopped during the run, in words (before the start or in the warm-up said so)."""
    covers = node.stopped.figures_cover_seconds if node.stopped else None
    return (f"{stopped_briefly(node, warmup)}: the other nodes finished "
            f"the window; its figures cover {'its first ' + format(covers, '.1f') + ' s' if covers else 'none'} of "
            "it, and the run's totals are partial (they hold its work up to its last reading only)")


def lagging(node: Node) -> str | None:
    """A standby whose replay fell behind in the window, in words; None when it kept up."""
    f = node.figures
    seconds, mib = value(f, "replay_lag_seconds_max"), value(f, "replay_lag_mib_max")
    if (seconds is None or seconds <= LAG_SECONDS_LIMIT) and (mib is None or mib <= LAG_MIB_LIMIT):
        return None
    parts = [f"{seconds:.1f} s" if seconds is not None else None, f"{mib:,.1f} MiB of WAL" if mib is not None else None]
    return (f"{node.name} (standby) fell behind its primary by up to {' and '.join(p for p in parts if p)}: its "
            "sessions read older data than the primary's, and replay shared its device and CPU with them")


def node_stopped_caveat(r: Result, finding: Any) -> str:
    """The headline's caveat of a node that stopped (report/verdict_rules.py)."""
    stopped_nodes = [n for n in r.cluster.get("stopped_nodes") or [] if isinstance(n, str)]
    return f"{', '.join(stopped_nodes) or 'a node'} stopped: the totals are partial"
