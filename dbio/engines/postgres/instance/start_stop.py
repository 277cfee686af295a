"""The embedded server started (its settings written, then pg_ctl start) and stopped (fast, then
immediate), each program run as the server user; given where the instance lives and its record."""

from __future__ import annotations

from typing import Callable

from dbio import trust
from dbio.engines.postgres.instance import as_server, preflight, processes, settings
from dbio.engines.postgres.instance.paths import Layout
from dbio.engines.postgres.instance.record import Meta
from dbio.errors import DbioError

START_TIMEOUT = 120  # seconds; a server recovering after a crash may need a while


def _pg_ctl(layout: Layout, meta: Meta, args: list[str], what: str) -> None:
    as_server.run(as_server.server_user(meta), [as_server.trusted_tool(meta, "pg_ctl"), "-D", str(layout.pgdata),
                                                *args], cwd=layout.root, log_file=layout.log_file, what=what)


def start(layout: Layout, meta: Meta, profile: settings.Profile, notify: Callable[[str], None]) -> None:
    """The settings written, then pg_ctl start; the record says the settings it runs in."""
    user = as_server.server_user(meta)
    processes.wait_for_crashed_server(layout.pgdata, processes.lock_file_pid(layout.pgdata), notify)
    bounded = profile.as_dict().get("max_wal_size")
    if profile.wal_bounded and bounded != meta.settings.get("max_wal_size"):
        notify(f"max_wal_size set to {bounded} so that WAL cannot fill the filesystem of "
               f"{preflight.wal_location(layout, meta)} "
               f"({preflight.wal_budget(layout, meta) >> 20} MiB free for it)")
    trust.write_for(layout.settings_file, settings.render(profile), user.uid, user.gid)
    _pg_ctl(layout, meta, ["-l", str(layout.log_file), "-w", "-t", str(START_TIMEOUT), "start"], "pg_ctl start")
    meta.settings = profile.as_dict()
    meta.purpose = profile.purpose
    meta.write(layout.meta_file)


def stop(layout: Layout, meta: Meta) -> None:
    """Fast shutdown of the running server, immediate if that does not finish."""
    try:
        _pg_ctl(layout, meta, ["-m", "fast", "-w", "-t", "60", "stop"], "pg_ctl stop")
    except DbioError:
        _pg_ctl(layout, meta, ["-m", "immediate", "-w", "-t", "30", "stop"], "pg_ctl stop -m immediate")


def crash(layout: Layout, meta: Meta) -> None:
    """Stop the server as a crash would (pg_ctl stop -m immediate): no shutdown checkpoint, so the
    next start replays the WAL written since the last one (dbio ops recovery)."""
    _pg_ctl(layout, meta, ["-m", "immediate", "-w", "-t", "60", "stop"], "pg_ctl stop -m immediate")
