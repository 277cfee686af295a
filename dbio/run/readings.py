"""Readings of a run's nodes, as the samples file and result hold them (pure).

A reading is {"nodes": {name: raw snapshot or None}, "os": host counters, "error": ...}. Files
written before nodes existed (format 1) hold one node's raw snapshot under "engine"; it reads
as the node named ONLY_NODE. Normalized, a reading's "engine" is the total over its nodes (the
neutral counters summed) and "nodes" each node's own neutral counters.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Callable, TypeGuard

from dbio import jsondoc, file_formats
from dbio.engines.counters import combine
from dbio.result import ONLY_NODE

if TYPE_CHECKING:
    from dbio.engines.base import Engine

Normalize = Callable[[str, dict[str, Any]], dict[str, Any]]  # (node name, raw snapshot) -> neutral counters


def normalizer(engines: dict[str, Engine]) -> Normalize:
    """Each node's raw snapshots normalized by that node's engine (once for a snapshot checked as it came:
    once_normalized)."""
    return lambda node, raw: once_normalized(engines[node])(raw)


class _Last:
    """An engine's normalize that gives back the counters it made last when asked again for the same snapshot
    (the same object, which it holds, so that no other can take its id): each reading is normalized as it is
    checked (refused), then again for the live line, the metrics and the node's loss; the counters are only
    read after."""

    def __init__(self, normalize: Callable[[dict[str, Any]], dict[str, Any]]):
        self.normalize = normalize
        self.raw: dict[str, Any] | None = None
        self.counters: dict[str, Any] = {}

    def __call__(self, raw: dict[str, Any]) -> dict[str, Any]:
        if raw is not self.raw:
            self.counters, self.raw = self.normalize(raw), raw
        return self.counters


_LAST: weakref.WeakKeyDictionary[Any, _Last] = weakref.WeakKeyDictionary()


def once_normalized(engine: Engine) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The engine's normalize, remembering its last snapshot's counters (_Last)."""
    last = _LAST.get(engine)
    if last is None:
        last = _LAST[engine] = _Last(engine.normalize)
    return last


def raw_nodes(reading: dict[str, Any] | None) -> dict[str, Any]:
    if not reading:
        return {}
    if "nodes" in reading:
        return reading["nodes"] or {}
    if "engine" in reading:
        return {ONLY_NODE: reading["engine"]}
    return {}


def refused(raw: Any, normalize: Callable[[dict[str, Any]], dict[str, Any]]) -> str | None:
    """Why a node's snapshot is no reading (pure), or None: a number in it or in its normalized counters
    that is NaN, infinite or negative (a server may answer anything), or counters its engine cannot make
    of it. Such a snapshot is refused where it is read, so that no result holds what its readers refuse."""
    try:
        jsondoc.check(raw, file_formats.READING)
        jsondoc.check(normalize(raw), file_formats.COUNTER_RECORD)
    except jsondoc.Malformed as exc:
        return str(exc)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        return f"its counters cannot be read from it ({type(exc).__name__}: {exc})"
    return None


def answered(reading: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
    """Every node of the reading gave its counters (so it is one)."""
    nodes = raw_nodes(reading)
    return bool(nodes) and all(nodes.values())


def reading_time(reading: dict[str, Any] | None) -> float | None:
    """When the reading was taken (server clock): the first node's time, the run's reference; the first node
    still read when the first was lost (a lost node's entry is its last reading, of an earlier time); the
    latest of their last readings when every node was."""
    nodes = raw_nodes(reading)
    lost = set((reading or {}).get("lost") or ())
    for name, raw in nodes.items():
        if name not in lost:
            return float(raw["t"]) if raw else None
    times = [float(raw["t"]) for raw in nodes.values() if raw]
    return max(times) if times else None


def normalized(reading: dict[str, Any], normalize: Normalize) -> dict[str, Any]:
    """The reading with every node's counters normalized and their total under "engine" (None
    unless every node answered: a total missing a node would read as a drop)."""
    nodes = {name: normalize(name, raw) if raw else None for name, raw in raw_nodes(reading).items()}
    rest = {k: v for k, v in reading.items() if k not in ("engine", "nodes")}
    answering = [counters for counters in nodes.values() if counters]
    total = combine(answering) if nodes and len(answering) == len(nodes) else None
    if total is not None and len(nodes) > 1:
        total = {**total, "t": reading_time(reading)}  # a lost first node's is of its last reading
    return {**rest, "engine": total, "nodes": nodes}
