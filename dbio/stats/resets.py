"""Counters that went backwards inside a window (pure): a statistics reset (pg_stat_reset(),
pg_stat_reset_shared(), FLUSH STATUS) or a server restart between two readings.

A cumulative counter never decreases. One that did counts from another origin since: the difference
of the window's two ends is then wrong (below the begin: negative; counted past it again: too small),
and so is every figure built on it. The window's readings are watched in order, each node's own
(another node's growth would hide the drop in their total); a counter seen going back is named, and
the figures built on it are made absent (`without`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

NOT_COUNTERS = ("t", "gauges")  # a record's clock and its point-in-time values, never differenced
# The run's own connections' I/O, summed over those alive: it drops when one of them ends, with no reset of
# the server's statistics. No figure is built on such a drop, but it does not make the run invalid.
OWN_CONNECTIONS = "sessions"


def went_back(before: Any, after: Any, path: str = "") -> Iterator[tuple[str, float, float]]:
    """(dotted path, before, after) of each counter lower in after than in before."""
    if isinstance(after, dict) and isinstance(before, dict):
        for key, value in after.items():
            if path or key not in NOT_COUNTERS:
                yield from went_back(before.get(key), value, f"{path}.{key}" if path else str(key))
    elif _number(before) and _number(after) and after < before:
        yield path, float(before), float(after)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class Watch:
    """Each node's counters over a window, reading after reading: the first time each counter of each
    node went back. see() takes readings as run/readings.normalized makes them."""

    window_start: float | None = None
    last: dict[str, dict[str, Any]] = field(default_factory=dict)
    found: list[dict[str, Any]] = field(default_factory=list)  # the server's counters that went back
    ended: set[tuple[str, str]] = field(default_factory=set)  # (node, counter) of its own connections' that dropped

    def see(self, reading: dict[str, Any] | None) -> list[str]:
        """The counters that went back since the previous reading (any node's), as dotted paths."""
        back: list[str] = []
        for node, counters in ((reading or {}).get("nodes") or {}).items():
            if not isinstance(counters, dict):
                continue  # this node gave nothing this time: compared with its next reading
            previous = self.last.get(node)
            self.last[node] = counters
            if previous is None:
                continue
            for path, before, after in went_back(previous, counters):
                back.append(path)
                if path.split(".")[0] == OWN_CONNECTIONS:
                    self.ended.add((node, path))
                elif not any(r["node"] == node and r["counter"] == path for r in self.found):
                    t = counters.get("t")
                    since = round(t - self.window_start, 3) if self.window_start is not None and _number(t) and \
                        isinstance(t, (int, float)) else None
                    self.found.append({"node": node, "counter": path, "since_start": since,
                                       "before": before, "after": after})
        return sorted(set(back))

    def counters(self, node: str | None = None) -> list[str]:
        """The counters that went back, on which no figure is built: one node's, or any node's (for the nodes'
        total)."""
        return sorted({r["counter"] for r in self.found if node is None or r["node"] == node}
                      | {path for where, path in self.ended if node is None or where == node})


def without(values: Any, paths: list[str]) -> Any:
    """A copy of nested values with each dotted path absent (None): a difference with its reset
    counters taken out, so that no figure is built on them."""
    if not paths or not isinstance(values, dict):
        return values
    out = dict(values)
    heads: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        heads.setdefault(head, []).append(rest)
    for head, rests in heads.items():
        if head not in out:
            continue
        out[head] = None if "" in rests else without(out[head], rests)
    return out
