"""--event's fine samples: around a short event, every FINE_SECONDS, how many bytes the processes reading for the
sessions (their server processes, the server's I/O workers) had read through read calls (/proc/PID/io's rchar), so
that a dip of a second or two is seen finer than the engine's counters allow.

The engine's counters move only as the sessions' slices end (a second apiece: stats/published.py), so no sample of
them between two slice ends says more; a process's read calls are counted by the kernel as they return, so a
sample's difference from the previous one is the bytes read between the two samples' own times (the run's clock,
never the nominal step). Each sample keeps the bytes read since the one before it by the processes present in both
(a process that ended or began between them adds nothing: its count is no difference); a sample that could not be
taken on time (the loop was busy: a loaded host holds it for half a second) makes its span longer, true over its
real seconds and coarser (the figures' resolution says so), and one held up for LATE steps or more breaks the
series: the next begins a new one (a gap stays a gap). Where no process can be read (not this host's, not
readable by this user) there are none, and the figures say why. stats/disruptions.py's fine() makes them figures."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable

FINE_SECONDS = 0.25  # a sample every quarter second: a 1 s stall is 4 samples
SHORT_SECONDS = 10.0  # events lasting at most this (or as long as they take: an operation, a program) are sampled so
BEFORE_SECONDS = 10.5  # from this long before the event (the before window's 10 s, and one sample to begin from)
AFTER_SECONDS = 10.0  # to this long after its end (or the next event's start): its recovery
LATE = 8  # a sample this many steps after the previous one (2 s) breaks the series: no fine sample was taken
PROC = Path("/proc")
SOURCE = "bytes read by the sessions' server processes and I/O workers (/proc/PID/io rchar)"


def sampled(seconds: float | None) -> bool:
    """Whether an event of this planned length is given fine samples (None: as long as it takes)."""
    return seconds is None or seconds <= SHORT_SECONDS


def rchar(pids: list[int], proc: Path = PROC) -> dict[int, int]:
    """Each readable process's bytes read through read calls so far (gone or unreadable: left out)."""
    out = {}
    for pid in pids:
        try:
            text = (proc / str(pid) / "io").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("rchar:"):
                out[pid] = int(line.split()[1])
                break
    return out


class FineSamples:
    """Each sampled event's samples, [seconds into the window, bytes since the previous sample or None: the first
    of a series], taken while any event needs them."""

    def __init__(self, wanted: list[tuple[int, float]], proc: Path = PROC):
        self.wanted = dict(wanted)  # event index -> its offset into the window (AT)
        self.samples: dict[int, list[list[float | None]]] = {i: [] for i in self.wanted}
        self.ended: dict[int, float] = {}  # event index -> its end, seconds into the window, once it ended
        self.until: dict[int, float] = {}  # event index -> the next event's start (its recovery stops there)
        self.proc = proc
        self.previous: dict[int, int] | None = None
        self.previous_at: float | None = None

    def needed(self, i: int, t: float) -> bool:
        if t < self.wanted[i] - BEFORE_SECONDS:
            return False
        end = self.ended.get(i)
        return end is None or t <= min(end + AFTER_SECONDS, self.until.get(i, float("inf")))

    def take(self, t: float, pids: list[int]) -> None:
        """One sample at t (seconds into the window) of pids, kept for every event that needs it now."""
        who = [i for i in self.wanted if self.needed(i, t)]
        if not who:
            self.previous = None
            return
        now = rchar(pids, self.proc)
        if not now:
            self.previous = None  # nothing readable: no sample, and the next begins a series
            return
        late = self.previous_at is not None and t - self.previous_at > LATE * FINE_SECONDS
        since: float | None = None
        if self.previous is not None and not late:
            since = float(sum(now[p] - self.previous[p] for p in now if p in self.previous))
        for i in who:
            self.samples[i].append([round(t, 3), since])
        self.previous, self.previous_at = now, t

    def done(self, t: float) -> bool:
        """Whether no event will need a sample after t."""
        return all(i in self.ended and not self.needed(i, t) for i in self.wanted)


async def sample(fine: FineSamples, now: Callable[[], float], pids: Callable[[], list[int]],
                 stop: asyncio.Event) -> None:
    """Samples every FINE_SECONDS until every event has its own or the run's background stops."""
    while not stop.is_set():
        t = now()
        try:
            fine.take(t, pids())
        except (OSError, ValueError):  # a /proc it cannot read as expected: no more samples, the event goes on
            return
        if fine.done(t):
            return
        try:
            await asyncio.wait_for(stop.wait(), FINE_SECONDS)
        except asyncio.TimeoutError:
            pass
