"""A statement that always returns a row, on the embedded PostgreSQL: read as present, and when the server
answers none, said in one line naming it; a run whose control row was removed before its release is told so."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from dbio.engines.postgres import workload
from dbio.engines.postgres.rows import one_row, one_row_async
from dbio.errors import DbioError

pytestmark = pytest.mark.integration


def test_the_row_is_read_and_none_is_said_naming_the_statement(instance):
    with instance.connect() as conn:
        assert one_row(conn, "SELECT 1, %s::text", ("two",)) == (1, "two")
        with pytest.raises(DbioError, match=r"no row for a statement that always returns one: SELECT 1 WHERE false$"):
            one_row(conn, "-- what it is for\nSELECT 1 WHERE false")

    async def none_async() -> None:
        async with await psycopg.AsyncConnection.connect(instance.conninfo("postgres"), autocommit=True) as conn:
            assert (await one_row_async(conn, "SELECT 3"))[0] == 3
            await one_row_async(conn, "SELECT 1 WHERE false")

    with pytest.raises(DbioError, match="SELECT 1 WHERE false"):
        asyncio.run(none_async())


def test_a_release_whose_control_row_is_gone_says_so(instance, loaded_db):
    run_id = 987_654_321  # never prepared: as if its row were deleted after prepare_run
    with instance.connect(loaded_db) as conn:
        with pytest.raises(DbioError, match=f"run {run_id} cannot start: its row in dbio.run_control was removed"):
            workload.release(conn, run_id, warmup=0, run_time=1)
