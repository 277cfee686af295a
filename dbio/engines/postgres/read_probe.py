"""The read probe's PostgreSQL side: single-row lookups timed by the engine's own I/O timer.

PostgreSQL keeps no per-read latency, only sums (pg_stat_io's read_time). EXPLAIN ANALYZE with BUFFERS
and track_io_timing gives, per statement, the blocks read from outside shared buffers and the time spent
in those reads: a statement that read exactly one block gives that one read's latency, as the backend
saw it (the OS page cache included, when the instance does not read with direct I/O).
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from dbio.engines.base import ProbeRead
from dbio.engines.postgres import catalog, server, sqlfiles, workload
from dbio.engines.postgres.rows import one_row_async
from dbio.errors import DbioError

PROBE_NAME = "dbio:probe"  # its application_name: dbio's own connection, not one of the run's sessions


def parse_explain(doc: Any) -> ProbeRead:
    """The blocks a statement read and their read time (pure), from EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON).

    The top plan node's buffers include its children's. PostgreSQL 17 split "I/O Read Time" into shared,
    local and temp ("Shared I/O Read Time"); 15-16 have only "I/O Read Time" (shared and local, dbio
    reads no local buffers). No time key: the server did not time it (track_io_timing off)."""
    if isinstance(doc, str):
        import json

        doc = json.loads(doc)
    plan = doc[0]["Plan"] if isinstance(doc, list) else doc["Plan"]
    blocks = int(plan.get("Shared Read Blocks", 0))
    ms = plan.get("Shared I/O Read Time", plan.get("I/O Read Time"))
    return ProbeRead(blocks_read=blocks, read_us=None if ms is None else float(ms) * 1000.0)


async def connect(conninfo: str, access_path: str,
                  application_name: str = PROBE_NAME) -> tuple[psycopg.AsyncConnection, int]:
    """The probe's connection and its backend's pid; DbioError (why) when it cannot time reads."""
    conn = await server.aconnect(conninfo, application_name=application_name)
    settings = workload.session_settings(1, access_path)
    try:
        *_, timed, pid = await one_row_async(conn, sqlfiles.text("read_probe_init.sql"),
                                             {k: v for k, v in settings.items() if k != "search_path"})
        if not timed:  # off server-wide: on in this session, where the role may
            await conn.execute(sqlfiles.text("read_probe_timing.sql"))
    except psycopg.errors.InsufficientPrivilege:
        await conn.close()
        raise DbioError("track_io_timing is off and this role may not SET it in its session (a superuser, or a "
                        "role granted SET ON PARAMETER track_io_timing, may)") from None
    except BaseException:
        await conn.close()
        raise
    return conn, int(pid)


async def read_one(conn: psycopg.AsyncConnection, schema_index: int, key: int) -> ProbeRead:
    query = sqlfiles.composed("read_probe.sql", table=sql.Identifier(catalog.data_schema(schema_index),
                                                                     catalog.DATA_TABLE),
                              key=sql.Literal(int(key)))
    return parse_explain((await one_row_async(conn, query))[0])
