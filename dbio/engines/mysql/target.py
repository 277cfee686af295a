"""Which MySQL server a command works on (--dsn only in this first step), and holding its database alone.

A named lock (GET_LOCK), held by a connection open for the command's duration: the server
releases it however dbio ends, and a second dbio on the same database is refused at once."""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Callable, Iterator

from dbio.config import Config
from dbio.engines.mysql import dsn as dsns
from dbio.engines.mysql.connection import connect
from dbio.engines.mysql.engine import MysqlEngine
from dbio.errors import UsageError


def lock_name(database: str) -> str:
    return f"dbio:command:{database}"[:64]


def resolve(config: Config, *, purpose: str, sessions: int,
            notify: Callable[[str], None]) -> tuple[MysqlEngine, str, None]:
    if config.connection.embedded:
        raise UsageError("the mysql engine works on an existing server for now", "give --dsn mysql://user@host/dbname")
    return MysqlEngine(), config.connection.dsn or "", None


@contextmanager
def exclusive(config: Config, command: str, notify: Callable[[str], None]) -> Iterator[None]:
    if config.connection.embedded:
        raise UsageError("the mysql engine works on an existing server for now", "give --dsn mysql://user@host/dbname")
    text = config.connection.dsn or ""
    dsn = dsns.parse(text)
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
