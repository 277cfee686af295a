"""Where the managed MariaDB/MySQL instance lives, and the layout inside its directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import platformdirs

from dbio.managed.paths import SYSTEM_BASE, running_as_root

SOCKET_NAME = "mysqld.sock"
RECORD_NAME = "dbio-mysql-instance.json"  # dbio's record in an instance's directory: marks it as this engine's


def default_data_dir() -> Path:
    if running_as_root():
        return SYSTEM_BASE / "mysql-instance"
    return platformdirs.user_data_path("dbio") / "mysql-instance"


@dataclass(frozen=True)
class Layout:
    """Files of one managed instance, all under its directory. The record is dbio's (root's as root);
    only data/, socket/ and log/ belong to the server user."""

    root: Path

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    @property
    def socket(self) -> Path:
        return self.socket_dir / SOCKET_NAME

    @property
    def pid_file(self) -> Path:
        return self.socket_dir / "mysqld.pid"

    @property
    def log_dir(self) -> Path:
        return self.root / "log"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "error.log"

    @property
    def meta_file(self) -> Path:
        """dbio's record of the instance: marks the directory as dbio's (destroy checks it)."""
        return self.root / RECORD_NAME

    def owned_by_server(self) -> tuple[Path, ...]:
        return (self.datadir, self.socket_dir, self.log_dir)
