"""Loading one table: create, COPY FREEZE, index, analyze and record it, in one transaction.

One transaction per table makes an interrupted load simple to resume: a table is either
fully loaded, indexed, analysed and recorded, or it does not exist.
"""

from __future__ import annotations

import time
from typing import Callable, Iterator

import numpy as np
import psycopg
from psycopg import sql
from psycopg.copy import QueuedLibpqWriter

from dbio import faults
from dbio.engines.base import RowBatch, SetupRecord, TableJob, TableTiming
from dbio.engines.postgres import catalog, sqlfiles, tablespaces
from dbio.errors import Interrupted

# A row of ~4 KiB: a second version fits in the same 8 KiB block (in-block UPDATEs), a second
# row does not (fillfactor 10 keeps inserts to one row per block).
FILLER_BYTES = 4000

_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
_COPY_TRAILER = b"\xff\xff"
_ROW = np.dtype([("fields", ">i2"), ("len1", ">i4"), ("custid", ">i8"), ("len2", ">i4"), ("c2", ">i8"),
                 ("len3", ">i4"), ("filler", f"V{FILLER_BYTES}")])


def encode(batch: RowBatch) -> bytes:
    """Rows in PostgreSQL's binary COPY format (the header and trailer are sent separately)."""
    n = len(batch)
    rows = np.empty(n, dtype=_ROW)
    rows["fields"] = 3
    rows["len1"] = 8
    rows["len2"] = 8
    rows["len3"] = FILLER_BYTES
    rows["custid"] = batch.keys
    rows["c2"] = batch.keys
    rows["filler"] = np.ascontiguousarray(batch.filler).view(f"V{FILLER_BYTES}").reshape(n)
    return rows.tobytes()


def load_table(conn: psycopg.Connection, record: SetupRecord, job: TableJob, batches: Iterator[RowBatch],
               on_rows: Callable[[int], None], should_stop: Callable[[], bool] = lambda: False) -> TableTiming:
    schema, table = catalog.job_table(job)
    ident = {"schema": sql.Identifier(schema), "table": sql.Identifier(table)}
    literal = sql.Literal(catalog.tag(record.setup_id))
    t0 = time.monotonic()
    with conn.transaction():
        # A table this setup made before is replaced in this transaction; any other is refused.
        catalog.drop_table_if_ours(conn, schema, table, record.setup_id)
        faults.point("load.create")
        tablespaces.use_for(conn, record.spec, job)
        conn.execute(sqlfiles.composed("data_table.sql", tag=literal, **ident))
        if job.part:
            conn.execute(sqlfiles.composed("partition_keys.sql", constraint=sql.Identifier(f"{table}_keys"),
                                           first=sql.Literal(job.first_key), last=sql.Literal(_last_key(job)),
                                           tag=literal, **ident))
        _copy_rows(conn, ident, batches, on_rows)
        t1 = time.monotonic()
        faults.point("load.index")
        if should_stop():
            raise Interrupted("load stopped")  # rolls the table back: it is loaded again on resume
        if job.kind == "data":
            conn.execute(sqlfiles.composed("data_index.sql", index=sql.Identifier(catalog.index_name(job)),
                                           tag=literal, **ident))
        t2 = time.monotonic()
        conn.execute(sqlfiles.composed("analyze.sql", **ident))
        t3 = time.monotonic()
        conn.execute(sqlfiles.text("record_table.sql"), {
            "schema": schema, "table": table, "kind": job.kind, "rows": job.rows,
            "qualified": f'"{schema}"."{table}"', "load_seconds": t1 - t0, "index_seconds": t2 - t1,
            "analyze_seconds": t3 - t2})
        if job.part:
            conn.execute(sqlfiles.composed("attach_partition.sql", parent=sql.Identifier(catalog.DATA_TABLE),
                                           first=sql.Literal(job.first_key), after=sql.Literal(_last_key(job) + 1),
                                           **ident))
    return TableTiming(load=t1 - t0, index=t2 - t1, analyze=t3 - t2)


def _last_key(job: TableJob) -> int:
    return job.first_key + job.rows - 1


def _copy_rows(conn: psycopg.Connection, ident: dict[str, sql.Identifier], batches: Iterator[RowBatch],
               on_rows: Callable[[int], None]) -> None:
    cursor = conn.cursor()
    # A writer thread sends while this thread generates the next rows.
    with cursor.copy(sqlfiles.composed("copy_in.sql", **ident), writer=QueuedLibpqWriter(cursor)) as copy:
        copy.write(_COPY_HEADER)
        for batch in batches:
            copy.write(encode(batch))
            on_rows(len(batch))
        copy.write(_COPY_TRAILER)


def table_is_loaded(record: SetupRecord, job: TableJob) -> bool:
    schema, table = catalog.job_table(job)
    return any(t["schema_name"] == schema and t["table_name"] == table and t["rows"] == job.rows
               for t in record.tables_done)
