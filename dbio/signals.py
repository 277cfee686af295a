"""The signals that stop dbio (Ctrl-C's SIGINT, SIGTERM): held back around a step that must not be cut in
half (they act as soon as it is over), or SIGTERM made to end a block as Ctrl-C does."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

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
