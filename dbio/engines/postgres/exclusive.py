"""One dbio command at a time on a database of an existing server (--dsn).

A session-level advisory lock, held by a connection that stays open for the command's duration:
the server releases it whatever way dbio ends, and a second dbio is refused at once."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from dbio.engines.postgres import sqlfiles
from dbio.engines.postgres.server import connect, describe
from dbio.errors import UsageError

# pg_try_advisory_lock(int, int): the first key is "dbio" in ASCII, the second dbio's command lock.
LOCK_KEYS = (0x6462696F, 1)


@contextmanager
def exclusive(conninfo: str, command: str, notify: Callable[[str], None]) -> Iterator[None]:
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    conn = connect(conninfo, application_name=f"dbio:lock {command} pid {os.getpid()} since {since}"[:63],
                   notify=notify)  # the command's first connection: it waits for a recovering server
    try:
        got = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", LOCK_KEYS).fetchone()[0]
        if not got:
            row = conn.execute(sqlfiles.text("lock_holder.sql"), LOCK_KEYS).fetchone()
            holder = _holder(row)
            raise UsageError(f"the database at {describe(conninfo)} is in use by {holder}",
                             "wait for it to finish, or stop it; two dbio runs on one database would count "
                             "each other's I/O")
        yield
    finally:
        conn.close()  # the server releases the lock with the session


def _holder(row: tuple | None) -> str:
    """Who holds the lock, from its application_name (visible to the same role or pg_read_all_stats)."""
    if row is None:
        return "another dbio command"
    application_name, pid = row
    if application_name and application_name.startswith("dbio:lock "):
        return "dbio " + application_name.removeprefix("dbio:lock ") + f" (server pid {pid})"
    return f"another dbio command (server pid {pid})"
