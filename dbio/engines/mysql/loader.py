"""Loading one table: create, insert in the key order asked for, commit, index, analyze, record.

Rows go in as multi-row INSERTs with hex literals (no text escaping in Python), in one
transaction; the table counts as loaded only once its record is written, after its index and
statistics, so an interrupted load is simple to resume: the table is made again."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Callable, Iterator

import numpy as np

from dbio import faults
from dbio.engines.base import RowBatch, SetupRecord, TableJob, TableTiming
from dbio.engines.mysql import catalog, sqlfiles
from dbio.engines.mysql.connection import Connection
from dbio.errors import Interrupted

ROW_OVERHEAD = 300  # record header, hidden columns, the three BIGINTs, page directory: under half a page left


def filler_bytes(page_size: int) -> int:
    """Filler that makes a row just under half a page: two fit a page (InnoDB's largest row is half a
    page, so every page takes two), three never do."""
    return page_size // 2 - ROW_OVERHEAD


def rows_per_page(page_size: int) -> int:
    return 2


def statement_rows(max_packet: int, row_bytes: int) -> int:
    """Rows per INSERT: well under max_allowed_packet (hex doubles the bytes)."""
    return max(1, min(256, (max_packet // 2) // (2 * row_bytes + 64)))


def values_sql(start_id: int, batch: RowBatch) -> list[str]:
    hexes = batch.filler.reshape(len(batch), -1)
    return [f"({start_id + i},{int(k)},{int(k)},X'{bytes(row).hex()}')"
            for i, (k, row) in enumerate(zip(batch.keys.tolist(), np.asarray(hexes)))]


def load_table(conn: Connection, record: SetupRecord, job: TableJob, batches: Iterator[RowBatch],
               on_rows: Callable[[int], None], should_stop: Callable[[], bool], page_size: int) -> TableTiming:
    name = catalog.table_of(job.kind, job.schema_index)
    table = sqlfiles.ident(name)
    t0 = time.monotonic()
    catalog.drop_table_if_ours(conn, name, record.setup_id)
    faults.point("load.create")
    filler = filler_bytes(page_size)
    conn.execute(sqlfiles.statement("data_table.sql").replace("{table}", table)
                 .replace("{filler_bytes}", str(filler)).replace("{tag}", catalog.literal(conn, catalog.tag(record.setup_id))))
    max_packet = int(conn.one("SELECT @@max_allowed_packet")[0])
    per_statement = statement_rows(max_packet, filler)
    conn.execute("SET SESSION unique_checks = 0")
    conn.execute("START TRANSACTION")
    next_id = 1
    for batch in batches:
        for start in range(0, len(batch), per_statement):
            part = RowBatch(batch.keys[start:start + per_statement], batch.filler[start:start + per_statement])
            conn.execute(f"INSERT INTO {table} (id, custid, c2, filler) VALUES " + ",".join(values_sql(next_id, part)))
            next_id += len(part)
        on_rows(len(batch))
        if should_stop():
            conn.execute("ROLLBACK")
            raise Interrupted("load stopped")
    conn.execute("COMMIT")
    t1 = time.monotonic()
    faults.point("load.index")
    if should_stop():
        raise Interrupted("load stopped")  # the table stays unrecorded: it is loaded again on resume
    if job.kind == "data":
        conn.execute(sqlfiles.statement("data_index.sql").replace("{table}", table))
    t2 = time.monotonic()
    conn.query(f"ANALYZE TABLE {table}")
    t3 = time.monotonic()
    conn.execute("INSERT INTO dbio_setup_tables (table_name, kind, schema_index, `rows`, rows_per_page, page_size, "
                 "load_seconds, index_seconds, analyze_seconds, loaded_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                 (name, job.kind, job.schema_index, job.rows, rows_per_page(page_size), page_size, t1 - t0, t2 - t1,
                  t3 - t2, datetime.now(timezone.utc).isoformat()))
    return TableTiming(load=t1 - t0, index=t2 - t1, analyze=t3 - t2)


def table_is_loaded(record: SetupRecord, job: TableJob) -> bool:
    name = catalog.table_of(job.kind, job.schema_index)
    return any(t["table_name"] == name and t["rows"] == job.rows for t in record.tables_done)
