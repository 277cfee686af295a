"""A cold backup of a stopped instance (dbio ops backup --cold): its data directory copied file by
file into the target, following the links to its WAL directory and tablespaces, each file synced,
so the copy is as durable as pg_basebackup's."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SKIPPED = ("postmaster.pid", "postmaster.opts")  # facts of a running server, not data


def _copy_synced(source: str, destination: str) -> str:
    shutil.copy2(source, destination)
    fd = os.open(destination, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return destination


def copy(pgdata: Path, target: Path) -> Path:
    """pgdata into target/pgdata (target exists empty, or not at all); returns the copy's root."""
    root = target / "pgdata"
    target.mkdir(parents=True, exist_ok=True, mode=0o700)
    shutil.copytree(pgdata, root, symlinks=False, ignore=shutil.ignore_patterns(*SKIPPED),
                    copy_function=_copy_synced)
    return root
