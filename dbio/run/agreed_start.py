"""A start agreed in advance for a run of several nodes (pure).

A read-only node (a hot standby) cannot take the run's control row, and replaying one from its
primary would make its start depend on replication. So a run of several nodes fixes its start
before any session calls its first slice: every node's barrier opens a little before that instant
and every session waits, on its own server's clock, until it (the loop sleeps until its start).
A read-only node's sessions carry the run's control in each call instead of reading a row.
"""

from __future__ import annotations

from typing import Any

LEAD_SECONDS = 2.0  # from choosing the start to the start: every session reaches its barrier...
LEAD_PER_SESSION = 0.01  # ...which takes longer with more sessions
RELEASE_AHEAD = 1.0  # the last reading before the start, then the barriers open: all before the start
OFFSET_TRIES = 3  # round trips to a node's clock; the shortest one's middle is the estimate


def start_lead(sessions: int) -> float:
    """Seconds between choosing a start in advance and that start."""
    return LEAD_SECONDS + LEAD_PER_SESSION * sessions


def read_only_control(control: dict[str, Any], run_id: int, *, start: float, warmup: float,
                      run_time: float) -> dict[str, Any]:
    """The run's control as a read-only node's sessions pass it: no UPDATE, the agreed start and the
    end of warm-up and deadline that follow from it (epoch seconds)."""
    return {**control, "run_id": run_id, "update_pct": 0, "started_at": start, "window_open": start + warmup,
            "deadline": start + warmup + run_time if run_time > 0 else None}


def clock_offset(samples: list[tuple[float, float, float]]) -> tuple[float, float] | None:
    """A server clock's offset from this host's (server - host) and its uncertainty (half the round trip),
    from (asked, server time, answered) samples: the one with the shortest round trip (pure)."""
    if not samples:
        return None
    asked, server, answered = min(samples, key=lambda s: s[2] - s[0])
    return server - (asked + answered) / 2, (answered - asked) / 2


def node_start(start: float, clock_offset: float | None, released: float | None) -> dict[str, Any]:
    """When a node's sessions started, against the agreed start (this host's clock): at the start on the
    node's own clock (start - offset), unless its barrier opened later than that."""
    began = start - (clock_offset or 0.0)
    if released is not None:
        began = max(began, released)
    return {"clock_offset_s": clock_offset, "released_s": None if released is None else released - start,
            "start_skew_s": began - start if clock_offset is not None else None}


def skew_spread(starts: list[dict[str, Any]]) -> float | None:
    """The start skew across nodes: latest start minus earliest (None when one is unknown)."""
    skews = [s.get("start_skew_s") for s in starts]
    known = [s for s in skews if s is not None]
    if not known or len(known) < len(skews):
        return None
    return max(known) - min(known)
