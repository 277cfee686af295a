"""The phases of a run, in order, and the phase of an instant on its timeline (pure).

The coordinator (runner.py) goes through them one after the other and tells its listeners (listeners.py) at each
step; a run that ends early goes on from where it was to CLEAN_UP and DONE. Samples are labelled with the phase of
the second they end (phase_at): "warmup", "measured" or "drain", the words result files hold.
"""

from __future__ import annotations

import enum
import math

from dbio.run.plan import SLICE_SECONDS
from dbio.run.sessions import Clock


class Phase(enum.Enum):
    PREPARE = "prepare"  # each node's control session, loop and run row; the plans
    CONNECT = "connect"  # the barriers held, the sessions connected and waiting at them, monitoring opened
    START = "start"  # every session at its barrier, all released at one start
    WARMUP = "warm-up"  # the clock set, the sessions working, the window not yet open (no time without warm-up)
    WINDOW = "window"  # the window open, from its first reading
    DRAIN = "drain"  # the sessions' work over: their last slices end, their counters flush, the end reading
    CLEAN_UP = "clean-up"  # the window closed (or never opened): connections closed, the run's rows removed
    DONE = "done"  # the outcome made

    @property
    def order(self) -> int:
        return _ORDER[self]

    @property
    def label(self) -> str:
        """The word a sample of this phase holds in samples.jsonl and result.json ("warmup", "measured",
        "drain"; "late": the record of the slices that came back after the window's last sample)."""
        return _LABELS[self]


_ORDER = {phase: index for index, phase in enumerate(Phase)}
_LABELS = {Phase.WARMUP: "warmup", Phase.WINDOW: "measured", Phase.DRAIN: "drain", Phase.CLEAN_UP: "late"}


def phase_at(t: float, clock: Clock, stopped_at: float | None) -> Phase:
    """The phase of the instant t (server clock) on the run's timeline: before the window's opening, the warm-up;
    past the deadline, or past the end of the slice in progress when the run was stopped (stopped_at), the drain;
    else the window (the slice in progress at a stop is still measured)."""
    if clock.window_open is None or t < clock.window_open:
        return Phase.WARMUP
    if clock.deadline is not None and t > clock.deadline:
        return Phase.DRAIN
    if stopped_at is not None and clock.start is not None:
        last_boundary = clock.start + math.ceil((stopped_at - clock.start) / SLICE_SECONDS) * SLICE_SECONDS
        if t > last_boundary:
            return Phase.DRAIN
    return Phase.WINDOW
