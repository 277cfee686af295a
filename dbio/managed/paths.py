"""Where managed instances live when dbio runs as root, and whether it does."""

from __future__ import annotations

import os
from pathlib import Path

# Root runs the server as an unprivileged user, which cannot reach /root: use a system path.
SYSTEM_BASE = Path("/var/lib/dbio")


def running_as_root() -> bool:
    return os.geteuid() == 0
