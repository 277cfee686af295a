"""One statement a connection runs again and again (a session's slice call), sent and read through libpq itself:
prepared once, its parameters as text, its row read by the connection's own loaders.

psycopg's cursor costs about 0.3 ms of the client's CPU for each execute on this 2-core host (a cursor, the
query's conversion, the prepared-statement bookkeeping, its generators); at 64 sessions, each returning every
second, that was most of dbio's own measuring. This path sends the same prepared statement and loads the same
row with the same loaders (engines/postgres/hist_arrays.py's included), for less than half of it. The errors are
psycopg's: a server error is the psycopg.errors class of its SQLSTATE, a broken connection psycopg's
OperationalError; a wait cancelled (the run stopping) cancels the statement on the server, as psycopg does, so the
connection is left idle for what comes next (a flush, its close).
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import resource
import weakref
from typing import Any, Sequence

import psycopg
from psycopg import pq
from psycopg.adapt import Transformer

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_CANCEL_WAIT = 5.0  # seconds a cancelled wait gives the server to take the cancel (psycopg's own)


def numbered(query: str) -> tuple[bytes, list[str]]:
    """The query with each %(name)s as $n (a name used twice is one parameter), and the names in $n's order (pure).
    Refused: a % otherwise (a literal, an operator: psycopg would read it as a placeholder), and a placeholder
    without a cast (its type would be the server's guess, where psycopg's cursor types it by the Python value)."""
    names: list[str] = []
    if re.search(r"%\(\w+\)s(?!::)", query):
        raise ValueError("a %(name)s placeholder without a cast (::type)")

    def number(match: re.Match) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    text = _PLACEHOLDER.sub(number, query)
    if "%" in text:
        raise ValueError("a % that is not a %(name)s placeholder")
    return text.encode(), names


def text_value(value: Any) -> bytes | None:
    """A parameter as PostgreSQL's text input reads it (pure): None is NULL; a float exactly (repr is the
    shortest string that reads back to the same double), its infinities and NaN by PostgreSQL's names."""
    if value is None:
        return None
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, int):
        return str(value).encode()
    if isinstance(value, float):
        if math.isnan(value):
            return b"NaN"
        if math.isinf(value):
            return b"Infinity" if value > 0 else b"-Infinity"
        return repr(value).encode()
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"a parameter of type {type(value).__name__} is not sent as text here")


class _Prepared:
    """A connection's statement, prepared under a name of dbio's (psycopg's own are _pg3_*)."""

    def __init__(self, conn: psycopg.AsyncConnection, query: str):
        self.query, self.names = numbered(query)
        self.name = b"dbio_lean_%d" % len(_STATEMENTS.setdefault(conn, {}))
        self.ready = False
        self.loads = Transformer(conn)  # the connection's adapters: its loaders, hist_arrays' among them


_STATEMENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # connection -> {query: _Prepared}


async def one_row(conn: psycopg.AsyncConnection, query: str, params: dict[str, Any], *,
                  binary: bool = False) -> tuple[Any, ...] | None:
    """The first row of the statement (None: it returned none), as conn.execute(query, params, binary=binary)
    .fetchone() gives it, for a query whose placeholders are %(name)s with a cast each (their types are the casts')."""
    statements = _STATEMENTS.setdefault(conn, {})
    prepared = statements.get(query)
    if prepared is None:
        prepared = statements[query] = _Prepared(conn, query)
    async with conn.lock:
        pgconn = conn.pgconn
        if not prepared.ready:
            pgconn.send_prepare(prepared.name, prepared.query)
            _check(conn, await _results(conn))
            prepared.ready = True
        pgconn.send_query_prepared(prepared.name, [text_value(params[n]) for n in prepared.names],
                                   result_format=pq.Format.BINARY if binary else pq.Format.TEXT)
        result = _check(conn, await _results(conn))
    if result.ntuples == 0:
        return None
    prepared.loads.set_pgresult(result)
    return prepared.loads.load_row(0, tuple)


def _check(conn: psycopg.AsyncConnection, results: Sequence[pq.abc.PGresult]) -> pq.abc.PGresult:
    """The statement's one result; a server error raised as psycopg's class for its SQLSTATE."""
    for result in results:
        if result.status == pq.ExecStatus.FATAL_ERROR:
            raise psycopg.errors.error_from_result(result, encoding=conn.info.encoding)
    if len(results) != 1 or results[0].status not in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
        raise psycopg.InterfaceError(f"unexpected results: {[pq.ExecStatus(r.status).name for r in results]}")
    return results[0]


