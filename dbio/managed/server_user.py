"""The unprivileged operating-system user that runs the embedded server when dbio runs as root."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dbio.errors import DbioError

SERVER_USER = "dbio"

# Groups whose members reach root or what root reads: the terminals (tty: write to root's), the
# disks and memory, the logs and shadow passwords, the container and VM daemons, sudo, /usr/local.
PRIVILEGED_GROUPS = ("root", "sudo", "wheel", "admin", "adm", "tty", "disk", "kmem", "shadow", "docker",
                     "lxd", "libvirt", "kvm", "staff", "systemd-journal")


@dataclass(frozen=True)
class ServerUser:
    name: str
    uid: int
    gid: int
    created: bool = False  # created by this call

    @property
    def is_current(self) -> bool:
        return self.uid == os.geteuid()

    def groups(self) -> set[int]:
        return {self.gid} | {g.gr_gid for g in grp.getgrall() if self.name in g.gr_mem}


def current_user() -> ServerUser:
    entry = pwd.getpwuid(os.geteuid())
    return ServerUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def lookup(name: str) -> ServerUser | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return ServerUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def ensure_server_user(name: str = SERVER_USER) -> ServerUser:
    """As root: the system user the server runs as, created if missing. Otherwise: ourselves."""
    if os.geteuid() != 0:
        return current_user()
    user = lookup(name)
    if user is not None:
        refuse_privileged(user, "or delete the user, and dbio creates it unprivileged")
        return user
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    if not os.path.exists(useradd):
        raise DbioError("PostgreSQL refuses to run as root and useradd is not available to create a server user",
                        f"create a system user '{name}' (e.g. adduser --system {name}) or run dbio as a normal user")
    proc = subprocess.run(
        [useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", "/usr/sbin/nologin", "--comment", "dbio managed database servers", name],
        capture_output=True, text=True)
    if proc.returncode != 0 and lookup(name) is None:
        raise DbioError(f"could not create the system user '{name}' for the server: {proc.stderr.strip()}",
                        f"create it yourself (useradd --system {name}) or run dbio as a normal user")
    user = lookup(name)
    assert user is not None
    return ServerUser(user.name, user.uid, user.gid, created=True)


def first_blocked_dir(path: Path, user: ServerUser) -> Path | None:
    """The first existing ancestor of path that user cannot traverse (search permission), if any."""
    if user.is_current and os.geteuid() != 0:
        return None
    gids = user.groups()
    current = Path("/")
    for part in path.resolve().parts[1:]:
        try:
            st = current.stat()
        except FileNotFoundError:
            return None
        if not _may(st, user.uid, gids, stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH):
            return current
        current = current / part
        if not current.exists():
            return None
    return None


def _may(st: os.stat_result, uid: int, gids: set[int], u: int, g: int, o: int) -> bool:
    if uid == 0:
        return True
    if st.st_uid == uid:
        return bool(st.st_mode & u)
    if st.st_gid in gids:
        return bool(st.st_mode & g)
    return bool(st.st_mode & o)


def privilege_of(user: ServerUser) -> str | None:
    """What makes user privileged ('uid 0', 'group root (gid 0)', 'group sudo (gid 27)'), or None."""
    if user.uid == 0:
        return "uid 0"
    for gid in sorted(user.groups()):
        try:
            name = grp.getgrgid(gid).gr_name
        except KeyError:
            name = str(gid)
        if gid == 0 or name in PRIVILEGED_GROUPS:
            kind = "primary group" if gid == user.gid else "group"
            return f"{kind} {name} (gid {gid})"
    return None


def refuse_privileged(user: ServerUser, otherwise: str) -> None:
    """As root, a server user with root's uid or a privileged group is refused (before anything is
    made or run): whoever reaches the database superuser runs programs as it."""
    from dbio.errors import UsageError

    why = privilege_of(user) if os.geteuid() == 0 else None
    if why is not None:
        name = user.name
        raise UsageError(f"refusing to run the server as '{name}': its {why} is privileged, and whoever "
                         "reaches the database's superuser runs programs as the server user",
                         f"give '{name}' a primary group of its own and no other (groupadd {name}; "
                         f"usermod -g {name} -G '' {name}), {otherwise}")


def recorded_user(name: str) -> ServerUser:
    """The server user an instance record names, refused when it is gone or, as root, privileged."""
    user = lookup(name)
    if user is None:
        raise DbioError(f"the instance's server user '{name}' no longer exists",
                        f"recreate it (useradd --system {name}) or destroy the instance")
    refuse_privileged(user, "or destroy the instance")
    return user
