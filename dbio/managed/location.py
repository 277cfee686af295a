"""Where a managed instance may live (any engine's): checked before anything is created, and its
directory claimed for it."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

from dbio import trust
from dbio.errors import UsageError
from dbio.filesystem import existing_ancestor
from dbio.managed.paths import running_as_root
from dbio.managed.server_user import SERVER_USER, first_blocked_dir, lookup

MAX_SOCKET_PATH = 107  # bytes: sun_path holds 108, with its terminating NUL
UNSAFE_PATH_CHARACTERS = "'\"\\,"  # break unix_socket_directories (a quoted, comma-separated list)


def check_location(root: Path, *, is_instance: bool, socket_path: Path,
                   inside_other: Callable[[Path], str | None]) -> None:
    """The directory must be new or empty (or already this instance), reachable by the server user,
    and in a place only trusted users can change. socket_path: the server's socket (its length is
    bounded); inside_other: what kind of data directory of its engine a path is inside, if any."""
    if root.exists() and not root.is_dir():
        raise UsageError(f"--data-dir {root} is a file, not a directory", "choose a directory path")
    # a freshly made filesystem's mount point holds lost+found, which stays as it is
    if root.exists() and any(p.name != "lost+found" for p in root.iterdir()) and not is_instance:
        raise UsageError(f"--data-dir {root} is not empty and is not a dbio instance",
                         "choose an empty or new directory")
    # control characters, and bytes that are not UTF-8 (Python keeps them as lone surrogates)
    bad = sorted({ch for ch in str(root) if ch in UNSAFE_PATH_CHARACTERS or ord(ch) < 32
                  or 0xDC80 <= ord(ch) <= 0xDCFF})
    if bad:
        raise UsageError(f"--data-dir {str(root)!r} contains {' '.join(repr(ch) for ch in bad)}, which the "
                         "server's socket and configuration settings cannot take",
                         "choose a path without quotes, backslashes, commas or control characters")
    over = len(os.fsencode(socket_path)) - MAX_SOCKET_PATH
    if over > 0:
        raise UsageError(f"--data-dir {root} is too long: the server's socket {socket_path} would have "
                         f"{over + MAX_SOCKET_PATH} bytes, above the {MAX_SOCKET_PATH} a unix socket path may have",
                         f"choose a directory path of at most {len(os.fsencode(root)) - over} bytes")
    other = inside_other(root)
    if other:
        raise UsageError(f"--data-dir {root} is inside another {other} data directory",
                         "choose a directory outside any existing data directory")
    parent = existing_ancestor(root)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--data-dir {root} cannot be created: {parent} is not writable",
                         "choose a directory you can write, or fix its permissions")
    problem = trust.path_problem(root)
    if problem:
        raise UsageError(f"--data-dir {root}: {problem}, who could then replace the instance's record and "
                         "choose what dbio runs",
                         "choose a directory whose every parent is owned by root or by you and writable by no one else")
    if running_as_root():
        user = lookup(SERVER_USER)
        blocked = first_blocked_dir(root, user) if user is not None else blocked_for_others(root)
        if blocked is not None:
            who = "is" if user is not None else "would be"
            by = "" if user is not None else " by others"
            raise UsageError(f"--data-dir {root} {who} unreachable for the server user '{SERVER_USER}': {blocked} "
                             f"is not searchable{by}",
                             f"choose a directory under a searchable path (e.g. /var/lib/dbio) or chmod o+x {blocked}")


def blocked_for_others(path: Path) -> Path | None:
    current = Path("/")
    for part in existing_ancestor(path.resolve()).parts[1:]:
        current = current / part
        if not os.stat(current).st_mode & 0o001:
            return current
    return None


def claim_directory(root: Path) -> int | None:
    """Make the instance directory (or take the empty one that was there) and prove it is ours
    before anything goes into it; returns the mode of a directory that was already there.

    Under a directory others may write in (/tmp, /var/tmp) another user can put a directory or a
    link at the path between the checks and now: that is refused, and nothing there is touched."""
    try:
        root.mkdir(parents=True)
        created = True
    except FileExistsError:
        created = False
    st = os.lstat(root)
    problem = trust.path_problem(root)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        problem = problem or f"{root} is not a directory but a link or a file"
    elif st.st_uid not in trust.trusted_uids():
        problem = problem or f"{root} {trust.entry_problem(st, trust.trusted_uids())}"
    elif not created and any(p.name != "lost+found" for p in root.iterdir()):
        problem = f"{root} is no longer empty"
    if problem:
        raise UsageError(f"--data-dir {root} changed while dbio was creating the instance ({problem}); nothing "
                         "was created in it", "choose a directory that only you (or root) can create and change")
    return None if created else stat.S_IMODE(st.st_mode)


def give_back(root: Path, meta_file: Path, preexisting_mode: int | None, others: list[Path], what: str,
              notify: Callable[[str], None]) -> None:
    """After destroy removed the server's directories: the record goes, and the directory is removed
    or, when dbio found it there (or others' files are in it), left as it was."""
    meta_file.with_suffix(".tmp").unlink(missing_ok=True)
    meta_file.unlink()
    if preexisting_mode is not None:
        os.chmod(root, preexisting_mode)
        notify(f"removed the {what} from {root}, which stays as it was before")
    elif not others:
        root.rmdir()
        notify(f"removed the {what} in {root}")
    else:
        notify(f"removed the {what} from {root}; kept what dbio did not create there: "
               + ", ".join(p.name for p in others))
