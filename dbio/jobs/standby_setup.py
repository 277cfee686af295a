"""After a setup on an embedded instance with standbys: each standby holds the data set the
primary was loaded with (its setup record, replayed, is visible there)."""

from __future__ import annotations

from dbio import target as targets
from dbio.config import Config
from dbio.engines.base import SetupRecord
from dbio.errors import DbioError
from dbio.ui import UI


def confirm(target: targets.Target, config: Config, record: SetupRecord, ui: UI) -> None:
    """Waits until every standby has replayed the primary's WAL, then reads the setup record on each."""
    instance = targets.with_standbys(config, target.instance)
    if instance is None or not instance.standby_count():
        return
    instance.standbys.wait_caught_up(config.connection.dbname)
    engine = target.engine
    for name, role, conninfo in instance.nodes(config.connection.dbname, None):
        if role != "standby":
            continue
        conn = engine.connect(conninfo, application_name="dbio:setup", notify=ui.note)
        try:
            seen = engine.read_setup(conn)
        finally:
            engine.close(conn)
        if seen is None or seen.setup_id != record.setup_id or seen.status != "ready":
            found = "nothing" if seen is None else f"setup {seen.setup_id} ({seen.status})"
            raise DbioError(f"{name} holds {found}, not the primary's setup {record.setup_id}",
                            "run dbio setup again: it makes the standbys again from the primary")
        ui.say(f"{name}: holds setup {record.setup_id}, replayed from the primary")
