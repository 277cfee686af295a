"""Where the embedded instance lives, and the layout inside its directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import platformdirs

from dbio.managed.paths import SYSTEM_BASE, running_as_root


RECORD_NAME = "dbio-instance.json"  # dbio's record in an instance's directory: marks it as this engine's


def default_data_dir() -> Path:
    if running_as_root():
        return SYSTEM_BASE / "instance"
    return platformdirs.user_data_path("dbio") / "instance"


@dataclass(frozen=True)
class Layout:
    """Files of one embedded instance, all under its data directory."""

    root: Path

    @property
    def pgdata(self) -> Path:
        return self.root / "pgdata"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    @property
    def log_dir(self) -> Path:
        return self.root / "log"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "server.log"

    @property
    def meta_file(self) -> Path:
        """dbio's record of the instance: marks the directory as dbio's (destroy checks it)."""
        return self.root / RECORD_NAME

    @property
    def settings_file(self) -> Path:
        """postgresql.conf includes this file; dbio rewrites it before each start."""
        return self.pgdata / "dbio.conf"
