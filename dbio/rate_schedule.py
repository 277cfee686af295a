"""An open loop's schedule (--rate): each session's share and the gaps between intended starts (pure).

The schedule itself runs in each engine's loop on the server (no round trip per statement); this is
its arithmetic, the one the loops follow, so that it can be checked here: the run's rate is split
equally over its parts (--part i/N) and then over each part's sessions, so that a node's share is its
sessions' (run/session_placement.py deals them by weight). Poisson arrivals (pgbench's) have
exponential gaps of mean 1/rate; a uniform schedule has equal gaps.

On a primary a node's sessions share one schedule at the sum of their shares, as pgbench's clients in one
thread do: a free session takes the next arrival k (a sequence on the server), so the node is one queue its
sessions serve (M/G/c). One schedule per session (c queues of one server each, what a read-only node, which
has no sequence, still does) answers another question: at half a session's capacity its statements wait
behind each slow one of their own session while others are idle, and its latency from the intended start is
several times the service time's where a client asking that rate of the node sees far less. Arrival k is
computed from k alone, so that every session computes the same schedule: uniform, (k + 1/2)/rate; Poisson,
blocks of BLOCK arrivals, block b spanning [b, b + 1) x BLOCK/rate with its arrivals at sorted uniform points
of it (a Poisson process given its count: the count per block is fixed, its arrivals' spacing exponential).
"""

from __future__ import annotations

import math
from typing import Iterable, Iterator

SCHEDULES = ("poisson", "uniform")
MIN_PER_SESSION = 1.0  # statements/s: below, a session's gaps outlast slices and warm-ups
# statements/s one session's loop can start: a loop's iteration costs ~10 us before its statement does anything
MAX_PER_SESSION = 100_000.0
BLOCK = 1024  # arrivals per block of a shared Poisson schedule (slice.sql draws a block's points at once)


def per_session(rate: float, sessions: int, parts: int = 1) -> float:
    """Each session's statements/s: the run's rate, an equal share per part, an equal share per session."""
    if sessions < 1 or parts < 1:
        raise ValueError("a rate needs at least one session and one part")
    return rate / parts / sessions


def problem(rate: float, sessions: int, parts: int = 1) -> str | None:
    """Why the sessions cannot be scheduled for this rate (one line), or None."""
    if not math.isfinite(rate) or rate <= 0:
        return "is not a positive number of statements per second"
    share = per_session(rate, sessions, parts)
    who = f"{sessions} session{'s' if sessions != 1 else ''}" + (f" in each of {parts} parts" if parts > 1 else "")
    if share < MIN_PER_SESSION:
        return (f"gives each of {who} {share:g} statements/s, below the {MIN_PER_SESSION:g}/s a session's "
                "schedule needs")
    if share > MAX_PER_SESSION:
        return (f"gives each of {who} {share:,.0f} statements/s, above the {MAX_PER_SESSION:,.0f}/s one session's "
                "loop can start")
    return None


def gaps(rate: float, schedule: str, uniforms: Iterable[float]) -> Iterator[float]:
    """Seconds between one intended start and the next, from uniform draws in [0, 1) (the loop's random()):
    -ln(1 - u) / rate for poisson, 1 / rate for uniform (its draws unused)."""
    for u in uniforms:
        yield 1.0 / rate if schedule == "uniform" else -math.log(1.0 - u) / rate


def first_due(start: float, rate: float, schedule: str, u: float) -> float:
    """The first intended start after the common start: a gap for poisson, a random phase for uniform."""
    return start + (u / rate if schedule == "uniform" else -math.log(1.0 - u) / rate)


def shared_arrival(start: float, rate: float, schedule: str, k: int, block_points: list[float] | None = None) -> float:
    """Arrival k (from 0) of a node's shared schedule at RATE statements/s: block_points, for poisson, are
    block k // BLOCK's BLOCK uniform draws in [0, 1) (slice.sql hashes (run, index) for them)."""
    if schedule == "uniform":
        return start + (k + 0.5) / rate
    if block_points is None or len(block_points) != BLOCK:
        raise ValueError(f"a poisson arrival needs its block's {BLOCK} points")
    block, j = divmod(k, BLOCK)
    return start + (block + sorted(block_points)[j]) * BLOCK / rate
