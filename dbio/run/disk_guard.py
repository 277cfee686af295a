"""Room left where the servers write (pure decision, one statvfs per check): an update run is stopped before
its WAL or data fills a filesystem of this host. A server's max_wal_size is a soft limit, and a heavy update
load on a starved host outruns its checkpoints (seen: 2 sessions on a 320 MiB filesystem, HEAVY redo, the host
at 99% CPU: PostgreSQL wrote past twice its max_wal_size and stopped with "No space left on device").

A listener of the run (DiskGuard), and a vital one: from the start on, a check every INTERVAL seconds; a guard
that fails would let the servers fill the disk, so its failure fails the run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Iterable

from dbio.filesystem import free_bytes
from dbio.run.listeners import Listener, RunView
from dbio.run.phase import Phase

FLOOR = 32 << 20  # bytes kept free besides a server's growth steps: its shutdown checkpoint, its logs, dbio's result
SPAN = 1.0  # seconds over which the rate of use is taken (WAL comes in bursts: a new 16 MB segment at once)
HORIZON = 0.5  # seconds of that rate kept free besides: stopping the sessions takes a moment
INTERVAL = 0.1  # seconds between checks (a statvfs each)
START_MARGIN = FLOOR  # an update run does not start with less than this above its floor: it would be stopped at once
FIRST_SPAN = 0.25  # the least span a rate is taken over before SPAN seconds have passed (one burst is not a rate)


def floor_of(growth_step: int) -> int:
    """The free bytes a run keeps where its servers write: FLOOR besides twice the most a server adds to a file
    at once. One growth comes between two checks, seen only once made; another may be under way in a statement
    the guard's cancel has not ended yet (seen on a managed MariaDB on a tmpfs, 8 sessions updating: ibdata1
    grew by its 64 MiB autoextend increment, the guard stopped the run with 65 MiB left and cancelled its
    statements at once, and ibdata1 grew 64 MiB again, leaving 1 MiB)."""
    return FLOOR + 2 * max(0, growth_step)


def rate(history: list[tuple[float, int]]) -> float:
    """Bytes a second used over the last SPAN seconds of (time, free) readings (pure); 0 when room grew."""
    t_now, now = history[-1]
    earlier = [(t, free) for t, free in history if t_now - t >= SPAN]
    # in the first SPAN seconds the rate is what was used since the first reading, over at least FIRST_SPAN:
    # a fast filesystem fills in less than a second (seen: a managed MariaDB used 44 MiB of a tmpfs in 0.3 s)
    t_then, then = earlier[-1] if earlier else history[0]
    return max(0.0, (then - now) / max(t_now - t_then, FIRST_SPAN)) if t_now > t_then else 0.0


def runs_out(history: list[tuple[float, int]], floor: int = FLOOR) -> bool:
    """Whether the free bytes of the last (time, free) reading leave less than the floor once HORIZON
    seconds more are used at the rate of the last SPAN seconds (pure)."""
    return history[-1][1] - rate(history) * HORIZON < floor


def tightest(paths: Iterable[str]) -> tuple[int, str] | None:
    """(free bytes, path) of the path whose filesystem has the least room; None when none can be read."""
    free = []
    for path in paths:
        try:
            free.append((free_bytes(Path(path)), path))
        except OSError:
            continue
    return min(free) if free else None


def too_little_to_start(paths: Iterable[str], floor: int = FLOOR) -> str | None:
    """Why an update run should not start (its first writes would reach the floor), or None (none to watch)."""
    paths = list(paths)
    found = tightest(paths) if paths else None
    needed = floor + START_MARGIN
    if found is None or found[0] >= needed:
        return None
    return f"{found[0] >> 20} MiB free where {found[1]} is, under the {needed >> 20} MiB it starts with"


class DiskGuard(Listener):
    """Stops the run, cancelling the slices at once, before the servers' writes fill a filesystem of paths."""

    title = "the disk guard"
    vital = True

    def __init__(self, paths: tuple[str, ...], floor: int = FLOOR):
        self.paths, self.floor = paths, floor  # floor: bytes kept free there (floor_of the servers' growth step)

    def phase(self, phase: Phase, run: RunView) -> None:
        if phase is Phase.WARMUP:
            run.spawn(self, self._guard(run))

    async def _guard(self, run: RunView) -> None:
        history: list[tuple[float, int]] = []
        while not run.background_stop.is_set():
            found = tightest(self.paths)
            if found is not None:
                free, where = found
                history = [*history[-(int(2 * SPAN / INTERVAL)):], (run.time.monotonic(), free)]
                if runs_out(history, self.floor):
                    # why now, with room still left: a server's growth step seen as a rate stops a run early
                    message = (f"stopped before the disk filled: {free >> 20} MiB left on the filesystem of {where}, "
                               f"where the server writes ({self.floor >> 20} MiB are kept free there, and "
                               f"it was using {rate(history) / (1 << 20):,.0f} MiB/s)")
                    # at once: no slice may finish, it could write the last megabytes; and the drain comes to it only
                    # at its next check, in the warm-up only once the sessions have ended their slices (seen: 1.0-1.1 s
                    # after the stop, time enough for InnoDB to grow ibdata1 by 64 MiB twice more)
                    await run.stop_run("disk_full", message, at_once=True)
                    return
            try:
                await asyncio.wait_for(run.background_stop.wait(), INTERVAL)
            except asyncio.TimeoutError:
                pass
