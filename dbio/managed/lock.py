"""One dbio command at a time changes or measures an instance.

Two runs on one instance would count each other's I/O; a second command could restart the
server under a run, or destroy it. Every command that changes or measures an embedded instance
holds an exclusive lock on it for its whole duration; a second one is refused at once with what
holds it. The lock is an flock on a file keyed by the instance's path, in a directory only the
user running dbio (root: root) can write, so it exists before the instance does (init) and the
kernel releases it whatever way the holder ends. The holder removes the file before it lets go, so
files do not pile up; a command that opened the file just before its removal finds, once it holds
the lock, that the path no longer leads to what it locked, and opens the path again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import platformdirs

from dbio import jsondoc, trust
from dbio.errors import UsageError
from dbio.managed.paths import SYSTEM_BASE, running_as_root

_held: dict[Path, int] = {}  # lock files this process holds, and how many holders nest in it


def lock_dir() -> Path:
    if running_as_root():
        return SYSTEM_BASE / "locks"
    return platformdirs.user_state_path("dbio") / "locks"


def lock_file_for(data_dir: Path) -> Path:
    key = hashlib.sha256(os.fsencode(os.path.realpath(data_dir))).hexdigest()[:20]
    return lock_dir() / f"instance-{key}.lock"


def describe_holder(text: str) -> str:
    """The holder's own note (pure): command, pid and since when."""
    try:
        info = jsondoc.loads(text)
        since = datetime.fromtimestamp(float(info["since"]), timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"dbio {info['command']} (pid {int(info['pid'])}, since {since})"
    except (ValueError, KeyError, TypeError, OverflowError):
        return "another dbio command"


@contextmanager
def exclusive(data_dir: Path, command: str, *, shared: bool = False) -> Iterator[None]:
    """Hold the instance for this command; nested holders in the same process share the lock.
    shared: held with other shared holders (the parts of one run, reaching it through --dsn), never
    with an exclusive one."""
    path = lock_file_for(data_dir)
    if shared and path not in _held:
        yield from _shared(path, data_dir, command)
        return
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    fd = _open_and_lock(path, data_dir)
    try:
        note = json.dumps({"command": command, "pid": os.getpid(), "since": time.time(), "data_dir": str(data_dir)})
        os.ftruncate(fd, 0)  # a killed holder's note may still be there
        os.pwrite(fd, note.encode(), 0)
        _held[path] = 1
        try:
            yield
        finally:
            del _held[path]
            _remove(path)
    finally:
        os.close(fd)  # releases the lock


def _shared(path: Path, data_dir: Path, command: str) -> Iterator[None]:
    fd = _open_and_lock(path, data_dir, mode=fcntl.LOCK_SH)
    try:
        if os.fstat(fd).st_size == 0:  # the first sharer's note names the holders to an exclusive command
            note = json.dumps({"command": f"{command} (in parts)", "pid": os.getpid(), "since": time.time(),
                               "data_dir": str(data_dir)})
            os.pwrite(fd, note.encode(), 0)
        yield
    finally:
        try:  # the last sharer removes the file, as an exclusive holder does; the others leave it
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _remove(path)
        except BlockingIOError:
            pass
        os.close(fd)


def _open_and_lock(path: Path, data_dir: Path, attempts: int = 20, mode: int = fcntl.LOCK_EX) -> int:
    """A descriptor of the lock file at path, locked: refused at once when another command holds it."""
    for _ in range(attempts):
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # a lock file another user could plant or replace would let them hold root's instance
            trust.require_trusted(path.parent, "the lock directory", "remove it, and dbio makes it again")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise UsageError(f"cannot create dbio's lock file {path}: {exc.strerror}",
                             "run dbio with a HOME (or XDG_STATE_HOME) you can write") from None
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = describe_holder(os.pread(fd, 4096, 0).decode(errors="replace"))
            os.close(fd)
            raise UsageError(f"the instance in {data_dir} is in use by {holder}",
                             "wait for it to finish, or stop it (Ctrl-C or kill PID); status and report work "
                             "meanwhile") from None
        if _still_at(path, fd):
            return fd
        os.close(fd)  # its holder removed that file as we opened it: lock the one at the path now
    raise UsageError(f"cannot lock the instance in {data_dir}: its lock file {path} keeps being replaced",
                     "another dbio command is starting and ending on it in a loop; try again when it stops")


def _still_at(path: Path, fd: int) -> bool:
    try:
        at_path = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (at_path.st_dev, at_path.st_ino) == (mine.st_dev, mine.st_ino)


def _remove(path: Path) -> None:
    """Remove the lock file while still holding it: whoever opened it meanwhile sees it is gone."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
