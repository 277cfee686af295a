"""The read probe's PostgreSQL side: single-row lookups timed by the engine's own I/O timer.

PostgreSQL keeps no per-read latency, only sums (pg_stat_io's read_time). EXPLAIN ANALYZE with BUFFERS
and track_io_timing gives, per plan node, the blocks read from outside shared buffers and the time spent
in those reads: a lookup that read exactly one block gives that one read's latency, as the backend
saw it (the OS page cache included, when the instance does not read with direct I/O).

A second's lookups are one statement, prepared once with a generic plan: each lookup a branch of a
UNION ALL (an Append node), whose own buffers and read time are that lookup's. One round trip, one
executor start and no planning a second, where a statement per lookup cost the server about five times
as much (bench/bench_observer.py).
"""

from __future__ import annotations

from typing import Any, Sequence

import psycopg
from psycopg import sql

from dbio.engines.base import ProbeRead
from dbio.engines.postgres import catalog, server, sqlfiles, workload
from dbio.engines.postgres.rows import one_row_async
from dbio.errors import DbioError

PROBE_NAME = "dbio:probe"  # its application_name: dbio's own connection, not one of the run's sessions


def parse_explain(doc: Any) -> ProbeRead:
    """The blocks a statement read and their read time (pure), from EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)."""
    return node_read(_top(doc))


def parse_lookups(doc: Any, lookups: int) -> list[ProbeRead]:
    """Each lookup's blocks and read time (pure), from the EXPLAIN of a statement of `lookups` UNION ALL
    branches: the Append's children in order (a statement of one branch has no Append: its top node)."""
    node = _top(doc)
    if lookups == 1:
        return [node_read(node)]
    while node.get("Node Type") != "Append" and len(node.get("Plans", ())) == 1:
        node = node["Plans"][0]  # a node above the Append (none today): its buffers are the lookups' sum
    branches = node.get("Plans", []) if node.get("Node Type") == "Append" else []
    if len(branches) != lookups:
        raise DbioError(f"the probe's plan has {len(branches)} lookups where it asked {lookups}")
    return [node_read(branch) for branch in branches]


def node_read(plan: dict[str, Any]) -> ProbeRead:
    """A plan node's blocks read and their read time (pure); its buffers include its children's.
    PostgreSQL 17 split "I/O Read Time" into shared, local and temp ("Shared I/O Read Time"); 15-16 have only
    "I/O Read Time" (shared and local, dbio reads no local buffers). No time key: the server did not time it
    (track_io_timing off)."""
    blocks = int(plan.get("Shared Read Blocks", 0))
    ms = plan.get("Shared I/O Read Time", plan.get("I/O Read Time"))
    return ProbeRead(blocks_read=blocks, read_us=None if ms is None else float(ms) * 1000.0)


def _top(doc: Any) -> dict[str, Any]:
    if isinstance(doc, str):
        import json

        doc = json.loads(doc)
    plan: dict[str, Any] = doc[0]["Plan"] if isinstance(doc, list) else doc["Plan"]
    return plan


async def connect(conninfo: str, access_path: str, application_name: str = PROBE_NAME,
                  lookups: Sequence[int] = ()) -> tuple[psycopg.AsyncConnection, int]:
    """The probe's connection and its backend's pid, its statement prepared (lookups: the schema each lookup of
    a batch reads; none: no statement); DbioError (why) when it cannot time reads."""
    conn = await server.aconnect(conninfo, application_name=application_name)
    settings = workload.session_settings(1, access_path)
    try:
        *_, timed, pid = await one_row_async(conn, sqlfiles.text("read_probe_init.sql"),
                                             {k: v for k, v in settings.items() if k != "search_path"})
        if not timed:  # off server-wide: on in this session, where the role may
            await conn.execute(sqlfiles.text("read_probe_timing.sql"))
        if lookups:
            await conn.execute(prepare_statement(lookups))
    except psycopg.errors.InsufficientPrivilege:
        await conn.close()
        raise DbioError("track_io_timing is off and this role may not SET it in its session (a superuser, or a "
                        "role granted SET ON PARAMETER track_io_timing, may)") from None
    except BaseException:
        await conn.close()
        raise
    return conn, int(pid)


def prepare_statement(lookups: Sequence[int]) -> sql.Composed:
    """The PREPARE of a second's lookups: one UNION ALL branch per lookup, on its schema's table (pure)."""
    branches = [sqlfiles.composed("read_probe_lookup.sql",
                                  table=sql.Identifier(catalog.data_schema(schema), catalog.DATA_TABLE),
                                  key=sql.SQL(f"${i}")) for i, schema in enumerate(lookups, 1)]
    return sqlfiles.composed("read_probe_prepare.sql", lookups=sql.SQL(" UNION ALL ").join(branches))


async def read_many(conn: psycopg.AsyncConnection, keys: Sequence[int]) -> list[ProbeRead]:
    """The prepared lookups of each key, in order, in one statement."""
    query = sqlfiles.composed("read_probe.sql", keys=sql.SQL(", ").join(sql.Literal(int(k)) for k in keys))
    return parse_lookups((await one_row_async(conn, query))[0], len(keys))
