"""Every program dbio starts as the server user, started one way: outside root's session.

A process of the server user's uid can ptrace any other process of that uid (whoever reaches the
database superuser runs programs as it: COPY ... TO PROGRAM). A program of that uid holding root's
terminal, as its controlling terminal or as an open descriptor, lets such a process push keystrokes
into root's shell (TIOCSTI) or write escape sequences to it. So each program runs in a session of
its own (setsid: no controlling terminal, and none can be taken from root's), reads /dev/null,
writes only to pipes dbio reads (or /dev/null) and inherits no other descriptor of dbio's. Nothing
of dbio's environment reaches it (PG* variables, a password): only ENV."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from dbio.managed.server_user import ServerUser

ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "TZ": "UTC"}


def isolation(user: ServerUser) -> dict:
    """subprocess arguments for a program of the server user: its own session, no terminal, no
    inherited descriptors, and the user's uid and only its primary group when dbio is root."""
    kwargs: dict = {"start_new_session": True, "stdin": subprocess.DEVNULL, "close_fds": True, "pass_fds": ()}
    if os.geteuid() == 0 and user.uid != 0:
        kwargs.update(user=user.uid, group=user.gid, extra_groups=[])
    return kwargs


def run(user: ServerUser, cmd: list[str], *, cwd: Path) -> subprocess.CompletedProcess:
    """The program to its end, its output captured (text)."""
    return subprocess.run(cmd, cwd=str(cwd), env=dict(ENV), capture_output=True, text=True, **isolation(user))


def spawn(user: ServerUser, cmd: list[str], *, cwd: Path) -> subprocess.Popen:
    """A long-lived program (a server) that writes to its own log: nothing of dbio's is handed to it,
    and Ctrl-C at dbio's terminal never reaches it."""
    return subprocess.Popen(cmd, cwd=str(cwd), env=dict(ENV), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, **isolation(user))
