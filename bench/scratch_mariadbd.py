"""A throwaway mariadbd for benches and tests: its own data directory and socket, no TCP listener,
O_DIRECT, a small buffer pool, performance_schema on (file I/O timed, current waits kept), run as
the unprivileged user `mysql` when started as root. `stop()` shuts it down and removes its directory.

The MariaDB service of the machine is never touched: it has its own socket and data directory,
and its performance_schema is off and its page-cache reads are not device reads. This is only
for figures until `dbio instance init --engine mysql` (the managed instance) is there.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SERVER_USER = "mysql"


@dataclass
class Scratch:
    base: Path
    process: subprocess.Popen

    @property
    def socket(self) -> str:
        return str(self.base / "run" / "mysqld.sock")

    def dsn(self, database: str = "dbio") -> str:
        return f"mysql://root@localhost/{database}?unix_socket={self.socket}"

    def client(self, *args: str) -> str:
        """The mariadb client on this server as root (no password: unix_socket authentication)."""
        done = subprocess.run(["mariadb", f"--socket={self.socket}", "-uroot", "-N", "-B", *args], text=True,
                              capture_output=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"mariadb {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def stop(self, keep: bool = False) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # a clean InnoDB shutdown
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if not keep:
            shutil.rmtree(self.base, ignore_errors=True)


def binaries_present() -> str | None:
    """Why no scratch server can start here, or None."""
    for name in ("mariadbd", "mariadb-install-db", "mariadb"):
        if shutil.which(name) is None and not Path(f"/usr/sbin/{name}").exists():
            return f"{name} is not installed (Debian package mariadb-server)"
    return None


def _server_binary() -> str:
    return shutil.which("mariadbd") or "/usr/sbin/mariadbd"


def start(base: Path, *, buffer_pool: str = "32M", page_size: str = "16k", database: str = "dbio",
          extra: tuple[str, ...] = ()) -> Scratch:
    """Create base (must not exist), initialise and start the server; returns once it answers."""
    base.mkdir(parents=True)
    base.chmod(0o755)
    data, run = base / "data", base / "run"
    data.mkdir()
    run.mkdir()
    as_root = os.geteuid() == 0
    if as_root:
        user = pwd.getpwnam(SERVER_USER)
        for d in (data, run):
            os.chown(d, user.pw_uid, user.pw_gid)
    user_args = [f"--user={SERVER_USER}"] if as_root else []
    options = [f"--datadir={data}", f"--socket={run / 'mysqld.sock'}", f"--pid-file={run / 'mysqld.pid'}",
               f"--innodb-page-size={page_size}"]
    init = subprocess.run(["mariadb-install-db", "--no-defaults", *user_args, *options,
                           "--auth-root-authentication-method=socket",
                           "--skip-test-db"], capture_output=True, text=True, timeout=300)
    if init.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"mariadb-install-db failed: {init.stderr.strip()[-500:]}")
    log = open(base / "mysqld.log", "w")
    process = subprocess.Popen([_server_binary(), "--no-defaults", *user_args, *options, "--skip-networking",
                                "--innodb-flush-method=O_DIRECT", f"--innodb-buffer-pool-size={buffer_pool}",
                                "--innodb-read-ahead-threshold=0", "--innodb-random-read-ahead=OFF",
                                "--performance-schema=ON", "--performance-schema-consumer-events-waits-current=ON",
                                "--performance-schema-instrument=wait/io/file/%=ON",
                                "--innodb-log-file-size=256M", "--max-connections=200",
                                f"--log-error={base / 'mysqld.err'}", *extra],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    scratch = Scratch(base, process)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = (base / "mysqld.err").read_text()[-800:] if (base / "mysqld.err").exists() else ""
            scratch.stop()
            raise RuntimeError(f"mariadbd ended at start: {err}")
        try:
            scratch.client("-e", f"CREATE DATABASE IF NOT EXISTS {database}")
            return scratch
        except RuntimeError:
            time.sleep(0.5)
    scratch.stop()
    raise RuntimeError("mariadbd did not answer within 120 s")
