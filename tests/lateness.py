"""How late this host runs what it was told to run at an instant, measured while the code under test runs:
for timing bounds that hold on a loaded machine without loosening them on a quiet one.

A bound such as "released less than 0.2 s after the agreed start" is dbio's accuracy on a host that
runs it when asked; on a shared 2-core host a waiting thread may be woken tens or hundreds of
milliseconds late, and dbio's own timers with it. Lateness naps in a thread of its own beside the
run and keeps its worst overshoot, so a test allows for what the host just did and no more.
"""

from __future__ import annotations

import threading
import time

NAP = 0.01  # seconds between two wakes: short next to the bounds it widens (tenths of a second)


class Lateness:
    """with Lateness() as late: ... then late.worst: the largest delay (seconds) past a wake it asked for,
    about a millisecond on a quiet host."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            due = time.monotonic() + NAP
            time.sleep(NAP)
            self.worst = max(self.worst, time.monotonic() - due)

    def __enter__(self) -> "Lateness":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def allow(self, bound: float, times: float = 2.0) -> float:
        """bound, widened by `times` the worst lateness seen (a timer set, then the work it starts, each late)."""
        return bound + times * self.worst