async def _results(conn: psycopg.AsyncConnection) -> list[pq.abc.PGresult]:
    """Every result of the statement sent, waiting on the socket in the loop; a cancelled wait cancels the statement
    and waits for its end before it is raised again."""
    pgconn = conn.pgconn
    try:
        await _until_idle(conn)
    except (asyncio.CancelledError, KeyboardInterrupt):
        if pgconn.transaction_status == pq.TransactionStatus.ACTIVE:
            try:
                await conn.cancel_safe(timeout=_CANCEL_WAIT)
                await asyncio.wait_for(_until_idle(conn), _CANCEL_WAIT)
                while pgconn.get_result() is not None:
                    pass
            except Exception:
                pass  # the connection is left as it is: whatever uses it next says so
        raise
    out = []
    while (result := pgconn.get_result()) is not None:
        out.append(result)
    return out


async def _until_idle(conn: psycopg.AsyncConnection) -> None:
    """Until the whole answer is in: what is sent flushed, then the socket read as it becomes readable."""
    pgconn = conn.pgconn
    loop = asyncio.get_running_loop()
    try:
        while pgconn.flush():  # a statement larger than the socket's buffer (never a slice call's)
            await _ready(loop, pgconn.socket, write=True)
        pgconn.consume_input()
        if pgconn.is_busy():
            watch = _watch(conn, loop)
            while pgconn.is_busy():
                await (watch.readable() if watch is not None else _ready(loop, pgconn.socket, write=False))
                pgconn.consume_input()
    except OSError as exc:
        raise psycopg.OperationalError("connection socket closed") from exc


async def _ready(loop: asyncio.AbstractEventLoop, fd: int, *, write: bool) -> None:
    waiter = loop.create_future()

    def ready() -> None:
        if not waiter.done():
            waiter.set_result(None)

    (loop.add_writer if write else loop.add_reader)(fd, ready)
    try:
        await waiter
    finally:
        (loop.remove_writer if write else loop.remove_reader)(fd)


class _Watch:
    """A connection's socket as the loop watches it from one call to the next: registered once, where adding and
    removing a reader for each call was a quarter of a call's client CPU (bench/bench_lean_call.py: 43 against 34
    us a call, 64 connections; 64 sessions call every second).
    It watches a duplicate of the socket's descriptor, its own: once the connection is closed no other socket can
    be given that number while the loop still has it (a reader left on a reused number would take the events of
    the socket that got it). Readable while no call waits (a notice, the server's end), it stops watching until
    the next call, so that the loop never spins on it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int):
        self.loop, self.fd = loop, fd
        self.waiter: asyncio.Future | None = None
        self.watching = False

    async def readable(self) -> None:
        self.waiter = self.loop.create_future()
        if not self.watching:
            self.loop.add_reader(self.fd, self._ready)
            self.watching = True
        try:
            await self.waiter
        finally:
            self.waiter = None

    def _ready(self) -> None:
        if self.waiter is None:
            self._unwatch()
        elif not self.waiter.done():
            self.waiter.set_result(None)

    def _unwatch(self) -> None:
        if self.watching and not self.loop.is_closed():
            self.loop.remove_reader(self.fd)
        self.watching = False

    def close(self) -> None:
        self._unwatch()
        os.close(self.fd)
        self.fd = -1  # closed: its number may be another file's now


# connection -> its _Watch, or None: refused one (few descriptors left), it waits as before and is not asked again.
# Its statements' loaders hold the connection (_STATEMENTS), so an entry lives until forget().
_WATCHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _watch(conn: psycopg.AsyncConnection, loop: asyncio.AbstractEventLoop) -> _Watch | None:
    """The connection's watch in this loop (a new one for a new loop); None when the process had used half the
    descriptors its limit allows, or had none left, as its first call waited (the call then waits as it did
    before, registering its reader for itself)."""
    if conn in _WATCHES:
        watch = _WATCHES[conn]
        if watch is None or watch.loop is loop:
            return watch
        watch.close()
    _WATCHES[conn] = watch = _new_watch(loop, conn.pgconn.socket)
    return watch


def _new_watch(loop: asyncio.AbstractEventLoop, socket: int) -> _Watch | None:
    try:
        fd = os.dup(socket)
    except OSError:
        return None
    if fd >= resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 2:  # descriptors are given lowest first: half in use
        os.close(fd)  # the rest is kept for the run's files and sockets (a 512-session run under a limit of 1,024)
        return None
    return _Watch(loop, fd)


def forget(conn: psycopg.AsyncConnection) -> None:
    """Before the connection is closed (engine.aclose): its watch's descriptor closed with it, and its statements
    let go (their loaders hold the connection, which a weak key alone would never let be collected)."""
    _STATEMENTS.pop(conn, None)
    watch = _WATCHES.pop(conn, None)
    if watch is not None:
        watch.close()
