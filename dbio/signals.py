"""Holding back the signals that stop dbio (Ctrl-C's SIGINT, SIGTERM) around a step that must not be cut
in half: they are delivered, and act, as soon as the step is over."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

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
