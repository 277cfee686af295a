"""Loading one table: create, insert in the key order asked for, commit, index, analyze, record.

Every row gets a page of its own, at every page size (PostgreSQL's one row per block): InnoDB's
largest row is about half a page, so a page can always take two; each row goes in with a partner
(a negative custid) that takes the rest of its page, and the partners are deleted after their
rows are committed; the table's MERGE_THRESHOLD (data_table.sql) keeps InnoDB from merging the
pages they leave half empty.

Rows go in as multi-row INSERTs with hex literals (no text escaping in Python), one transaction
per batch of rows; each batch's partners are deleted just after its commit, while its pages are
still in the buffer pool, so that neither the delete nor purge reads the table back from storage
(and the delete's locks stay a batch's). The table counts as loaded only once its record is
written, after its index and statistics, so an interrupted load is simple to resume: the table is
made again."""

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
ROWS_PER_PAGE = 1  # recorded with each table and proved by verify


def filler_bytes(page_size: int) -> int:
    """Filler that makes a row just under half a page (InnoDB's largest row): the row and its
    partner fill the page, so no third row fits while the partner is there."""
    return page_size // 2 - ROW_OVERHEAD


def statement_rows(max_packet: int, row_bytes: int) -> int:
    """Rows per INSERT: well under max_allowed_packet (hex doubles the bytes)."""
    return max(1, min(256, (max_packet // 2) // (2 * row_bytes + 64)))


def values_sql(start_id: int, batch: RowBatch) -> list[str]:
    """Rows with ids from start_id, each followed by its page partner (id + 1, custid -(id + 1), a
    filler of zeros the server makes, so that it costs no bytes on the wire), deleted after the load.
    The free half of a page then holds zeros, as in PostgreSQL's freshly loaded blocks."""
    hexes = np.asarray(batch.filler.reshape(len(batch), -1))
    partner = f"REPEAT(X'00',{hexes.shape[1]})"
    out = []
    for i, (k, row) in enumerate(zip(batch.keys.tolist(), hexes)):
        row_id = start_id + 2 * i
        out.append(f"({row_id},{int(k)},{int(k)},X'{bytes(row).hex()}')")
        out.append(f"({row_id + 1},{-(row_id + 1)},0,{partner})")
    return out


def delete_partners(conn: Connection, table: str, first_id: int, end_id: int) -> None:
    conn.execute(sqlfiles.statement("delete_partners.sql").replace("{table}", table), (first_id, end_id))


def wait_for_purge(conn: Connection) -> None:
    """Let purge free the partners' space now rather than in a measured window (MariaDB waits for it
    with innodb_max_purge_lag_wait; elsewhere purge runs in the background, as it did during the load)."""
    import pymysql

    try:
        conn.execute("SET GLOBAL innodb_max_purge_lag_wait = 0")
    except pymysql.err.MySQLError:
        pass  # MySQL has no such wait, or the user may not set globals: purge catches up on its own


def load_table(conn: Connection, record: SetupRecord, job: TableJob, batches: Iterator[RowBatch],
               on_rows: Callable[[int], None], should_stop: Callable[[], bool], page_size: int) -> TableTiming:
    name = catalog.table_of(job.kind, job.schema_index)
    table = sqlfiles.ident(name)
    t0 = time.monotonic()
    catalog.drop_table_if_ours(conn, name, record.setup_id)
    faults.point("load.create")
    filler = filler_bytes(page_size)
    conn.execute(sqlfiles.statement("data_table.sql").replace("{table}", table)
                 .replace("{filler_bytes}", str(filler))
                 .replace("{tag}", catalog.literal(conn, catalog.tag(record.setup_id))))
    max_packet = int(conn.one_row("SELECT @@max_allowed_packet")[0])
    per_statement = statement_rows(max_packet, filler)
    conn.execute("SET SESSION unique_checks = 0")
    next_id = kept = 1  # kept: the first partner not deleted yet
    for batch in batches:
        conn.execute("START TRANSACTION")
        for start in range(0, len(batch), per_statement):
            part = RowBatch(batch.keys[start:start + per_statement], batch.filler[start:start + per_statement])
            conn.execute(f"INSERT INTO {table} (id, custid, c2, filler) VALUES " + ",".join(values_sql(next_id, part)))
            next_id += len(part) * 2
        conn.execute("COMMIT")
        # The last partner stays until the next batch is in: purged earlier, it would leave room on
        # the last page for the next batch's first row.
        delete_partners(conn, table, kept, next_id - 1)
        kept = next_id - 1
        on_rows(len(batch))
        if should_stop():
            raise Interrupted("load stopped")  # the table stays unrecorded: it is made again on resume
    delete_partners(conn, table, kept, next_id)
    wait_for_purge(conn)
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
                 "load_seconds, index_seconds, analyze_seconds, loaded_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, "
                 "%s)",
                 (name, job.kind, job.schema_index, job.rows, ROWS_PER_PAGE, page_size, t1 - t0, t2 - t1,
                  t3 - t2, datetime.now(timezone.utc).isoformat()))
    return TableTiming(load=t1 - t0, index=t2 - t1, analyze=t3 - t2)


def table_is_loaded(record: SetupRecord, job: TableJob) -> bool:
    name = catalog.table_of(job.kind, job.schema_index)
    return any(t["table_name"] == name and t["rows"] == job.rows for t in record.tables_done)
