"""The embedded server's processes as /proc shows them, and waiting out a crashed server's."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

from dbio import trust
from dbio.errors import DbioError

OLD_SERVER_WAIT = 15.0  # seconds for a crashed server's processes to go before starting again


def wait_for_crashed_server(pgdata: Path, old_pid: int | None, notify: Callable[[str], None]) -> None:
    """After the postmaster was killed, its backends take a moment to notice and exit, and its
    own process stays a zombie until its parent reaps it (in containers that can be seconds,
    or never): PostgreSQL then refuses to start ("lock file postmaster.pid already exists").
    Wait for both; a lock file whose process is only a zombie is stale and is removed, never
    one of a live server."""
    if old_pid is None:
        return  # no lock file, or a damaged one PostgreSQL judges itself
    pid_file = pgdata / "postmaster.pid"
    deadline = time.monotonic() + OLD_SERVER_WAIT
    while True:
        state = process_state(old_pid)
        backends = processes_in(pgdata, exclude=old_pid)
        if not backends:
            if state is None:
                return  # PostgreSQL itself sees the lock file is stale
            if state != "Z" and is_postgres(old_pid):
                return  # a live server: starting reports it
            if state != "Z" or time.monotonic() >= deadline:  # its pid reused, or a zombie for good
                pid_file.unlink()
                notify(f"removed the stale postmaster.pid of a crashed server (its pid {old_pid} is "
                            + ("a zombie its parent has not reaped)" if state == "Z" else "now another process)"))
                return
        elif time.monotonic() >= deadline:
            raise DbioError(f"processes of an earlier server are still running in {pgdata} "
                            f"(pid {', '.join(map(str, backends))})", "stop them (kill) and start again")
        time.sleep(0.2)


def lock_file_pid(pgdata: Path) -> int | None:
    """The pid postmaster.pid names, whatever that process is now (None: no readable lock file)."""
    try:
        return int(trust.read_no_follow(pgdata / "postmaster.pid").splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None


def running_postmaster(pgdata: Path) -> int | None:
    """The running postmaster's pid (None when its lock file names no live postgres)."""
    pid = lock_file_pid(pgdata)
    return pid if pid is not None and is_postgres(pid) else None


def process_state(pid: int) -> str | None:
    """The state letter of a process (R, S, D, Z...), None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2]


def is_postgres(pid: int) -> bool:
    try:
        return b"postgres" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def processes_in(directory: Path, *, exclude: int) -> list[int]:
    """Live postgres processes whose working directory is the data directory: a server's backends
    (not, say, a shell someone opened there)."""
    found = []
    directory = directory.resolve()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == exclude:
            continue
        pid = int(entry.name)
        try:
            if Path(os.readlink(entry / "cwd")) == directory and process_state(pid) not in (None, "Z") \
                    and is_postgres(pid):
                found.append(pid)
        except OSError:
            continue  # gone, or not ours to look at
    return found
