"""A cold backup of a stopped instance (dbio ops backup --cold): its data directory copied file by
file into the target, each file synced, so the copy is as durable as pg_basebackup's.

Root copies files the server user can change, so nothing in them is trusted: no link is followed
except the WAL's and the tablespaces' links to the places dbio's own record names, only
directories and regular files are copied, and every copy is root's with mode 0600/0700 (a setuid
program planted in the data directory never becomes root's)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterable

SKIPPED = ("postmaster.pid", "postmaster.opts")  # facts of a running server, not data


def _copy_synced(source: str, destination: Path) -> None:
    src = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        dst = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with open(src, "rb", closefd=False) as reader, open(dst, "wb", closefd=False) as writer:
                shutil.copyfileobj(reader, writer, 1 << 20)
            os.fsync(dst)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _copy_tree(source: Path, destination: Path) -> None:
    """source into destination (made 0700): links kept as links, never followed; sockets and
    pipes are no data and are left out."""
    destination.mkdir(mode=0o700)
    with os.scandir(source) as entries:
        for entry in entries:
            if entry.name in SKIPPED:
                continue
            target = destination / entry.name
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), target)
            elif entry.is_dir(follow_symlinks=False):
                _copy_tree(Path(entry.path), target)
            elif entry.is_file(follow_symlinks=False):
                _copy_synced(entry.path, target)


def copy(pgdata: Path, target: Path, places: Iterable[str] = ()) -> Path:
    """pgdata into target/pgdata (target exists empty, or not at all); returns the copy's root.
    places: the directories the instance record names (its WAL's and tablespaces'): a link of
    pg_wal or pg_tblspc to exactly one of them is copied as the directory it leads to."""
    root = target / "pgdata"
    target.mkdir(parents=True, exist_ok=True, mode=0o700)
    _copy_tree(pgdata, root)
    trusted = {str(p) for p in places}
    tablespaces = root / "pg_tblspc"
    links = [root / "pg_wal", *(tablespaces.iterdir() if tablespaces.is_dir() else ())]
    for link in links:
        if link.is_symlink() and os.readlink(link) in trusted:
            place = Path(os.readlink(link))
            link.unlink()
            _copy_tree(place, link)
    return root
