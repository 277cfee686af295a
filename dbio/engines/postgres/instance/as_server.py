"""Running a server program (initdb, pg_ctl, pg_basebackup) as the instance's server user: the user its
record names, the program checked first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dbio import trust
from dbio.engines.postgres.instance import binaries
from dbio.errors import DbioError
from dbio.managed import server_process
from dbio.managed.server_user import ServerUser, recorded_user

if TYPE_CHECKING:
    from dbio.engines.postgres.instance.record import Meta


def run(user: ServerUser, cmd: list[str], *, cwd: Path, log_file: Path, what: str) -> str:
    """The program's output; a failure names its last line and the server log's last error."""
    proc = server_process.run(user, cmd, cwd=cwd)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        tail = detail[-1] if detail else f"exit status {proc.returncode}"
        log_tail = log_tail_of(log_file)
        hint = f"server log {log_file}" + (f": {log_tail}" if log_tail else "")
        raise DbioError(f"{what} failed: {tail}", hint)
    return proc.stdout


def log_tail_of(log_file: Path) -> str:
    try:
        lines = [ln for ln in trust.read_no_follow(log_file, tail=True).splitlines() if ln.strip()]
    except OSError:
        return ""
    errors = [ln for ln in lines[-20:] if "FATAL" in ln or "ERROR" in ln or "LOG:  invalid" in ln]
    return (errors or lines[-1:] or [""])[-1].strip()


def server_user(meta: Meta) -> ServerUser:
    """The server user the instance's record names."""
    return recorded_user(meta.server_user)


def trusted_tool(meta: Meta, name: str) -> str:
    """A server program, after checking that no one but root (or us) could have changed it or what it loads."""
    bin_dir = Path(meta.bin_dir)
    binaries.require_trusted(bin_dir)
    return str(bin_dir / name)
