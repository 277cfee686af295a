"""The signals that stop dbio (Ctrl-C's SIGINT, SIGTERM): held back around a step that must not be cut in
half (they act as soon as it is over), SIGTERM made to end a block as Ctrl-C does, routed to a run's own
handling and back, or noted and never raised while a run's measured window is turned into its result."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

STOPPING = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the block; they act as soon as it is over. Blocked in the main thread
    (programs started inside inherit the mask, so a Ctrl-C sent to the whole group waits for them too), and
    deferred by handlers of the block's own: a signal sent to the process reaches any thread that does not
    block it (an executor's), and Python then runs its handler in the main thread at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: came.append(signum)) for signum in STOPPING}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # what waited in the mask comes to the handlers above
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for number in dict.fromkeys(came):  # each once, in the order they came, as the handlers before say
            signal.raise_signal(number)


@contextmanager
def sigterm_as_interrupt() -> Iterator[list[str]]:
    """SIGTERM raises KeyboardInterrupt inside the block, as Ctrl-C does, so one path ends both; the list
    yielded holds "SIGTERM" once it came, to tell the two apart. The main thread's only (signals reach
    no other); elsewhere the block runs unchanged."""
    seen: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def interrupt(signum: int, frame: Any) -> None:
        seen.append("SIGTERM")
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def routed(to: Callable[[int], None]) -> Iterator[None]:
    """SIGINT and SIGTERM go to `to` (with the signal's number, in the main thread) for the block, then back to
    the handlers before it. Each swap is one step, so no signal meanwhile finds Python's default (a
    KeyboardInterrupt) or the system's (SIGTERM ends the process), as an event loop's own handlers leave them
    when removed (asyncio restores those defaults, not what was there). The main thread's only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, lambda signum, frame: to(signum)) for signum in STOPPING}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


POLL_SECONDS = 0.05  # how often a wait that a signal ends looks for one


class Received:
    """The SIGINT and SIGTERM that came inside `received()`'s block, in order. Until `shield()` each acts as
    Ctrl-C does (KeyboardInterrupt, SIGTERM too: `first` tells them apart); after it none is raised: each is
    only noted, with the step it came in, and the steps that wait look for it (`wait`, `first`) and cut
    themselves short. The handler takes no lock: what waits for it polls."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.first_at: float | None = None  # monotonic time of the first
        self.during: str | None = None  # the step the first came in
        self.shielded = False
        self._step: str | None = None

    @property
    def first(self) -> str | None:
        return self.names[0] if self.names else None

    def shield(self) -> None:
        """From now on no signal is raised in the block: each is noted."""
        self.shielded = True

    def step(self, name: str) -> None:
        """The step the block is at, for the record of the first signal."""
        self._step = name

    def note(self, name: str, during: str | None = None) -> None:
        """A signal that came (also one that another handler took first, as a run's own do)."""
        if not self.names:
            self.first_at, self.during = time.monotonic(), during or self._step
        self.names.append(name)

    def wait(self, seconds: float) -> None:
        """Sleep up to seconds, or until one more signal comes."""
        seen, until = len(self.names), time.monotonic() + seconds
        while len(self.names) == seen and (left := until - time.monotonic()) > 0:
            time.sleep(min(POLL_SECONDS, left))

    def record(self) -> dict[str, Any] | None:
        """What a result keeps of them: the first's name, how many came, and the step the first came in."""
        return None if not self.names else {"name": self.names[0], "count": len(self.names), "during": self.during}

    def _handle(self, signum: int, frame: Any) -> None:
        self.note(signal.Signals(signum).name)
        if not self.shielded:
            raise KeyboardInterrupt


@contextmanager
def received() -> Iterator[Received]:
    """SIGINT and SIGTERM noted for the block (see Received); the handlers before it come back after it. The main
    thread's only: elsewhere no signal reaches the block, and it runs unchanged."""
    came = Received()
    if threading.current_thread() is not threading.main_thread():
        yield came
        return
    previous = {signum: signal.signal(signum, came._handle) for signum in STOPPING}
    try:
        yield came
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
