"""The managed server's process: started as the server user, found from its pid file, stopped.

The pid file lives in a directory the server user owns: it is read without following links, and
the process it names counts as the instance's only when /proc shows a mariadbd/mysqld whose
command line names this instance's data directory (a pid reused by another program, or a file
the server user rewrote, never makes dbio signal someone else's process)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from dbio import trust
from dbio.engines.mysql.instance.layout import Layout
from dbio.managed import server_process
from dbio.managed.server_user import ServerUser

SERVER_NAMES = ("mariadbd", "mysqld")


def pid_of(layout: Layout) -> int | None:
    """The running server's pid (None when the pid file names no server of this instance)."""
    try:
        pid = int(trust.read_no_follow(layout.pid_file).split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if pid > 1 and is_server_of(pid, layout) else None


def is_server_of(pid: int, layout: Layout) -> bool:
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return comm in SERVER_NAMES and state != "Z" and os.fsencode(f"--datadir={layout.datadir}") in args


def run(cmd: list[str], user: ServerUser, cwd: Path) -> subprocess.CompletedProcess:
    return server_process.run(user, cmd, cwd=cwd)


def spawn(cmd: list[str], user: ServerUser, cwd: Path) -> subprocess.Popen:
    """The server: it writes to its error log, so nothing of dbio's is handed to it."""
    return server_process.spawn(user, cmd, cwd=cwd)


def stop(pid: int, layout: Layout, timeout: float) -> bool:
    """SIGTERM (InnoDB's clean shutdown), SIGKILL if that does not end within timeout; True when it ended."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        if not is_server_of(pid, layout):
            return True
        os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            _reap(pid)
            if not is_server_of(pid, layout):
                return True
            time.sleep(0.1)
    return not is_server_of(pid, layout)


def _reap(pid: int) -> None:
    """A server this process started is its child: collect it, or it stays a zombie until dbio exits."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def log_tail(log_file: Path) -> str:
    try:
        lines = [ln for ln in trust.read_no_follow(log_file, tail=True).splitlines() if ln.strip()]
    except OSError:
        return ""
    errors = [ln for ln in lines[-30:] if "[ERROR]" in ln]
    return (errors or lines[-1:] or [""])[-1].strip()
