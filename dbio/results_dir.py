"""The results directory (--results-dir): checked before anything is started or made, and each run's
own directory in it, made for that run alone however many start in the same second."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from dbio import trust
from dbio.errors import UsageError
from dbio.filesystem import existing_ancestor

ATTEMPTS = 1000  # names tried (name, name-2, name-3, ...) before giving up


def check(results_dir: Path) -> None:
    """One line (exit 2) when results_dir cannot take dbio's results: on the way to it a file, a place
    dbio cannot write, or one another user could change. Made for the commands that write results
    before they hold, start or change anything."""
    existing = existing_ancestor(results_dir)
    if not existing.is_dir():
        where = "" if existing == Path(results_dir).absolute() else f" ({existing} on the way is not one)"
        raise UsageError(f"results_dir {results_dir} is not a directory{where}",
                         "give --results-dir a directory, or a new path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"results_dir {results_dir} is not writable ({existing} cannot be written)",
                         "choose a writable --results-dir")
    problem = trust.path_problem(results_dir)
    if problem:  # such a user could plant links that dbio's result files would be written through
        raise UsageError(f"results_dir {results_dir}: {problem}, so another user could change what dbio writes "
                         "there (and dbio recovers abandoned runs it finds there)",
                         "choose a --results-dir only you (or root) can write, all the way up")


def check_new(directory: Path) -> None:
    """A run directory given by its name (a sweep's step): its parent as check says, and the name free."""
    check(directory.parent)
    if os.path.lexists(directory):
        raise UsageError(f"result directory {directory} already exists", "remove it, or give another directory")


def run_name(label: str, kind: str = "", now: datetime | None = None) -> str:
    """A run's directory name: when it started, what it is (kind: "sweep"), and its label (made safe)."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    label = "".join(c if c.isalnum() or c in "-_." else "-" for c in label)[:60]
    return "-".join(part for part in (stamp, kind, label) if part)


def claim(directory: Path, what: str, *, unique: bool = True) -> Path:
    """directory, made now for one run alone (trust.make_private_directory: exclusively, proved only
    ours). unique: when its name is taken, as by another run started in the same second with the same
    label, the first free one of name-2, name-3, ...; otherwise a name taken is refused."""
    for number in range(1, ATTEMPTS + 1):
        candidate = directory if number == 1 else directory.with_name(f"{directory.name}-{number}")
        try:
            trust.make_private_directory(candidate, what)
        except FileExistsError:
            if not unique:
                raise UsageError(f"{what} {directory} already exists", "remove it, or give another directory") \
                    from None
            continue
        return candidate
    raise UsageError(f"{directory} and {ATTEMPTS - 1} names after it are taken", "give another --label")
