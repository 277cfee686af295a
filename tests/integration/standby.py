"""A real hot standby for the tests: a pg_basebackup (the bundled binary) of an embedded instance,
started as a streaming hot standby with its own socket directory and port.

The primary is an embedded instance of its own, made with wal_level = replica (minimal WAL has no
WAL senders) and loaded before the backup, so the standby holds the same data set.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg

from dbio.engines.postgres.instance.paths import Layout
from tests.integration.conftest import Instance, dbio

DATABASE = "nodes"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Standby:
    root: Path
    bin_dir: Path
    server_user: str
    port: int

    @property
    def pgdata(self) -> Path:
        return Layout(self.root).pgdata

    @property
    def socket_dir(self) -> Path:
        return Layout(self.root).socket_dir

    def conninfo(self, db: str = DATABASE) -> str:
        return f"host={self.socket_dir} port={self.port} user=dbio dbname={db}"

    def connect(self, db: str = DATABASE) -> psycopg.Connection:
        return psycopg.connect(self.conninfo(db), autocommit=True)

    def pg_ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return _as_server_user(self.server_user, [str(self.bin_dir / "pg_ctl"), "-D", str(self.pgdata), *args],
                               check=check)

    def start(self) -> None:
        self.pg_ctl("-l", str(self.root / "server.log"), "-w", "-t", "60", "-o",
                    f"-c port={self.port} -c unix_socket_directories={self.socket_dir}", "start")

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("-m", mode, "-w", "stop", check=False)

    def running(self) -> bool:
        return self.pg_ctl("status", check=False).returncode == 0


def _as_server_user(user: str, cmd: list[str], check: bool = True) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        cmd = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", user, "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})


def make_primary(root: Path, scale: str = "32MiB", shared_buffers: str = "16MiB") -> Instance:
    """An embedded instance with WAL for replication, with the test data set loaded in DATABASE."""
    inst = Instance(root, root / "primary", root / "results")
    done = dbio("instance", "init", "--data-dir", str(inst.data_dir), "--shared-buffers", shared_buffers,
                "--wal-level", "replica")
    assert done.code == 0, done.text
    inst.create_database(DATABASE)
    done = dbio("setup", "--dsn", inst.conninfo(DATABASE), "--scale", scale, "--scan-table-size", "0", timeout=1800)
    assert done.code == 0, done.text
    return inst


def make_standby(primary: Instance, root: Path) -> Standby:
    """A streaming hot standby of primary, in root, running."""
    meta = primary.meta
    user = meta["server_user"]
    root.mkdir(mode=0o755)
    standby = Standby(root, Path(meta["bin_dir"]), user, free_port())
    standby.socket_dir.mkdir(mode=0o700)
    if os.geteuid() == 0:  # the server user makes the backup and runs the standby
        shutil.chown(root, user)
        shutil.chown(standby.socket_dir, user)
    _as_server_user(user, [str(standby.bin_dir / "pg_basebackup"), "-D", str(standby.pgdata), "-h",
                           str(primary.data_dir / "socket"), "-p", str(meta["port"]), "-U", "dbio", "-R",
                           "-X", "stream", "-c", "fast"])
    standby.start()
    with standby.connect() as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
    return standby


def destroy(primary: Instance, standby: Standby | None) -> None:
    if standby is not None:
        standby.stop("immediate")
        shutil.rmtree(standby.root, ignore_errors=True)
    dbio("instance", "destroy", "--yes", "--data-dir", str(primary.data_dir))
