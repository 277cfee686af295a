"""One dbio command at a time on a database of an existing MySQL/MariaDB server (--dsn), or the parts
of one run together (--part i/N, dbio/parts.py).

Named locks (GET_LOCK), held by a connection that stays open for the command's duration: the server
releases them however dbio ends. GET_LOCK has no shared mode, so a command alone holds the command
lock, and each part of a run holds two of its own: its slot (its index) and its run's slot (the run's
key, its part count and its index). Whoever comes checks the others' under the gate lock, so that
two arriving at once are decided one after the other."""

from __future__ import annotations

import hashlib
import os
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

from dbio.engines.mysql import dsn as dsns
from dbio.engines.mysql import sqlfiles
from dbio.engines.mysql.connection import Connection, connect
from dbio.errors import UsageError
from dbio.parts import MAX_PARTS, Part

GATE_WAIT = 30  # seconds: every holder keeps the gate for a few statements only
# seconds a lock is waited for before it is taken to be held: a command that has just ended closed its connection,
# but the server ends the session (and frees its locks) on its own thread, a moment later under load (seen: a run
# right after its setup refused, the setup's lock connection still listed)
ENDING_WAIT = 2.0
INSTALL_WAIT = 300  # seconds: another part installing the loop (a procedure per schema) is waited for
T = TypeVar("T")
ALONE_FIX = "wait for it to finish, or stop it; two dbio runs on one database would count each other's I/O"


def lock_name(database: str) -> str:
    return f"dbio:command:{database}"[:64]


def _tag(database: str) -> str:
    """The database in a lock name short enough for a slot's suffix (GET_LOCK names: 64 characters)."""
    return database if len(database) <= 24 else hashlib.sha256(database.encode()).hexdigest()[:16]


def gate_name(database: str) -> str:
    return f"dbio:gate:{_tag(database)}"


def install_name(database: str) -> str:
    return f"dbio:install:{_tag(database)}"


def slot_prefix(database: str) -> str:
    return f"dbio:slot:{_tag(database)}:"


def run_prefix(database: str, part: Part) -> str:
    return f"dbio:part:{_tag(database)}:{part.key}:{part.of}:"


@contextmanager
def exclusive(text: str, dsn: dsns.Dsn, command: str, part: Part | None = None) -> Iterator[None]:
    """Hold the database alone (part None), or with the other parts of the same run only."""
    what = command if part is None else f"{command} part {part.index}/{part.of}"
    conn = connect(text, application_name=f"dbio:lock {what} pid {os.getpid()}")
    try:
        if part is None:
            _alone(conn, dsn)
        else:
            _admit_part(conn, dsn, part)
        yield
    finally:
        conn.close()  # the server releases the locks with the session


def _value(conn: Connection, statement: str, args: tuple) -> Any:
    """The first column of a one-row statement (GET_LOCK, IS_USED_LOCK)."""
    row = conn.one(statement, args)
    return None if row is None else row[0]


def _gate(conn: Connection, dsn: dsns.Dsn) -> None:
    got = _value(conn, "SELECT GET_LOCK(%s, %s)", (gate_name(dsn.database), GATE_WAIT))
    if got != 1:
        holder = _value(conn, "SELECT IS_USED_LOCK(%s)", (gate_name(dsn.database),))
        raise UsageError(f"the database at {dsns.describe(dsn)} is being claimed by another dbio command "
                         f"(server connection {holder}) that does not let go", ALONE_FIX)


def _held(conn: Connection, dsn: dsns.Dsn, part: Part | None) -> list[tuple[int, int, bool]]:
    """(index, holder's connection, a part of this run) of every part holding the database."""
    mine = run_prefix(dsn.database, part) if part is not None else "dbio:none:"
    rows = conn.query(sqlfiles.statement("parts_held.sql"),
                      {"max_parts": MAX_PARTS, "slot": slot_prefix(dsn.database), "mine": mine})
    return [(int(i), int(holder), bool(same)) for i, holder, same in rows]


def _settled(look: Callable[[], T], until: Callable[[T], bool] = lambda found: not found) -> T:
    """What look() finds once it shows nothing held (until), or after ENDING_WAIT: a holder that has just ended is
    gone a moment later, one still running is still there."""
    end = time.monotonic() + ENDING_WAIT
    found = look()
    while not until(found) and time.monotonic() < end:
        time.sleep(0.05)
        found = look()
    return found


def _alone(conn: Connection, dsn: dsns.Dsn) -> None:
    _gate(conn, dsn)
    try:
        got = _value(conn, "SELECT GET_LOCK(%s, %s)", (lock_name(dsn.database), ENDING_WAIT))
        if got != 1:
            holder = _value(conn, "SELECT IS_USED_LOCK(%s)", (lock_name(dsn.database),))
            raise UsageError(f"the database at {dsns.describe(dsn)} is in use by another dbio command "
                             f"(server connection {holder})", ALONE_FIX)
        held = _settled(lambda: _held(conn, dsn, None))
        if held:
            index, holder, _ = held[0]
            raise UsageError(f"the database at {dsns.describe(dsn)} is in use by dbio run part {index} of a run "
                             f"in {len(held)} running part(s) (server connection {holder})", ALONE_FIX)
    finally:
        conn.query("SELECT RELEASE_LOCK(%s)", (gate_name(dsn.database),))


def _admit_part(conn: Connection, dsn: dsns.Dsn, part: Part) -> None:
    """Share the database with the other parts of this run: refused while another command holds it
    alone, while another run's parts hold it, or when this part already runs."""
    where = dsns.describe(dsn)
    _gate(conn, dsn)
    try:
        holder = _settled(lambda: _value(conn, "SELECT IS_USED_LOCK(%s)", (lock_name(dsn.database),)))
        if holder is not None:
            raise UsageError(f"the database at {where} is in use by another dbio command (server connection "
                             f"{holder})", "wait for it to finish, or stop it; only the parts of one run share a "
                             "database")
        held = _held(conn, dsn, part)
        if any(not same for _, _, same in held):  # another run's parts, or the last of a run that just ended
            held = _settled(lambda: _held(conn, dsn, part), until=lambda now: all(same for _, _, same in now))
        other = next(((i, h) for i, h, same in held if not same), None)
        if other is not None:
            raise UsageError(f"the database at {where} is in use by another run's parts: dbio run part {other[0]} "
                             f"(server connection {other[1]})", "give every part of one run the same --start-at, "
                             "--part i/N and workload (or the same --run-id); another run waits until that one ends")
        if any(i == part.index for i, _, _ in held):
            raise UsageError(f"part {part.index}/{part.of} of run {part.run} already runs against {where}",
                             "give each process its own part: --part 1/N to N/N")
        for name in (slot_prefix(dsn.database), run_prefix(dsn.database, part)):
            got = _value(conn, "SELECT GET_LOCK(%s, 0)", (f"{name}{part.index}",))
            if got != 1:  # taken between the check and here by a dbio that does not pass the gate
                raise UsageError(f"part {part.index}/{part.of} of run {part.run} already runs against {where}",
                                 "give each process its own part: --part 1/N to N/N")
    finally:
        conn.query("SELECT RELEASE_LOCK(%s)", (gate_name(dsn.database),))
