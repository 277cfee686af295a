"""Which MySQL server a command works on (the managed instance, or --dsn), and holding it alone.

The managed instance is held by the lock every managed instance has (managed/lock.py). A database
of an existing server is held by named locks (GET_LOCK, exclusive.py), taken by a connection open
for the command's duration: the server releases them however dbio ends, and a second dbio on the
same database is refused at once (unless both are parts of one run)."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

from dbio import parts
from dbio.config import Config
from dbio.engines.mysql import dsn as dsns
from dbio.engines.mysql.engine import MysqlEngine
from dbio.engines.mysql.exclusive import exclusive as database_exclusive
from dbio.engines.mysql.instance.layout import Layout
from dbio.engines.mysql.instance.managed import MysqlInstance
from dbio.managed.lock import exclusive as instance_exclusive


def instance_for(config: Config, notify: Callable[[str], None]) -> MysqlInstance:
    return MysqlInstance(config.instance.data_dir, notify=notify)


def resolve(config: Config, *, purpose: str, sessions: int,
            notify: Callable[[str], None]) -> tuple[MysqlEngine, str, MysqlInstance | None]:
    if not config.connection.embedded:
        return MysqlEngine(), config.connection.dsn or "", None
    instance = instance_for(config, notify)
    conninfo = instance.ensure(config.instance, sessions=sessions, purpose=purpose, dbname=config.connection.dbname)
    return MysqlEngine(), conninfo, instance


@contextmanager
def exclusive(config: Config, command: str, notify: Callable[[str], None]) -> Iterator[None]:
    """Hold the target alone for a command that changes or measures it, or, for a part of one run
    (--part i/N), with that run's other parts only (exclusive.py)."""
    if config.connection.embedded:
        with instance_exclusive(config.instance.data_dir, command):
            yield
        return
    text = config.connection.dsn or ""
    dsn = dsns.parse(text)
    part = parts.of_config(config.run.part, config.run.run_id, config.run.start_at, config.to_dict()["workload"])
    with ExitStack() as held:
        # --dsn through a managed instance's socket: that instance is held too, as its own commands hold it
        # (a run's parts share it: which run they are is the database's locks' to decide)
        if dsn.unix_socket:
            root = Path(dsn.unix_socket).resolve().parent.parent
            if Layout(root).meta_file.exists():
                held.enter_context(instance_exclusive(root, command, shared=part is not None))
        held.enter_context(database_exclusive(text, dsn, command, part))
        yield
