"""Running a program under a terminal of its own, and finding processes that hold one.

dbio started from root's shell has that shell's terminal as its controlling terminal; these
helpers give the program under test a pseudo-terminal in that role (pty.fork: a new session whose
controlling terminal it is), so a test sees what a terminal would reach."""

from __future__ import annotations

import os
import pty
import select
import time
from collections.abc import Callable
from pathlib import Path

TERMINAL_PREFIXES = ("/dev/pts/", "/dev/tty", "/dev/console", "/dev/ptmx")


def run_under_terminal(argv: list[str], *, timeout: float, each_moment: Callable[[], None] | None = None,
                       env: dict | None = None) -> tuple[int, str]:
    """argv's exit status and what it wrote to its terminal; each_moment runs every few milliseconds
    while it runs (to look at the processes it starts)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once (nothing else is safe after a fork)
        try:
            os.execve(argv[0], argv, env if env is not None else dict(os.environ))
        finally:
            os._exit(127)
    output = bytearray()
    deadline = time.monotonic() + timeout
    status = None
    try:
        while status is None:
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                raise TimeoutError(f"{argv} did not end within {timeout} s: {output.decode(errors='replace')}")
            ready, _, _ = select.select([fd], [], [], 0.005)
            if ready:
                try:
                    output += os.read(fd, 65536)
                except OSError:  # EIO: the child closed the terminal
                    pass
            if each_moment is not None:
                each_moment()
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
    finally:
        os.close(fd)
    return status, output.decode(errors="replace")


def terminal_holders(uid: int) -> list[str]:
    """Each process of uid that has a controlling terminal or a terminal open, described."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        proc = Path("/proc", entry)
        try:
            if proc.stat().st_uid != uid:
                continue
            comm = (proc / "comm").read_text().strip()
            # after the command's ')': state ppid pgrp session tty_nr ...
            tty_nr = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[4])
            open_terminals = sorted({target for fd in os.listdir(proc / "fd")
                                     if (target := _link(proc / "fd" / fd)).startswith(TERMINAL_PREFIXES)})
        except (OSError, ValueError, IndexError):  # ended meanwhile
            continue
        if tty_nr or open_terminals:
            found.append(f"{comm} (pid {entry}): controlling terminal {tty_nr:#x}, open {open_terminals}")
    return found


def _link(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""
