"""dbio's record of an embedded instance (dbio-instance.json) and what status reports of it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from dbio.managed.record import read_as, write_record, wrong_types
from dbio.units import format_bytes

META_VERSION = 1


@dataclass
class Meta:
    """dbio-instance.json: what dbio knows about the instance (never a password: none exists)."""

    port: int
    server_user: str
    bin_dir: str
    wheel_version: str
    pg_version: str
    dbname: str
    created_at: str
    settings: dict[str, str] = field(default_factory=dict)  # as written for the current/last start
    purpose: str = "run"
    # The data directory existed before dbio made an instance in it (a mount point, say): its
    # mode then, restored by destroy, which also leaves the directory itself in place.
    preexisting_mode: int | None = None
    # Directories dbio made outside the data directory (placement.Place), removed by destroy; the
    # WAL's is also named here (initdb --waldir fixed it).
    places: list[dict] = field(default_factory=list)
    wal_dir: str | None = None
    # The cluster's members (standbys.Member.to_dict): name, role, data and socket directory, port;
    # empty in a record made before standbys (its one member is the primary, described above).
    members: list[dict] = field(default_factory=list)
    # The options (REMEMBERED) of the last command that configured it, which later commands take where the
    # user gives none (config_resolver.py); empty in a record made before they were kept.
    options: dict = field(default_factory=dict)
    format_version: int = META_VERSION

    @classmethod
    def read(cls, path: Path) -> "Meta":
        meta = read_as(cls, path, "a dbio instance")
        if not isinstance(meta.port, int) or not isinstance(meta.options, dict) or not all(
                isinstance(v, str) for v in (meta.server_user, meta.bin_dir, meta.dbname)):
            raise wrong_types(path)
        return meta

    def write(self, path: Path) -> None:
        write_record(path, asdict(self))


@dataclass(frozen=True)
class MemberStatus:
    """One member of an instance with standbys, as status shows it."""

    name: str
    role: str
    running: bool
    pid: int | None
    port: int
    data_dir: Path
    lag_bytes: int | None = None  # replay lag of a standby: WAL the primary has written and it has not replayed
    lag_seconds: float | None = None
    note: str = ""  # why a lag is missing (not streaming, being made again)


@dataclass(frozen=True)
class Status:
    data_dir: Path
    exists: bool
    running: bool
    pid: int | None = None
    port: int | None = None
    pg_version: str | None = None
    server_user: str | None = None
    purpose: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    size_bytes: int | None = None
    log_file: Path | None = None
    wal_dir: Path | None = None  # where its WAL is (pg_wal may lead to another device)
    members: tuple["MemberStatus", ...] = ()  # with standbys: each member, the primary first

    def server_line(self) -> str:
        return f"PostgreSQL {self.pg_version}, run by user {self.server_user}"

    def socket_line(self) -> str:
        return f"{self.data_dir / 'socket'} port {self.port} (no TCP listener)"

    def profile(self) -> str:
        """The settings its profile chose that matter most for I/O, in one line."""
        direct = self.settings.get("debug_io_direct", "''") != "''"
        size = str(self.settings.get("shared_buffers"))
        if size.endswith("kB") and size[:-2].isdigit():  # as written for the server; shown as reports show sizes
            size = format_bytes(int(size[:-2]) * 1024)
        return (f"shared_buffers {size}, direct I/O {'on' if direct else 'off'}, "
                f"io_method {self.settings.get('io_method')}, max_connections {self.settings.get('max_connections')}")
