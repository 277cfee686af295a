"""A data set brought to rest before a read-only run (issue: every day's runs, item 1).

An UPDATE leaves undo log records that purge discards later, and dirty pages in the buffer pool
that the page cleaners write later: inside a later read-only run's window, as writes it did not
make. Before such a run, dbio waits for purge to catch up and has InnoDB write dbio's tables'
dirty pages (FLUSH TABLES ... FOR EXPORT, then UNLOCK TABLES)."""

from __future__ import annotations

import time
from typing import Any

import pymysql

from dbio.engines.mysql import catalog, sqlfiles
from dbio.engines.mysql.connection import Connection

HISTORY_AT_REST = 100  # undo log records: purge keeps a few behind even on an idle server
DIRTY_AT_REST = 64  # pages: an idle server keeps a dozen dirty (its own tables, the page cleaners' pace)
PURGE_WAIT = 300.0  # seconds purge may take to catch up
POLL = 0.2


def settle(conn: Connection) -> dict[str, Any] | None:
    """What was done (seconds, undo purged, whether dbio's tables were flushed), or None when at rest."""
    history, dirty = _state(conn)
    if history <= HISTORY_AT_REST and dirty <= DIRTY_AT_REST:
        return None
    started = time.monotonic()
    purged_from = history
    while history > HISTORY_AT_REST and time.monotonic() - started < PURGE_WAIT:
        time.sleep(POLL)
        history, dirty = _state(conn)
    parts = []
    if purged_from > HISTORY_AT_REST:
        parts.append(f"purge discarded {purged_from - history:,} undo log records" +
                     ("" if history <= HISTORY_AT_REST else f" ({history:,} still left after {PURGE_WAIT:.0f} s)"))
    flushed = _flush(conn)
    dirty_after = _state(conn)[1]
    parts.append(f"FLUSH TABLES ... FOR EXPORT wrote out dbio's tables' dirty pages (the buffer pool's dirty pages: "
                 f"{dirty:,} before, {dirty_after:,} after)" if flushed is None else
                 f"dbio's tables' dirty pages were not flushed ({flushed}): the page cleaners may write them inside "
                 "the window")
    return {"seconds": time.monotonic() - started, "done": "; ".join(parts), "history_before": purged_from,
            "history_after": history, "dirty_pages_before": dirty, "dirty_pages_after": dirty_after,
            "flushed": flushed is None}


def _state(conn: Connection) -> tuple[int, int]:
    """(history list length, dirty pages); a history the account may not read counts as none."""
    status = {str(name): value for name, value in conn.query(sqlfiles.statement("settle_state.sql"))}
    history = status.get("Innodb_history_list_length")
    if history is None:
        try:
            rows = conn.query(sqlfiles.statement("settle_history.sql"))
            history = rows[0][0] if rows else 0
        except pymysql.err.MySQLError:  # no PROCESS privilege: purge is not waited for
            history = 0
    return int(history or 0), int(status.get("Innodb_buffer_pool_pages_dirty") or 0)


def _flush(conn: Connection) -> str | None:
    """None when done; otherwise the server's reason (a user without RELOAD and LOCK TABLES, with --dsn)."""
    tables = sorted(name for name in catalog.dbio_tables(conn) if catalog.is_data_table_name(name))
    if not tables:
        return "no data table"
    flush, unlock = sqlfiles.statements("settle_flush.sql")
    try:
        conn.execute(flush.format(tables=", ".join(map(sqlfiles.ident, tables))))
    except pymysql.err.MySQLError as exc:
        return str(exc.args[-1]) if exc.args else type(exc).__name__
    finally:
        try:
            conn.execute(unlock)
        except pymysql.err.MySQLError:
            pass
    return None
