"""The one row of a statement that always returns one (SHOW, a function's value, an aggregate, a
setting): read as present, and said in one line if the server answers none."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.abc import Params
from psycopg.abc import QueryNoTemplate as Query

from dbio.errors import DbioError

_SHOWN = 100  # characters of the statement in the message


def one_row(conn: psycopg.Connection, query: Query, params: Params | None = None) -> tuple[Any, ...]:
    cur = conn.execute(query, params)
    row = cur.fetchone()
    if row is None:
        raise no_row(conn, query)
    return row


async def one_row_async(conn: psycopg.AsyncConnection, query: Query, params: Params | None = None, *,
                        binary: bool = False) -> tuple[Any, ...]:
    cur = await conn.execute(query, params, binary=binary)
    row = await cur.fetchone()
    if row is None:
        raise no_row(conn, query)
    return row


def no_row(conn: psycopg.Connection | psycopg.AsyncConnection, query: Query) -> DbioError:
    return DbioError(f"the server returned no row for a statement that always returns one: {statement(conn, query)}")


def statement(conn: psycopg.Connection | psycopg.AsyncConnection, query: Query) -> str:
    """Its first line that is not a comment (a .sql file opens with what it is for), shortened."""
    text = query.decode(errors="replace") if isinstance(query, bytes) else (
        query if isinstance(query, str) else query.as_string(conn))
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("--")]
    first = lines[0] if lines else text.strip()
    return first if len(first) <= _SHOWN else first[:_SHOWN] + "..."
