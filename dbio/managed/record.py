"""dbio's record of a managed instance on disk (a small JSON object beside the server's directories).

It decides which programs dbio runs and as whom, so it is written only by dbio (root's when dbio
runs as root), as a new file that replaces the old one, never through a link."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, TypeVar

from dbio import readback
from dbio.errors import DbioError

T = TypeVar("T")
DAMAGED = "if the instance is damaged, remove its directory yourself after checking what is in it"


def read_record(path: Path) -> dict[str, Any]:
    """The record's fields (format_version dropped); one line naming the file when it is unreadable."""
    try:
        data = readback.load_json(path, readback.INSTANCE_RECORD)
    except (OSError, ValueError) as exc:  # readback.Refused, jsondoc.Malformed and UnicodeDecodeError are ValueErrors
        raise DbioError(f"cannot read the instance record {path}: {exc}", DAMAGED) from None
    if not isinstance(data, dict):
        raise DbioError(f"the instance record {path} is not a JSON object", DAMAGED)
    data.pop("format_version", None)
    return data


def read_as(cls: type[T], path: Path, what: str) -> T:
    """The record as its dataclass; one line naming the file when its fields are not cls's. Fields a later
    dbio added are left out, so that this one can still use (and destroy) an instance that one wrote."""
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    try:
        return cls(**{key: value for key, value in read_record(path).items() if key in known})
    except TypeError as exc:
        raise DbioError(f"the instance record {path} does not describe {what} ({exc})", DAMAGED) from None


def wrong_types(path: Path) -> DbioError:
    return DbioError(f"the instance record {path} has values of the wrong type", DAMAGED)


def write_record(path: Path, data: dict[str, Any], mode: int = 0o644) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def require_trusted_record(record: Path, data_dir: Path) -> None:
    """Refuse a record another user could have rewritten (it names the programs dbio runs and as whom)."""
    from dbio import trust
    from dbio.errors import UsageError
    from dbio.managed.paths import running_as_root

    problem = trust.path_problem(record)
    if problem:
        owner = "root" if running_as_root() else "you"
        raise UsageError(
            f"refusing to use the instance record {record}: {problem}, so another user could rewrite which "
            "programs dbio runs and as whom",
            f"check its contents, then make it and {data_dir} owned by {owner} and writable by no one else "
            f"(chown {os.geteuid()} DIR FILE; chmod 755 DIR; chmod 644 FILE), or remove the directory yourself")


def require_own_instance(server_user: str, data_dir: Path) -> None:
    """A user who is not root works only on instances their own user runs."""
    from dbio.errors import UsageError
    from dbio.managed.paths import running_as_root
    from dbio.managed.server_user import current_user

    if not running_as_root() and server_user != current_user().name:
        raise UsageError(f"the instance in {data_dir} is run by user '{server_user}', not by you",
                         "run dbio as the user who made it (root for a server run by 'dbio'), or use your own "
                         "--data-dir")
