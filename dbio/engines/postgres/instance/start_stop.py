"""The embedded server started (its settings written, then pg_ctl start) and stopped (fast, then
immediate; the standbys first), each program run as the server user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbio import trust
from dbio.engines.postgres.instance import as_server, processes, settings
from dbio.errors import DbioError

if TYPE_CHECKING:
    from dbio.engines.postgres.instance.embedded import EmbeddedInstance

START_TIMEOUT = 120  # seconds; a server recovering after a crash may need a while


def start(instance: EmbeddedInstance, profile: settings.Profile) -> None:
    meta = instance.meta()
    layout = instance.layout
    user = as_server.server_user(meta)
    pg_ctl = as_server.trusted_tool(meta, "pg_ctl")
    processes.wait_for_crashed_server(layout.pgdata, processes.lock_file_pid(layout.pgdata), instance.notify)
    bounded = profile.as_dict().get("max_wal_size")
    if profile.wal_bounded and bounded != meta.settings.get("max_wal_size"):
        instance.notify(f"max_wal_size set to {bounded} so that WAL cannot fill the filesystem of "
                        f"{instance.wal_location()} "
                        f"({instance.wal_budget() >> 20} MiB free for it)")
    trust.write_for(layout.settings_file, settings.render(profile), user.uid, user.gid)
    instance.run_as_server(user, [pg_ctl, "-D", str(layout.pgdata), "-l", str(layout.log_file),
                                  "-w", "-t", str(START_TIMEOUT), "start"], what="pg_ctl start")
    meta.settings = profile.as_dict()
    meta.purpose = profile.purpose
    meta.write(layout.meta_file)


def stop(instance: EmbeddedInstance, *, quiet: bool = False) -> bool:
    """Fast shutdown (immediate if that does not finish), the standbys first; False when none was running."""
    meta = instance.meta()
    stopped = instance.standbys.stop_all() if instance.standby_count() else []
    if stopped and not quiet:
        instance.notify(f"stopped the standbys ({', '.join(stopped)})")
    if not instance.is_running():
        return bool(stopped)
    user = as_server.server_user(meta)
    pg_ctl = as_server.trusted_tool(meta, "pg_ctl")
    pgdata = str(instance.layout.pgdata)
    try:
        instance.run_as_server(user, [pg_ctl, "-D", pgdata, "-m", "fast", "-w", "-t", "60", "stop"],
                               what="pg_ctl stop")
    except DbioError:
        instance.run_as_server(user, [pg_ctl, "-D", pgdata, "-m", "immediate", "-w", "-t", "30", "stop"],
                               what="pg_ctl stop -m immediate")
    if not quiet:
        instance.notify("stopped the embedded server")
    return True


def crash(instance: EmbeddedInstance) -> None:
    """Stop the server as a crash would (pg_ctl stop -m immediate): no shutdown checkpoint, so the
    next start replays the WAL written since the last one (dbio ops recovery)."""
    meta = instance.meta()
    instance.run_as_server(as_server.server_user(meta), [as_server.trusted_tool(meta, "pg_ctl"), "-D",
                                                         str(instance.layout.pgdata), "-m", "immediate", "-w",
                                                         "-t", "60", "stop"], what="pg_ctl stop -m immediate")
