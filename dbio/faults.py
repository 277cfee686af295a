"""Named points where dbio's own fault tests stop it (inert unless DBIO_FAULT names the point).

A test sets DBIO_FAULT=<point> (and DBIO_FAULT_MARKER=<file>): when dbio reaches the point it
writes the file and waits (DBIO_FAULT_SECONDS, 30 by default) or until it is told to stop, so
the test can kill the server, fill the disk or send a signal at a known moment of real work.
DBIO_FAULT_AFTER=<n> lets the point pass n times first (e.g. stop at the second table).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_released = threading.Event()
_passed = 0
_lock = threading.Lock()


def point(name: str) -> None:
    global _passed
    if os.environ.get("DBIO_FAULT") != name:
        return
    with _lock:
        _passed += 1
        if _passed <= int(os.environ.get("DBIO_FAULT_AFTER", "0")):
            return
    marker = os.environ.get("DBIO_FAULT_MARKER")
    if marker:
        Path(marker).write_text(name)
    _released.wait(float(os.environ.get("DBIO_FAULT_SECONDS", "30")))


def release() -> None:
    """Whatever waits at a point goes on (an interrupt arrived)."""
    _released.set()
