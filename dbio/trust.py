"""What dbio may rely on when it runs with more privilege than the server it manages.

As root, dbio starts programs (as the server user) and switches to the server user's identity.
Whatever decides which program runs, or which identity it runs as, must be writable only by
root or by the user running dbio: otherwise the server user (whom anyone reaching the embedded
superuser can act as, e.g. with COPY ... TO PROGRAM) could make root run its own code.

Not running as root, dbio has no more privilege than its user: it trusts root, that user and the
group it runs as when that group was chosen for it (not its account's login group: `sg`, a pod's
runAsGroup set to the fsGroup the kubelet prepares a volume for) or is the user's own (a personal
group no one else is in). Supplementary groups, and a login group shared by everyone (`users`), are
not trusted: they hold people the user never chose. As root it trusts root and its own user only
(docs/trust.md).
"""

from __future__ import annotations

import errno
import functools
import grp
import os
import pwd
import stat
from pathlib import Path

from dbio import readback
from dbio.errors import UsageError
from dbio.filesystem import write_whole


def trusted_uids() -> frozenset[int]:
    """Owners whose files dbio trusts: root and the user running dbio."""
    return frozenset({0, os.geteuid()})


def trusted_gids() -> frozenset[int]:
    """Groups whose write access dbio accepts: root's; not running as root, also the group it runs as when
    it was chosen for this process or is the user's own (group_is_chosen_or_personal)."""
    return _trusted_gids_of(os.geteuid(), os.getegid())


@functools.lru_cache(maxsize=8)
def _trusted_gids_of(uid: int, gid: int) -> frozenset[int]:
    """trusted_gids for an identity: read once (every component of every path checked asks it, and the account
    database may be a directory service)."""
    if uid == 0:
        return frozenset({0})
    try:
        account: pwd.struct_passwd | None = pwd.getpwuid(uid)
    except KeyError:
        account = None
    try:
        listed = tuple(grp.getgrgid(gid).gr_mem)
    except KeyError:
        listed = ()
    login = (account.pw_name, account.pw_gid) if account is not None else None
    others = _others_logging_in_with(gid, uid) if login is not None and login[1] == gid else ()
    return frozenset({0, gid}) if group_is_chosen_or_personal(gid, login, listed, others) else frozenset({0})


def group_is_chosen_or_personal(gid: int, login: tuple[str, int] | None, listed: tuple[str, ...],
                                others: tuple[str, ...]) -> bool:
    """Whether the group a process runs as is trusted with its files (pure): chosen for it (no account for
    its uid, as in a container given runAsGroup; or not the account's login group: sg, newgrp) or the
    user's own (its login group, with no one else listed in it or logging in with it). login: the
    account's name and login group."""
    if login is None or login[1] != gid:
        return True
    return not [name for name in listed if name != login[0]] and not others


def _others_logging_in_with(gid: int, uid: int) -> tuple[str, ...]:
    """Accounts other than uid's whose login group is gid (a shared login group, such as `users`)."""
    return tuple(p.pw_name for p in pwd.getpwall() if p.pw_gid == gid and p.pw_uid != uid)


def _owner(uid: int) -> str:
    try:
        return f"user '{pwd.getpwuid(uid).pw_name}'"
    except KeyError:
        return f"uid {uid}"


def entry_problem(st: os.stat_result, uids: frozenset[int], gids: frozenset[int] | None = None) -> str | None:
    """Why one file or directory could be changed by someone dbio does not trust (pure but for gids'
    default, trusted_gids())."""
    gids = trusted_gids() if gids is None else gids
    if st.st_uid not in uids:
        return f"is owned by {_owner(st.st_uid)}"
    if st.st_mode & stat.S_IWOTH:
        return "is writable by every user"
    if st.st_mode & stat.S_IWGRP and st.st_gid not in gids:
        return "is writable by its group"
    return None


def path_problem(path: Path, uids: frozenset[int] | None = None) -> str | None:
    """The first place on the way from / to path that a less trusted user could change, described.

    A world-writable directory with the sticky bit (/tmp, /var/tmp) is fine when the next entry
    is trusted: nobody else can rename or remove that entry. Parts that do not exist yet are
    judged when dbio has made them (see make_private_directory)."""
    uids = trusted_uids() if uids is None else uids
    # the path as written (a link on it could be swapped) and where its links lead
    for way in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
        problem = _way_problem(way, uids)
        if problem:
            return problem
    return None


