"""The run's time: where the run pipeline reads the time and waits, declared once and passed down (RunContext.time).

`REAL_TIME` is the machine's clocks, the default and what every real engine runs on. It also runs the run's event
loop (`run`), so that every asyncio timer of a run (asyncio.sleep, wait_for's and asyncio.wait's timeouts) is in
the same time as its readings. The tests give the fake engine's runs another TimeSource (tests/virtual_time.py:
seconds that pass only when nothing else can happen), so that the pipeline's tests do not run in wall time.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Coroutine, Protocol, TypeVar

T = TypeVar("T")


class TimeSource(Protocol):
    def wall(self) -> float:
        """Epoch seconds (time.time)."""
        ...

    def monotonic(self) -> float:
        """Seconds for intervals and deadlines (time.monotonic), the run's event loop's time."""
        ...

    def sleep_blocking(self, seconds: float) -> None:
        """A wait in a thread (a step polling a server), never on the event loop."""
        ...

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """main on an event loop of this time (asyncio.run)."""
        ...


class RealTime:
    """The machine's clocks: time.time, time.monotonic (the default event loop's time), time.sleep."""

    def wall(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep_blocking(self, seconds: float) -> None:
        time.sleep(seconds)

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        return asyncio.run(main)


REAL_TIME = RealTime()
