"""The baseline's write side, for runs with updates: fio's 8 KiB O_DIRECT random writes to a scratch
file on the data's filesystem, and the redo log device's sync-write rate from the engine's own
test (PostgreSQL: the bundled pg_test_fsync). Scratch files are sized and removed afterwards."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dbio import trust
from dbio.collect import fio
from dbio.engines.base import Engine, ServerInfo
from dbio.errors import UsageError

SCRATCH_LIMITS = (64 << 20, 256 << 20)  # the random-write scratch file: the data set's size, within these
SCRATCH_NAME = "dbio-baseline-writes.scratch"


@dataclass(frozen=True)
class WriteSide:
    data_directory: Path  # where the random-write scratch file goes: the data's filesystem
    redo_directory: Path | None  # where the sync test's scratch file goes: the redo log's filesystem
    size: int
    redo_sync: Callable[[str, int], dict[str, Any]]


def _same_filesystem(candidate: Path, of: Path) -> Path:
    """candidate when it is on the filesystem of `of`, writable, and changeable by no one less trusted, else
    `of` itself (checked by _trusted)."""
    try:
        if os.stat(candidate).st_dev == os.stat(of).st_dev and os.access(candidate, os.W_OK | os.X_OK) \
                and trust.path_problem(candidate) is None:
            return candidate
    except OSError:
        pass
    return of


def _trusted(directory: Path) -> Path:
    """A directory the scratch files may go in: fio and pg_test_fsync (root's, run as root) open them by
    name, following a link. The server's directories are its user's, who could point them at any file."""
    problem = trust.path_problem(directory)
    if problem:
        raise UsageError(f"refusing to write the baseline's scratch files in {directory}: {problem}, who could "
                         "point them at any file this command may write",
                         "give --baseline-path DIR, a directory on the same storage only you (or root) can write")
    return directory


def plan(engine: Engine, info: ServerInfo, scratch_dir: Path | None, data_bytes: int) -> WriteSide | None:
    """Where the write side writes: --baseline-path, or beside the server's data directory and redo log
    (their parent directories, on the same filesystems); None when there is nowhere here to write.
    Refused (one line) when that directory is one another user could change, such as the server's own."""
    size = min(SCRATCH_LIMITS[1], max(SCRATCH_LIMITS[0], data_bytes))

    def sync(directory: str, seconds: int) -> dict[str, Any]:
        return engine.redo_sync_rate(info, directory, seconds)

    if scratch_dir is not None:
        return WriteSide(scratch_dir, scratch_dir, size, sync)
    if not info.caps.local or not info.caps.data_directory:
        return None
    data = Path(info.caps.data_directory)
    scratch = _trusted(_same_filesystem(data.parent, data))
    redo = Path(info.caps.redo_directory).resolve() if info.caps.redo_directory else None
    if redo is not None:  # the sync test's file beside the data's scratch file when the redo log shares its filesystem
        redo = scratch if _same_filesystem(scratch, redo) == scratch else _trusted(_same_filesystem(redo.parent, redo))
    return WriteSide(scratch, redo, size, sync)


def measure(tool: str, side: WriteSide, sessions: int, seconds: int) -> dict[str, Any]:
    """Random writes at the sessions' concurrency, then the redo sync test: the write side's record."""
    scratch = side.data_directory / SCRATCH_NAME
    try:
        writes = fio.run(tool, fio.Job("dbio-writes", (str(scratch),), sessions, seconds, size=side.size,
                                       rw="randwrite"))
    finally:
        scratch.unlink(missing_ok=True)
    redo = side.redo_sync(str(side.redo_directory), max(1, seconds // 4)) if side.redo_directory else None
    return {"writes": writes, "redo_sync": redo}


def figures(record: dict[str, Any]) -> dict[str, Any]:
    writes, redo = record.get("writes") or {}, record.get("redo_sync") or {}
    return {"writes_per_s": writes.get("writes_per_s"), "avg_write_us": writes.get("avg_write_us"),
            "wal_syncs_per_s": redo.get("syncs_per_s"), "avg_wal_sync_us": redo.get("avg_sync_us")}
