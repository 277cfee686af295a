"""Facts about the filesystem under a path that may not exist yet (pure reads, no changes)."""

from __future__ import annotations

import os
from pathlib import Path


def existing_ancestor(path: Path) -> Path:
    """path itself when it exists, else its nearest existing parent (what a new path would be made in)."""
    current = Path(path).absolute()
    while not current.exists():
        current = current.parent
    return current


def free_bytes(path: Path) -> int:
    """Free space for unprivileged writers on the filesystem of path (or its nearest existing parent)."""
    st = os.statvfs(existing_ancestor(path))
    return st.f_bavail * st.f_frsize


def tree_bytes(path: Path) -> int:
    """Bytes in the files under path (links not followed; files that vanish meanwhile count nothing)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total
