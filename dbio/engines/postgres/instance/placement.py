"""Directories of the embedded instance outside its data directory: the WAL's (wal_dir) and the
tablespaces' (data_dirs), each on the device the user chose.

In each chosen directory dbio makes one subdirectory of its own, owned by the server user (the
chosen directory stays the user's, as the data directory stays dbio's): initdb --waldir or
CREATE TABLESPACE gets that subdirectory, and destroy removes it, and the chosen directory too
when dbio made it and it is left empty. Everything is checked before anything is made."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from dbio import trust
from dbio.collect.host import storage_of
from dbio.errors import UsageError
from dbio.filesystem import existing_ancestor, free_bytes
from dbio.engines.postgres.instance.location import inside_other_instance
from dbio.managed.location import UNSAFE_PATH_CHARACTERS
from dbio.engines.postgres.instance.paths import running_as_root
from dbio.managed.server_user import SERVER_USER, ServerUser, first_blocked_dir, lookup

WAL_SUBDIR = "dbio-wal"
TABLESPACE_SUBDIR = "dbio-tablespace"


@dataclass(frozen=True)
class Place:
    """One directory dbio made outside the data directory (as the instance record keeps it)."""

    path: str  # the subdirectory the server writes in
    made_parent: bool  # dbio also made the directory the user named

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "made_parent": self.made_parent}


def check(chosen: Path, *, data_dir: Path, option: str, subdir: str, needed_bytes: int) -> None:
    """Refuses a directory the server could not use, before anything is made: a file, one inside
    the data directory or another PostgreSQL data directory, one already holding dbio's
    subdirectory, one nobody trusted could be sure of, one the server user cannot reach, or one
    without room."""
    where = f"{option} = {chosen}"
    if chosen.exists() and not chosen.is_dir():
        raise UsageError(f"{where} is a file, not a directory", "choose a directory path")
    bad = sorted({ch for ch in str(chosen) if ch in UNSAFE_PATH_CHARACTERS or ord(ch) < 32})
    if bad:
        raise UsageError(f"{where} contains {' '.join(repr(ch) for ch in bad)}, which the server's settings cannot "
                         "take", "choose a path without quotes, backslashes, commas or control characters")
    real, data = chosen.resolve(), data_dir.resolve()
    if real == data or real.is_relative_to(data):
        raise UsageError(f"{where} is inside the instance's data directory {data_dir}",
                         f"choose a directory outside {data_dir}, on the device it should measure")
    if inside_other_instance(chosen):
        raise UsageError(f"{where} is inside a PostgreSQL data directory",
                         "choose a directory outside any data directory")
    if (chosen / subdir).exists():
        raise UsageError(f"{where} already holds {subdir} (another dbio instance's, or one left behind)",
                         f"choose another directory, or remove {chosen / subdir} after checking what it is")
    parent = existing_ancestor(chosen)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{where}: {parent} is not writable, so dbio cannot make {subdir} in it",
                         f"choose a directory you can write, or fix the permissions of {parent}")
    problem = trust.path_problem(chosen)
    if problem:
        raise UsageError(f"{where}: {problem}, who could then swap what the server writes",
                         "choose a directory whose every parent is owned by root or by you and writable by no one else")
    _check_reachable(chosen, where)
    free = free_bytes(chosen)
    if free < needed_bytes:
        raise UsageError(f"{where} has {free >> 20} MiB free, but needs at least {needed_bytes >> 20} MiB",
                         "choose a filesystem with more free space")


def _check_reachable(chosen: Path, where: str) -> None:
    if not running_as_root():
        return  # the server runs as the user running dbio, who can write there (checked above)
    user = lookup(SERVER_USER)
    if user is None:
        return  # made with the instance; the chosen directory's way is checked again when placing
    blocked = first_blocked_dir(chosen, user)
    if blocked is not None:
        raise UsageError(f"{where} is unreachable for the server user '{SERVER_USER}': {blocked} is not searchable",
                         f"choose a directory under a searchable path, or chmod o+x {blocked}")


def prove_made(chosen: Path) -> None:
    """After mkdir: the chosen directory is a real directory that only trusted users can change.
    Under /tmp another user may have made it, or put a link there, since it was checked; root would
    then chown and chmod through their links."""
    st = os.lstat(chosen)
    problem = trust.path_problem(chosen)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        problem = problem or "it is now a link or a file"
    elif st.st_uid not in trust.trusted_uids():
        problem = problem or trust.entry_problem(st, trust.trusted_uids())
    if problem:
        raise UsageError(f"{chosen} changed while dbio was making it ({problem}); nothing was put in it",
                         "choose a directory that only you (or root) can create and change")


def make(chosen: Path, subdir: str, user: ServerUser) -> Place:
    """The server's own subdirectory in the chosen directory (which is made if missing)."""
    made_parent = not chosen.exists()
    chosen.mkdir(parents=True, exist_ok=True)
    prove_made(chosen)
    target = chosen / subdir
    try:
        target.mkdir(mode=0o700)  # fails if something appeared there since the check
        os.chown(target, user.uid, user.gid)
        os.chmod(target, 0o700)
    except BaseException:
        if made_parent:
            shutil.rmtree(chosen, ignore_errors=True)
        raise
    return Place(str(target), made_parent)


def remove(place: dict[str, object]) -> None:
    """Undo make: the server's subdirectory, and the chosen directory if dbio made it and it is empty."""
    target = Path(str(place["path"]))
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    if place.get("made_parent"):
        try:
            target.parent.rmdir()
        except OSError:
            pass  # something else is in it now: it stays


def device_of(path: Path) -> str:
    """'vdb (ext4 on /dev/vdb at /mnt)': where a directory's writes go, for messages."""
    info = storage_of(existing_ancestor(path))
    name = info.get("device") or info.get("source") or "?"
    return f"{name} ({info.get('fs_type') or '?'} on {info.get('source') or '?'} at {info.get('mount_point') or '?'})"


def same_device(a: Path, b: Path) -> bool:
    return os.stat(existing_ancestor(a)).st_dev == os.stat(existing_ancestor(b)).st_dev
