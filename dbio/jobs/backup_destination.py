"""Where dbio ops backup writes (its destination, given as --target): checked before anything is
created or changed, so that a refused destination leaves no trace (exists or can be created, empty,
writable, enough free space, not inside the data set, writable only by us or root), and the device
it is on."""

from __future__ import annotations

import os
from pathlib import Path

from dbio.errors import UsageError
from dbio.filesystem import existing_ancestor, free_bytes
from dbio.trust import path_problem
from dbio.units import format_bytes


def check_shape(destination: Path) -> Path:
    """What needs no server: the path itself (absolute, resolved through existing links)."""
    destination = destination.expanduser().absolute()
    if destination.exists() and not destination.is_dir():
        raise UsageError(f"--target {destination} is a file", "give a directory that is empty or does not exist yet")
    if destination.is_dir() and any(destination.iterdir()):
        raise UsageError(f"--target {destination} is not empty",
                         "give an empty directory or one that does not exist yet")
    ancestor = existing_ancestor(destination)
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise UsageError(f"--target {destination} cannot be created: {ancestor} is not writable",
                         "give a directory you can write")
    problem = path_problem(ancestor)
    if problem:
        raise UsageError(f"--target {destination}: {problem}, so another user could redirect what the backup writes",
                         "give a directory only you (or root) can write, all the way up")
    return destination.resolve() if destination.exists() else ancestor.resolve() / destination.relative_to(ancestor)


def check_room(destination: Path, needed: int, inside: list[str]) -> None:
    """What needs the server's answer: the data set's size, and the directories it lives in."""
    for place in inside:
        root = Path(place).resolve()
        if destination == root or destination.is_relative_to(root):
            raise UsageError(f"--target {destination} is inside {root}, which the backup reads",
                             "give a directory outside the instance's data, WAL and tablespace directories")
    free = free_bytes(existing_ancestor(destination))
    if free < needed:
        raise UsageError(f"--target {destination} has {format_bytes(free)} free but the backup needs about "
                         f"{format_bytes(needed)} (the databases and their WAL)",
                         "give a directory on a filesystem with more free space")
