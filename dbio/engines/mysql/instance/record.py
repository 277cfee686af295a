"""dbio's record of a managed MariaDB/MySQL instance (dbio-mysql-instance.json) and its status."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dbio.managed.record import read_as, write_record, wrong_types

META_VERSION = 1


@dataclass
class Meta:
    """What dbio knows about the instance (never a password: none exists, the socket authenticates)."""

    server_user: str
    server: str  # the server program it was created with
    version: str
    page_size: int  # innodb_page_size, fixed at creation
    dbname: str
    client_user: str  # the account dbio connects as (unix_socket: the OS user running dbio)
    created_at: str
    settings: dict[str, str] = field(default_factory=dict)  # as given at the current/last start
    # The directory existed before dbio made an instance in it (a mount point, say): its mode then,
    # restored by destroy, which also leaves the directory itself in place.
    preexisting_mode: int | None = None
    engine: str = "mysql"
    # The options (REMEMBERED) of the last command that configured it, taken by later commands where the
    # user gives none (config_resolver.py); empty in a record made before they were kept.
    options: dict = field(default_factory=dict)
    # A Galera cluster's nodes (galera_config.Member.to_dict), node1 first; empty: a single server.
    members: list = field(default_factory=list)
    cluster_name: str | None = None  # its wsrep_cluster_name
    format_version: int = META_VERSION

    @classmethod
    def read(cls, path: Path) -> "Meta":
        meta = read_as(cls, path, "a dbio MySQL instance")
        if meta.engine != "mysql" or not isinstance(meta.page_size, int) or not isinstance(meta.options,
                                                                                           dict) or not all(
                isinstance(v, str) for v in (meta.server_user, meta.server, meta.dbname, meta.client_user)):
            raise wrong_types(path)
        if not isinstance(meta.members, list) or not all(isinstance(m, dict) for m in meta.members):
            raise wrong_types(path)
        return meta

    def write(self, path: Path) -> None:
        """A cluster's record (its cluster name, its nodes' ports) is its owner's alone."""
        write_record(path, asdict(self), mode=0o600 if self.members else 0o644)


@dataclass(frozen=True)
class Status:
    data_dir: Path
    exists: bool
    running: bool
    pid: int | None = None
    version: str | None = None
    server_user: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    size_bytes: int | None = None
    log_file: Path | None = None
    socket: Path | None = None
    purpose: str = "run"
    wal_dir: Path | None = None  # the redo log lives in the data directory
    members: tuple[Any, ...] = ()  # no standbys (engines/instance.InstanceStatus)

    def server_line(self) -> str:
        return f"{self.version}, run by user {self.server_user}"

    def socket_line(self) -> str:
        return f"{self.socket} (no TCP listener)"

    def profile(self) -> str:
        from dbio.engines.mysql.instance.settings import describe

        return describe(self.settings)
