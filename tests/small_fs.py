"""A small real filesystem (tmpfs, mounted as root) that a test fills: dbio's writes meet a full disk."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

ROOT = os.geteuid() == 0


@contextmanager
def mounted(size: str, parent: Path | None = None, mode: str = "0755") -> Iterator[Path]:
    """A new tmpfs of `size` (e.g. "1m"), unmounted and removed at the end; skips unless root."""
    if not ROOT or not shutil.which("mount"):
        pytest.skip("mounting a small filesystem needs root")
    mount = Path(tempfile.mkdtemp(prefix="small-fs-", dir=parent))
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode={mode}", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        mount.rmdir()


def fill(path: Path, leave: int) -> None:
    """Fill the filesystem of path with the file path, then give back `leave` bytes (in whole pages)."""
    chunk = b"\0" * (1 << 20)
    with path.open("wb", buffering=0) as fh:
        try:
            while fh.write(chunk):
                pass
        except OSError:
            pass
    page = os.statvfs(path).f_frsize
    used = -(-path.stat().st_size // page)  # pages the file holds, the last one partly
    give = max(0, leave - free(path.parent)) // page
    os.truncate(path, max(0, used - give) * page)


def free(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize
