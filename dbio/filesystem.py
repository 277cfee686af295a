"""Facts about the filesystem under a path that may not exist yet, and writing a file whole."""

from __future__ import annotations

import contextlib
import os
import secrets
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


def write_whole(path: Path, data: str | bytes, mode: int = 0o666) -> None:
    """path holds data whole, or stays as it was: a full disk or a crash never leaves it cut short.

    The data goes to a new file beside it (made exclusively, never through a link), is synced, and
    the new file is renamed over path; on any failure the new file is removed, giving its room back."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself survives a crash once the directory is synced
        directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
