"""Where dbio ops backup writes: checked before anything is created or changed, so that a refused
target leaves no trace (exists or can be created, empty, writable, enough free space, not inside
the data set, writable only by us or root), and the device it is on."""

from __future__ import annotations

import os
from pathlib import Path

from dbio.errors import UsageError
from dbio.filesystem import existing_ancestor, free_bytes
from dbio.trust import path_problem
from dbio.units import format_bytes


def check_shape(target: Path) -> Path:
    """What needs no server: the path itself (absolute, resolved through existing links)."""
    target = target.expanduser().absolute()
    if target.exists() and not target.is_dir():
        raise UsageError(f"--target {target} is a file", "give a directory that is empty or does not exist yet")
    if target.is_dir() and any(target.iterdir()):
        raise UsageError(f"--target {target} is not empty", "give an empty directory or one that does not exist yet")
    ancestor = existing_ancestor(target)
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise UsageError(f"--target {target} cannot be created: {ancestor} is not writable",
                         "give a directory you can write")
    problem = path_problem(ancestor)
    if problem:
        raise UsageError(f"--target {target}: {problem}, so another user could redirect what the backup writes",
                         "give a directory only you (or root) can write, all the way up")
    return target.resolve() if target.exists() else ancestor.resolve() / target.relative_to(ancestor)


def check_room(target: Path, needed: int, inside: list[str]) -> None:
    """What needs the server's answer: the data set's size, and the directories it lives in."""
    for place in inside:
        root = Path(place).resolve()
        if target == root or target.is_relative_to(root):
            raise UsageError(f"--target {target} is inside {root}, which the backup reads",
                             "give a directory outside the instance's data, WAL and tablespace directories")
    free = free_bytes(existing_ancestor(target))
    if free < needed:
        raise UsageError(f"--target {target} has {format_bytes(free)} free but the backup needs about "
                         f"{format_bytes(needed)} (the databases and their WAL)",
                         "give a directory on a filesystem with more free space")
