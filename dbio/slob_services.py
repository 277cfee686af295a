"""SLOB's SQLNET_SERVICE_BASE / SQLNET_SERVICE_MAX as dbio's nodes, where they can be.

SLOB connects its sessions in turn to the SQL*Net services BASE1 ... BASE<MAX> (one per RAC
instance). A service name is not a connection string; but libpq has services too: when every one
of those names is a section of a libpq service file, each becomes a node (`service=BASE1`, ...),
dealt to in turn as SLOB does. Otherwise the two names are ignored, and the notice says why.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from dbio import readback, trust

_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$", re.MULTILINE)
# One service per RAC instance: far more than any cluster has, few enough to list.
MAX_SERVICES = 4096


def service_names(base: str, count: str) -> list[str] | None:
    """BASE1 ... BASE<count> as SLOB names them; None when count is not a whole number from 1 to
    MAX_SERVICES in ASCII digits (str.isdigit also takes '²', which int() refuses) (pure)."""
    if not base or not re.fullmatch(r"[0-9]{1,5}", count) or not 1 <= int(count) <= MAX_SERVICES:
        return None
    return [f"{base}{i}" for i in range(1, int(count) + 1)]


def sections(text: str) -> set[str]:
    """The service names a libpq service file defines (pure)."""
    return set(_SECTION.findall(text))


def service_files(env: dict[str, str] | None = None) -> list[Path]:
    """Where libpq looks for services: PGSERVICEFILE or ~/.pg_service.conf, then PGSYSCONFDIR's file
    (Debian's libpq: /etc/postgresql-common)."""
    env = dict(os.environ) if env is None else env
    user = Path(env["PGSERVICEFILE"]) if env.get("PGSERVICEFILE") else Path.home() / ".pg_service.conf"
    system = Path(env.get("PGSYSCONFDIR") or "/etc/postgresql-common") / "pg_service.conf"
    return [user, system]


def as_nodes(base: str, count: str, files: list[Path] | None = None) -> tuple[list[str] | None, str]:
    """The DSNs SLOB's services map onto, or None, with a sentence saying what was done and why."""
    names = service_names(base, count)
    if names is None:
        return None, f"SQLNET_SERVICE_MAX is not a whole number from 1 to {MAX_SERVICES:,}, so they name no services"
    defined: set[str] = set()
    for path in files if files is not None else service_files():
        try:  # a service names the server, user and options libpq uses: only a file nobody else may write
            defined |= sections(trust.read_trusted(path, readback.CONFIGURATION).decode())
        except trust.UntrustedFile as exc:
            return None, (f"Oracle SQL*Net services, and the libpq service file {path} {exc}, so dbio does not use "
                          "its services: make it yours and writable by you alone, or give --dsn once per node")
        except (OSError, UnicodeDecodeError, readback.Refused):
            continue
    missing = [n for n in names if n not in defined]
    if missing:
        verb = "is not a libpq service" if len(missing) == 1 else "are not libpq services"
        return None, (f"Oracle SQL*Net services, and {', '.join(missing)} {verb} (no section in "
                      "~/.pg_service.conf, PGSERVICEFILE or PGSYSCONFDIR's pg_service.conf): define one per "
                      "node there, or give --dsn once per node")
    return [f"service={n}" for n in names], (f"one node per libpq service {', '.join(names)}, dealt to in turn as "
                                             "SLOB deals its sessions to its services")
