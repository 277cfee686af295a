"""Who runs a run: its id on the server, and the dbio process (host and pid) that drives it."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path


def new_run_id() -> int:
    """A run's id: random, odd (never 0, which means "none"), and small enough for a bigint."""
    return random.getrandbits(62) | 1


def client_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def client_alive(client: str) -> bool:
    """True unless the client is a dbio process of this host that no longer runs."""
    hostname, _, pid = client.rpartition(":")
    if hostname != socket.gethostname() or not pid.isdigit():
        return True  # another host's run: nothing here can tell
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"dbio" in cmdline
