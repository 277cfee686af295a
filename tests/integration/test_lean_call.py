"""A statement sent and read through libpq itself (engines/postgres/lean_call.py), on the embedded PostgreSQL: the
same row as psycopg's cursor gives, psycopg's errors, and a connection left idle when its wait is cancelled."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import psycopg
import pytest

from dbio.engines.postgres import lean_call
from dbio.engines.postgres.hist_arrays import arrays_of

pytestmark = pytest.mark.integration

# the slice call's kinds of parameter and of result column, with values at their edges
QUERY = ("SELECT %(i)s::bigint, %(n)s::integer, %(b)s::boolean, %(f)s::double precision, %(j)s::jsonb, "
         "%(f)s::double precision * 2, array_fill(%(n)s::integer, ARRAY[3, 4]), "
         "ARRAY[%(f)s::double precision, 1.5]::double precision[], to_timestamp(%(f)s::double precision), "
         "%(i)s::bigint IS NULL")
PARAMS = [
    {"i": 1, "n": 7, "b": True, "f": 0.1, "j": '{"a": [1, 2.5, null], "t": "2026-12-02T15:00:00+00:00"}'},
    {"i": -(2 ** 63), "n": -(2 ** 31), "b": False, "f": 1e-300, "j": "{}"},
    {"i": 2 ** 63 - 1, "n": 2 ** 31 - 1, "b": None, "f": 1796225596.3134119, "j": None},
    {"i": None, "n": 0, "b": True, "f": -0.0, "j": '"é ü"'},
    {"i": 5, "n": 3, "b": False, "f": 2.0 / 3.0, "j": "[]"},
]
SPECIAL = [math.inf, -math.inf]  # no timestamp of NaN: its row is asked on its own


def _same(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray) or isinstance(g, np.ndarray):
            assert isinstance(g, type(w)) and g.dtype == w.dtype and (g == w).all()
        else:
            assert type(g) is type(w) and (g == w or (g != g and w != w)), (g, w)


async def _both(conninfo: str, query: str, params: dict, binary: bool):
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as cursor_side, \
            await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as lean_side:
        arrays_of(cursor_side)
        arrays_of(lean_side)
        want = await (await cursor_side.execute(query, params, binary=binary)).fetchone()
        got = [await lean_call.one_row(lean_side, query, params, binary=binary) for _ in range(2)]  # prepared once
        return want, got


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("params", PARAMS)
def test_the_row_is_the_cursors(instance, params, binary):
    want, got = asyncio.run(_both(instance.conninfo("postgres"), QUERY, params, binary))
    for row in got:
        _same(row, want)


@pytest.mark.parametrize("value", [*SPECIAL, math.nan])
def test_infinities_and_nan_are_sent_as_such(instance, value):
    query = "SELECT %(f)s::double precision, %(f)s::double precision = 'NaN'::double precision"
    want, got = asyncio.run(_both(instance.conninfo("postgres"), query, {"f": value}, True))
    for row in got:
        _same(row, want)


def test_no_row_is_none(instance):
    async def go():
        async with await psycopg.AsyncConnection.connect(instance.conninfo("postgres"), autocommit=True) as conn:
            return await lean_call.one_row(conn, "SELECT 1 WHERE %(x)s::integer = 2", {"x": 1})

    assert asyncio.run(go()) is None


def test_a_server_error_is_psycopgs_class_and_the_connection_goes_on(instance):
    async def go():
        async with await psycopg.AsyncConnection.connect(instance.conninfo("postgres"), autocommit=True) as conn:
            with pytest.raises(psycopg.errors.DivisionByZero):
                await lean_call.one_row(conn, "SELECT 1 / %(x)s::integer", {"x": 0})
            after = await lean_call.one_row(conn, "SELECT 1 / %(x)s::integer", {"x": 1})
            by_cursor = await (await conn.execute("SELECT 2")).fetchone()
            return after, by_cursor

    assert asyncio.run(go()) == ((1,), (2,))


def test_a_cancel_request_ends_the_statement_as_query_canceled(instance):
    """dbio's stop: the server asked to cancel while the session waits (Stopping.cancel_running)."""
    async def go():
        async with await psycopg.AsyncConnection.connect(instance.conninfo("postgres"), autocommit=True) as conn:
            call = asyncio.ensure_future(lean_call.one_row(conn, "SELECT pg_sleep(%(s)s::float8)", {"s": 30.0}))
            await asyncio.sleep(0.5)
            await conn.cancel_safe(timeout=5)
            with pytest.raises(psycopg.errors.QueryCanceled):
                await asyncio.wait_for(call, 10)
            return await (await conn.execute("SELECT 3")).fetchone()

    assert asyncio.run(go()) == (3,)


def test_a_cancelled_wait_leaves_the_connection_idle(instance):
    async def go():
        async with await psycopg.AsyncConnection.connect(instance.conninfo("postgres"), autocommit=True) as conn:
            call = asyncio.ensure_future(lean_call.one_row(conn, "SELECT pg_sleep(%(s)s::float8)", {"s": 30.0}))
            await asyncio.sleep(0.5)
            began = asyncio.get_running_loop().time()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            took = asyncio.get_running_loop().time() - began
            status = conn.pgconn.transaction_status
            return took, status, await (await conn.execute("SELECT 4")).fetchone()

    took, status, row = asyncio.run(go())
    assert took < 10 and status == psycopg.pq.TransactionStatus.IDLE and row == (4,)


