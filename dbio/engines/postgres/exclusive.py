"""One dbio command at a time on a database of an existing server (--dsn).

A session-level advisory lock, held by a connection that stays open for the command's duration:
the server releases it whatever way dbio ends, and a second dbio is refused at once."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from dbio.engines.postgres import sqlfiles
from dbio.engines.postgres.rows import one_row
from dbio.engines.postgres.server import connect, describe
from dbio.errors import UsageError
from dbio.parts import FIRST_RUN_KEY, Part

# pg_try_advisory_lock(int, int): the first key is "dbio" in ASCII, the second dbio's command lock.
LOCK_KEYS = (0x6462696F, 1)


# (LOCK_KEYS[0], GATE): held for a moment while a part checks which run holds the database, so two
# runs' parts arriving at once are decided one after the other; (LOCK_KEYS[0], INSTALL): while the loop
# is (re)installed. A run's parts each hold (LOCK_KEYS[0], its run's key) shared, keys >= FIRST_RUN_KEY.
GATE, INSTALL = 2, 3


@contextmanager
def exclusive(conninfo: str, command: str, notify: Callable[[str], None], part: Part | None = None) -> Iterator[None]:
    """Hold the database alone (part None), or with the other parts of the same run only."""
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    what = command if part is None else f"{command} part {part.index}/{part.of} of {part.run}"
    conn = connect(conninfo, application_name=f"dbio:lock {what} pid {os.getpid()} since {since}"[:63],
                   notify=notify)  # the command's first connection: it waits for a recovering server
    try:
        if part is not None:
            _admit_part(conn, conninfo, part)
            yield
            return
        got = one_row(conn, "SELECT pg_try_advisory_lock(%s, %s)", LOCK_KEYS)[0]
        if not got:
            row = conn.execute(sqlfiles.text("lock_holder.sql"), LOCK_KEYS).fetchone()
            holder = _holder(row)
            raise UsageError(f"the database at {describe(conninfo)} is in use by {holder}",
                             "wait for it to finish, or stop it; two dbio runs on one database would count "
                             "each other's I/O")
        yield
    finally:
        conn.close()  # the server releases the lock with the session


def _admit_part(conn: Any, conninfo: str, part: Part) -> None:
    """Share the database with the other parts of this run: refused while another command holds it
    alone, while another run's parts hold it, or when this part already runs (the session-level locks
    taken here stay until the connection closes)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_KEYS[0], GATE))
        if not one_row(conn, "SELECT pg_try_advisory_lock_shared(%s, %s)", LOCK_KEYS)[0]:
            holder = _holder(conn.execute(sqlfiles.text("lock_holder.sql"), LOCK_KEYS).fetchone())
            raise UsageError(f"the database at {describe(conninfo)} is in use by {holder}",
                             "wait for it to finish, or stop it; only the parts of one run share a database")
        other = conn.execute(sqlfiles.text("lock_other_run.sql"),
                             {"k1": LOCK_KEYS[0], "key": part.key, "first": FIRST_RUN_KEY}).fetchone()
        if other is not None:
            raise UsageError(f"the database at {describe(conninfo)} is in use by another run's parts: "
                             f"{_holder(other)}", "give every part of one run the same --start-at, --part i/N and "
                             "workload (or the same --run-id); another run waits until that one ends")
        if not one_row(conn, "SELECT pg_try_advisory_lock(%s, %s)", (part.key, part.index))[0]:
            raise UsageError(f"part {part.index}/{part.of} of run {part.run} already runs against "
                             f"{describe(conninfo)}", "give each process its own part: --part 1/N to N/N")
        conn.execute("SELECT pg_advisory_lock_shared(%s, %s)", (LOCK_KEYS[0], part.key))


def _holder(row: tuple | None) -> str:
    """Who holds the lock, from its application_name (visible to the same role or pg_read_all_stats)."""
    if row is None:
        return "another dbio command"
    application_name, pid = row
    if application_name and application_name.startswith("dbio:lock "):
        return "dbio " + application_name.removeprefix("dbio:lock ") + f" (server pid {pid})"
    return f"another dbio command (server pid {pid})"
