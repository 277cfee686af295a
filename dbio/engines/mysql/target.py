"""Which MySQL server a command works on (the managed instance, or --dsn), and holding it alone.

The managed instance is held by the lock every managed instance has (managed/lock.py). A database
of an existing server is held by a named lock (GET_LOCK), taken by a connection open for the
command's duration: the server releases it however dbio ends, and a second dbio on the same
database is refused at once."""

from __future__ import annotations

import os
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

from dbio.config import Config
from dbio.engines.mysql import dsn as dsns
from dbio.engines.mysql.connection import connect
from dbio.engines.mysql.engine import MysqlEngine
from dbio.engines.mysql.instance.layout import Layout
from dbio.engines.mysql.instance.managed import MysqlInstance
from dbio.errors import UsageError
from dbio.managed.lock import exclusive as instance_exclusive


def lock_name(database: str) -> str:
    return f"dbio:command:{database}"[:64]


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
    if config.run.part is not None:  # its sessions' own I/O is not counted apart yet (performance_schema)
        raise UsageError("--part: the mysql engine runs no run in parts yet",
                         "run one dbio process against the server, or use the postgres engine")
    if config.connection.embedded:
        with instance_exclusive(config.instance.data_dir, command):
            yield
        return
    text = config.connection.dsn or ""
    dsn = dsns.parse(text)
    with ExitStack() as held:
        # --dsn through a managed instance's socket: that instance is held too, as its own commands hold it
        if dsn.unix_socket:
            root = Path(dsn.unix_socket).resolve().parent.parent
            if Layout(root).meta_file.exists():
                held.enter_context(instance_exclusive(root, command))
        held.enter_context(_database_lock(text, dsn, command))
        yield


@contextmanager
def _database_lock(text: str, dsn: dsns.Dsn, command: str) -> Iterator[None]:
    conn = connect(text, application_name=f"dbio:lock {command} pid {os.getpid()}")
    try:
        got, = conn.one("SELECT GET_LOCK(%s, 0)", (lock_name(dsn.database),))
        if got != 1:
            holder, = conn.one("SELECT IS_USED_LOCK(%s)", (lock_name(dsn.database),))
            raise UsageError(f"the database at {dsns.describe(dsn)} is in use by another dbio command "
                             f"(server connection {holder})",
                             "wait for it to finish, or stop it; two dbio runs on one database would count "
                             "each other's I/O")
        yield
    finally:
        conn.close()  # the server releases the lock with the session