def _way_problem(way: Path, uids: frozenset[int]) -> str | None:
    current = Path("/")
    parts = way.parts[1:]
    for index in range(len(parts) + 1):
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return None  # what does not exist yet is judged when it is created
        # A link's mode means nothing. Its directory's owner can replace it, and so can its own
        # owner in a sticky directory (/tmp): there a link another user made is theirs to swap.
        if stat.S_ISLNK(st.st_mode):
            problem = None if st.st_uid in uids else f"is a link owned by {_owner(st.st_uid)}"
        else:
            problem = entry_problem(st, uids)
        sticky_dir = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX and st.st_uid in uids
        if problem and not (sticky_dir and index < len(parts) and problem == "is writable by every user"):
            return f"{current} {problem}"
        if index < len(parts):
            current = current / parts[index]
    return None


def tree_problem(root: Path, uids: frozenset[int] | None = None) -> str | None:
    """The first file or directory under root (or on the way to it) a less trusted user could change."""
    uids = trusted_uids() if uids is None else uids
    problem = path_problem(root, uids)
    if problem:
        return problem
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            entry = os.path.join(dirpath, name)  # a string: a server's tree holds thousands, walked every run
            st = os.lstat(entry)
            if stat.S_ISLNK(st.st_mode):
                # a link in a trusted directory was made by a trusted user; where it points must be trusted too
                problem = path_problem(Path(entry), uids)
                if problem:
                    return f"{problem} (through the link {entry})"
                continue
            problem = entry_problem(st, uids)
            if problem:
                return f"{entry} {problem}"
    return None


class UntrustedFile(Exception):
    """A file that decides what dbio does, which another user owns or may change."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


def read_trusted(path: Path, kind: readback.Kind) -> bytes:
    """A file that decides what dbio does (configuration, a sweep to resume), read only when the user
    running dbio or root owns it and nobody else may write it, and no larger than its kind's limit
    (readback.Refused: one line).

    The check is made on the open file and the same file is read, so it cannot be swapped between
    the two. A link is followed only inside a directory nobody else may change; elsewhere someone
    could point it at any file root owns."""
    follow = path_problem(Path(os.path.abspath(path)).parent) is None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFile("is a link in a directory other users may change") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedFile("is not a regular file")
        problem = entry_problem(st, trusted_uids())
        if problem:
            raise UntrustedFile(f"{problem}, not only by you or root")
        if st.st_size > kind.max_bytes:
            raise readback.too_large(path, kind, f"{st.st_size:,} bytes")
        return readback.bounded(fh, path, kind)


def require_trusted(path: Path, what: str, fix: str, *, tree: bool = False) -> None:
    """Refuse, in one line, to rely on a path a less privileged user could change."""
    problem = tree_problem(path) if tree else path_problem(path)
    if problem:
        raise UsageError(f"refusing to use {what} {path}: {problem}, so another user could change what dbio "
                         "runs or trusts", fix)


def make_private_directory(path: Path, what: str) -> None:
    """A new directory (its parents made as needed) that only trusted users can change, proved
    after it is made: under a directory others may write in, one of them could have put a
    directory or a link on the way meanwhile, and what dbio then writes there would follow it."""
    path.mkdir(parents=True)
    st = os.lstat(path)
    problem = path_problem(path) or (None if stat.S_ISDIR(st.st_mode) else f"{path} is not a directory")
    if problem:
        raise UsageError(f"refusing to write {what} in {path}: {problem}", "choose a directory only you (or root) "
                         "can write, all the way up")


def write_output(path: Path, text: str) -> None:
    """A file the user named (--out), written whole (filesystem.write_whole: a full disk leaves what it
    held), never through a link someone may have put there, and never over a pipe or a device (which
    is not a file to replace) or a file with other names (a hard link, whose other names keep it)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise OSError(errno.ELOOP, "a link (never written through)")
    if st is not None and (not stat.S_ISREG(st.st_mode) or st.st_nlink != 1):
        raise OSError(errno.EPERM, "not a plain file of its own (a pipe, a device or a hard link)")
    write_whole(path, text, 0o644)


# The most dbio reads of a file the server user owns (a log, a pid file): that user can make it a
# sparse file of terabytes, which read whole would take root's memory.
READ_AT_MOST = 16 * 1024 ** 2


def read_no_follow(path: Path, *, start: int = 0, tail: bool = False) -> str:
    """A file a less privileged user owns, read without following a link they may have put there, and
    bounded: at most READ_AT_MOST bytes from byte start on, or with tail the last ones after it."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        os.lseek(fd, max(start, st.st_size - READ_AT_MOST) if tail else start, os.SEEK_SET)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read(READ_AT_MOST).decode(errors="replace")
    finally:
        if fd >= 0:
            os.close(fd)


def write_for(path: Path, text: str, uid: int, gid: int, mode: int = 0o600) -> None:
    """Write a file into a directory the server user owns, as a new file that user then owns.

    Whatever stood at path is removed first and the file is created exclusively, never following
    a link: a link planted there to /etc/shadow makes this fail instead of overwriting it."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w") as fh:
        if os.geteuid() == 0:
            os.fchown(fd, uid, gid)
        fh.write(text)
