"""Which nodes of a merge's inputs read one server, and which hold one reading twice (pure).

The evidence is in the readings, not in the fields a user can edit (run id, part, server identity). Two
servers' cumulative counters agree only on a few small ones (a checkpoint count, an idle process's reads):
0 to 38% of them between the recorded results of two instances. The readings of one server at close instants
agree on most (the parts of one run: 78% to all of them at each end, over four rounds of
tests/fixtures/record_parts.py), a copy on every one but those an edit changed. So readings that agree on all
but MOST_DIFFERING counters, and on one of the BANDS whole, are one server's. On one server, readings at the
same instants (its clock, to the microsecond) are one reading found twice, and so are the same sessions: two
sessions at once on one server never share a process id.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, TypeGuard

MOST_DIFFERING = 3  # counters two readings of one server may hold apart (edited); more, and they are two servers'
LEAST_COUNTERS = 8  # readings holding fewer non-zero counters than this tell nothing
NOT_CUMULATIVE = ("t", "sessions", "gauges")  # its instant, the run's own sessions' counts, point-in-time values
# Every engine's groups of I/O and log counters (engines/counters.REQUIRED), each taken whole: readings of one
# server share one (MOST_DIFFERING edits leave two of five as they were), so only the nodes whose readings
# share one need be compared counter by counter (a merge of 1,000 parts compares a few pairs, not 500,000).
BANDS = ("data", "client", "client_normal", "db", "wal")
ENDS = ("begin", "end")


@dataclass(frozen=True)
class Readings:
    """A node's readings as evidence: the server identity it names, its readings' instants (begin, end), the
    readings themselves (begin, end) and their bands whole, and its sessions' process ids."""

    name: str
    identity: str | None
    instants: tuple[float, float] | None
    readings: tuple[dict[str, Any], dict[str, Any]]
    bands: tuple[tuple[Any, ...], ...]
    pids: frozenset[int]

    @classmethod
    def of(cls, node: dict[str, Any], identity: str | None, pids: frozenset[int]) -> Readings:
        normalized = node.get("normalized") or {}
        readings = [normalized.get(w) or {} for w in ENDS]
        begun, ended = (r.get("t") for r in readings)
        instants = (float(begun), float(ended)) if _number(begun) and _number(ended) else None
        bands = tuple((end, band, content) for end, reading in zip(ENDS, readings) for band in BANDS
                      if (content := _band(reading.get(band))))
        return cls(str(node.get("name")), identity, instants, (readings[0], readings[1]), bands, pids)


def candidates(found: list[Readings]) -> list[tuple[int, int]]:
    """The pairs (indices, in order) that may hold one reading twice or one server under two identities: those
    whose readings share their instants or their sessions' process ids, and those naming different identities
    (or none) whose readings share a band whole at one end. No other pair is either."""
    pairs: set[tuple[int, int]] = set()
    for members in _buckets(found, lambda r: [("instants", r.instants)] if r.instants else []).values():
        pairs.update(itertools.combinations(members, 2))
    for members in _buckets(found, lambda r: [("pids", r.pids)] if r.pids else []).values():
        pairs.update(itertools.combinations(members, 2))
    for members in _buckets(found, lambda r: list(r.bands)).values():
        # one identity's nodes share bands when the server's counters stood still between their readings (the
        # parts of one run, often): only pairs of different identities, or of none, are asked of them
        groups: dict[Any, list[int]] = {}
        for i in members:
            groups.setdefault(found[i].identity if found[i].identity is not None else ("none", i), []).append(i)
        for one, other in itertools.combinations(groups.values(), 2):
            pairs.update((min(i, j), max(i, j)) for i, j in itertools.product(one, other))
    return sorted(pairs)


def _buckets(found: list[Readings], keys: Callable[[Readings], list[Any]]) -> dict[Any, list[int]]:
    out: dict[Any, list[int]] = {}
    for i, r in enumerate(found):
        for key in keys(r):
            out.setdefault(key, []).append(i)
    return out


def alike_at(a: Readings, b: Readings) -> list[str]:
    """The ends of the window (begin, end) at which two nodes' counters are one server's."""
    shared = {band[0] for band in set(a.bands) & set(b.bands)}
    return [end for end, x, y in zip(ENDS, a.readings, b.readings)
            if end in shared and _alike(server_counters(x), server_counters(y))]


def same_instants(a: Readings, b: Readings) -> bool:
    return a.instants is not None and a.instants == b.instants


def same_sessions(a: Readings, b: Readings) -> bool:
    return bool(a.pids) and a.pids == b.pids


def server_counters(reading: dict[str, Any]) -> dict[str, float]:
    """A reading's cumulative counters, each by its path (data.reads, by_backend.checkpointer.writes, ...)."""
    out: dict[str, float] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif _number(value):
            out[prefix] = float(value)

    walk("", {k: v for k, v in reading.items() if k not in NOT_CUMULATIVE})
    return out


def counters_agreeing(a: dict[str, Any], b: dict[str, Any]) -> tuple[int, int]:
    """Of the counters two readings both hold, not zero in both: how many hold one value, and how many there are."""
    return _agreeing(server_counters(a), server_counters(b))


def _agreeing(x: dict[str, float], y: dict[str, float]) -> tuple[int, int]:
    held = [k for k in x.keys() & y.keys() if x[k] or y[k]]
    return sum(x[k] == y[k] for k in held), len(held)


def _alike(x: dict[str, float], y: dict[str, float]) -> bool:
    same, held = _agreeing(x, y)
    return held >= LEAST_COUNTERS and held - same <= MOST_DIFFERING


def _band(group: Any) -> tuple[tuple[str, float], ...]:
    """A group's non-zero counters, as one value (empty: nothing there to tell servers apart)."""
    if not isinstance(group, dict):
        return ()
    return tuple(sorted((str(k), float(v)) for k, v in group.items() if _number(v) and v))


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
