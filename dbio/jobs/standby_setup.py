"""After a setup on an embedded instance with members: each standby holds the data set the
primary was loaded with (its setup record, replayed, is visible there), and so does each node of a
multi-writer cluster loaded through its first node."""

from __future__ import annotations

from dbio import target as targets
from dbio.config import Config
from dbio.engines.base import SetupRecord
from dbio.errors import DbioError
from dbio.ui import UI


def confirm(target: targets.Target, config: Config, record: SetupRecord, ui: UI) -> None:
    """Waits until every other member has applied what the first wrote, then reads the setup record on each."""
    instance = targets.with_standbys(config, target.instance)
    if instance is None or not instance.standby_count():
        return
    instance.standbys.wait_caught_up(config.connection.dbname)
    engine = target.engine
    members = instance.nodes(config.connection.dbname, None)
    loaded_through = members[0][0]
    for name, role, conninfo in members[1:]:
        conn = engine.connect(conninfo, application_name="dbio:setup", notify=ui.note)
        try:
            seen = engine.read_setup(conn)
        finally:
            engine.close(conn)
        if seen is None or seen.setup_id != record.setup_id or seen.status != "ready":
            found = "nothing" if seen is None else f"setup {seen.setup_id} ({seen.status})"
            raise DbioError(f"{name} holds {found}, not {loaded_through}'s setup {record.setup_id}",
                            "run dbio setup again: it makes the standbys again from the primary" if role == "standby"
                            else "see the nodes' server logs, then run dbio setup again")
        how = "replayed from the primary" if role == "standby" else f"replicated by {loaded_through}"
        ui.say(f"{name}: holds setup {record.setup_id}, {how}")
