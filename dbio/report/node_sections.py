"""The nodes of a run of several servers: one table, a row per node and the total (pure).

Like AWR's global report beside its instance reports: the total is the run's own figures; each
node's row is that node's figures (its counters, its sessions' statements). A run of one node
has no such section: its node is the run.
"""

from __future__ import annotations

from typing import Any

from dbio.report.tables import table
from dbio.stats import catalogue

COLUMNS = catalogue.figures("reads_per_s", "writes_per_s", "avg_read_us", "select_p99_us", "statements_per_s",
                            "db_cpu_us_per_read", "reads_per_host_cpu_second")


def section(doc: dict[str, Any]) -> dict[str, Any] | None:
    nodes = doc.get("nodes") or []
    if len(nodes) < 2:
        return None
    sessions: dict[str, int] = {}
    for s in doc.get("sessions") or []:
        sessions[s.get("node")] = sessions.get(s.get("node"), 0) + 1
    rows = [[n["name"], n.get("role"), sessions.get(n["name"]), *_values(n.get("figures")),
             _top_event((n.get("waits") or {}).get("counts"))] for n in nodes]
    rows.append(["total", None, len(doc.get("sessions") or []) or None, *_values(catalogue.figures_of(doc)),
                 _top_event((doc.get("waits") or {}).get("counts"))])
    notes = ["Each node's figures come from its own counters and its own sessions' statements; the total's "
             "are the run's (host CPU figures belong to the whole host, so they are in the total only)."]
    notes += [f"{n['name']}: {(n.get('server') or {}).get('description') or '-'}" for n in nodes]
    missing = [n["name"] for n in nodes if not n.get("figures")]
    if missing:
        notes.append(f"No figures for {', '.join(missing)}: which session ran where was not recorded.")
    return {"id": "nodes", "title": "Nodes",
            "tables": [table("nodes", f"{len(nodes)} nodes",
                             ["Node", "Role", "Sessions", *[c.label for c in COLUMNS], "Top event"],
                             ["text", "text", "count", *[c.kind for c in COLUMNS], "text"], rows, notes)]}


def _values(figures: dict[str, Any] | None) -> list[Any]:
    return [c.value(figures) if figures else None for c in COLUMNS]


def _top_event(counts: dict[str, int] | None) -> str | None:
    """The state the node's sessions were most often seen in, with its share of the samples."""
    if not counts:
        return None
    label, n = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
    return f"{label} {100.0 * n / sum(counts.values()):.0f}%"
