"""Where an embedded PostgreSQL instance may live: the shared checks (managed/location.py) with
its socket's name and PostgreSQL's own data directories."""

from __future__ import annotations

from pathlib import Path

from dbio.engines.postgres.instance.paths import Layout
from dbio.managed import location


def check_location(root: Path, *, is_instance: bool) -> None:
    location.check_location(root, is_instance=is_instance, socket_path=Layout(root).socket_dir / ".s.PGSQL.65535",
                            inside_other=lambda path: "PostgreSQL" if inside_other_instance(path) else None)


def inside_other_instance(path: Path) -> bool:
    current = path.resolve()
    for candidate in [current, *current.parents]:
        if (candidate / "PG_VERSION").exists() and (candidate / "global").is_dir():
            return True
    return False
