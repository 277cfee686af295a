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
    """Block SIGINT and SIGTERM for the block (the main thread's; other threads never receive them).
    Programs started inside inherit the mask, so a Ctrl-C sent to the whole group waits for them too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


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
