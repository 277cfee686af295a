"""The MariaDB or MySQL server programs already installed on this machine (Debian's mariadb-server).

dbio runs them (as root: as the unprivileged server user), so before each use it checks that only
root (or the user running dbio) could have changed them, what they load, or a directory on the way."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dbio import trust
from dbio.errors import UsageError

# Where distributions install the server, in the order looked at: trusted system directories only
# (never PATH, which a less privileged user may have changed).
SERVER_DIRS = (Path("/usr/sbin"), Path("/usr/bin"), Path("/usr/libexec"), Path("/usr/local/sbin"),
               Path("/usr/local/bin"))
SERVERS = ("mariadbd", "mysqld")
INSTALLERS = ("mariadb-install-db", "mysql_install_db")
# What the programs load or read: plugins, error messages and the system tables' SQL.
SUPPORT_DIRS = (Path("/usr/lib/mysql/plugin"), Path("/usr/share/mysql"), Path("/usr/share/mariadb"))
PACKAGE_HINT = ("install the package mariadb-server (apt-get install mariadb-server; it need not run as a "
                "service), or use an existing server with --dsn mysql://user@host/dbname")


@dataclass(frozen=True)
class Binaries:
    server: Path
    installer: Path | None  # MariaDB's mariadb-install-db; MySQL initializes with the server itself
    version: str  # e.g. 10.11.19-MariaDB-0+deb12u1

    @property
    def is_mariadb(self) -> bool:
        return "mariadb" in self.version.lower()

    def programs(self) -> list[Path]:
        helper = self.server.parent.parent / "bin" / "my_print_defaults"
        return [self.server, *([self.installer] if self.installer else []), *([helper] if helper.exists() else [])]


def parse_version(text: str) -> str | None:
    """The version in `mariadbd --version` output (pure)."""
    match = re.search(r"\bVer\s+(\S+)", text)
    return match.group(1) if match else None


def _first(names: tuple[str, ...]) -> Path | None:
    for directory in SERVER_DIRS:
        for name in names:
            if (directory / name).is_file():
                return directory / name
    return None


def locate() -> Binaries:
    """The server binaries, checked; one line naming the package when there are none."""
    server = _first(SERVERS)
    if server is None:
        raise UsageError("the mysql engine's managed instance needs a MariaDB or MySQL server binary (mariadbd or "
                         "mysqld), and this machine has none", PACKAGE_HINT)
    installer = _first(INSTALLERS)
    found = Binaries(server, installer, "")
    require_trusted(found)
    out = subprocess.run([str(server), "--no-defaults", "--version"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    version = parse_version(out.stdout)
    if version is None:
        raise UsageError(f"{server} --version says {out.stdout.strip() or out.stderr.strip()!r}, not a version",
                         PACKAGE_HINT)
    if "mariadb" in version.lower() and installer is None:
        raise UsageError(f"MariaDB's mariadb-install-db is missing beside {server}", PACKAGE_HINT)
    return Binaries(server, installer, version)


def require_trusted(binaries: Binaries) -> None:
    """Before dbio runs a server program: nobody but root (or us) can have changed it or what it loads."""
    fix = "reinstall the server package so that root owns its files and only root can write them"
    for program in binaries.programs():
        trust.require_trusted(program, "the server program", fix=fix)
    for directory in SUPPORT_DIRS:
        if directory.is_dir():
            trust.require_trusted(directory, "the server's files in", fix=fix, tree=True)