def test_a_closed_connection_is_psycopgs_operational_error(instance):
    async def go():
        conn = await psycopg.AsyncConnection.connect(instance.conninfo("postgres"), autocommit=True)
        await lean_call.one_row(conn, "SELECT %(x)s::integer", {"x": 1})
        await conn.close()
        with pytest.raises(psycopg.OperationalError):
            await lean_call.one_row(conn, "SELECT %(x)s::integer", {"x": 1})

    asyncio.run(go())


def test_a_message_between_calls_is_not_spun_on_and_the_next_call_reads_its_own_row(instance):
    """The socket stays watched from one call to the next: a notification arriving while no call waits makes it
    readable, and the loop must not wake again and again for it (the watch stops until the next call)."""
    async def go():
        conninfo = instance.conninfo("postgres")
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn, \
                await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as other:
            await conn.execute("LISTEN dbio_lean_test")
            assert await lean_call.one_row(conn, "SELECT %(x)s::integer", {"x": 1}) == (1,)
            await other.execute("NOTIFY dbio_lean_test, 'between calls'")
            loop, wakes = asyncio.get_running_loop(), [0]
            process = loop._process_events  # type: ignore[attr-defined]  # each wake-up of the loop with events

            def counted(events):
                wakes[0] += len(events)
                return process(events)

            loop._process_events = counted  # type: ignore[attr-defined]
            try:
                await asyncio.sleep(0.5)
            finally:
                loop._process_events = process  # type: ignore[attr-defined]
            row = await lean_call.one_row(conn, "SELECT %(x)s::integer", {"x": 2})
            return wakes[0], row

    wakes, row = asyncio.run(go())
    assert wakes <= 2 and row == (2,)  # one wake-up for the notification, not one per loop turn


def test_a_closed_connections_number_taken_by_another_socket_is_left_to_it(instance):
    """A connection closed before its watch is (psycopg's own close, then engine.aclose): the next connection may
    have been given its socket's number by then, and neither the loop's watch nor its closing may touch that
    socket (the watch has a descriptor of its own)."""
    from dbio.engines.postgres.engine import PostgresEngine

    async def go():
        conninfo = instance.conninfo("postgres")
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
        await lean_call.one_row(conn, "SELECT %(x)s::integer", {"x": 1})
        number = conn.pgconn.socket
        await conn.close()  # the watch is left as it was
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as after:
            reused = after.pgconn.socket == number
            await PostgresEngine().aclose(conn)  # closes the watch now
            lean = await asyncio.wait_for(lean_call.one_row(after, "SELECT pg_sleep(0.1), %(x)s::integer", {"x": 6}),
                                          10)
            slow = await asyncio.wait_for((await after.execute("SELECT pg_sleep(0.1), 5")).fetchone(), 10)
        return reused, lean[1], slow[1]

    assert asyncio.run(go()) == (True, 6, 5)


@pytest.mark.parametrize("why", ["none left", "half used"])
def test_with_few_descriptors_left_the_call_waits_as_before(instance, monkeypatch, why):
    """No watch where a duplicate would take descriptors the run's files and other sockets need."""
    asked = []
    dup = lean_call.os.dup

    def no_more(fd):
        asked.append(fd)
        raise OSError(24, "Too many open files")

    def counted(fd):
        asked.append(fd)
        return dup(fd)

    if why == "none left":
        monkeypatch.setattr(lean_call.os, "dup", no_more)
    else:
        monkeypatch.setattr(lean_call.os, "dup", counted)
        monkeypatch.setattr(lean_call.resource, "getrlimit", lambda what: (8, 8))  # any descriptor is past half

    async def go():
        async with await psycopg.AsyncConnection.connect(instance.conninfo("postgres"), autocommit=True) as conn:
            rows = [await lean_call.one_row(conn, "SELECT pg_sleep(0.05), %(x)s::integer", {"x": x}) for x in (1, 2)]
            return rows, lean_call._WATCHES.get(conn)

    rows, watch = asyncio.run(go())
    assert [row[1] for row in rows] == [1, 2] and watch is None
    assert len(asked) == 1  # refused once, not asked again at the next call


def test_engine_close_closes_the_watch_with_the_connection(instance):
    from dbio.engines.postgres.engine import PostgresEngine

    async def go():
        conn = await psycopg.AsyncConnection.connect(instance.conninfo("postgres"), autocommit=True)
        await lean_call.one_row(conn, "SELECT pg_sleep(0.05), %(x)s::integer", {"x": 1})
        watch = lean_call._WATCHES[conn]
        fd = watch.fd
        await PostgresEngine().aclose(conn)
        return fd, watch.fd, conn in lean_call._WATCHES

    fd, after, kept = asyncio.run(go())
    assert fd >= 0 and after == -1 and not kept
