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
    """Disk space the files under path take: allocated blocks, each file once however many names
    it has (a sparse file or hard links cannot make it look larger). Links are not followed."""
    total = 0
    seen: set[tuple[int, int]] = set()
    for root, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue  # gone meanwhile
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total
