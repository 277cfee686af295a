"""A data set brought to rest before a read-only run (issue: every day's runs, item 1).

UPDATEs leave old row versions and unset hint bits in the pages they changed, and dirty pages in
the buffers; the SELECTs of a later read-only run then prune and rewrite those pages, and the
background writer flushes the rest, inside its window: a read-only run that writes. VACUUM of
dbio's data tables does that work now, and a CHECKPOINT writes it out. The buffers are the server's:
what an earlier run dirtied in another database, or what autovacuum pruned, is written inside the
window as well, so the CHECKPOINT is made too when the server wrote WAL since its last one. On a
data set at rest both are nearly free (the visibility map skips every page), so nothing is said then."""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg import sql

from dbio.engines.postgres import sqlfiles
from dbio.engines.postgres.rows import one_row
from dbio.units import format_bytes

# WAL a VACUUM of a data set at rest writes for its own bookkeeping (the tables' statistics in
# pg_class, the visibility and free space maps: 6 KiB measured after a read-only run); beyond it,
# the VACUUM pruned pages an earlier run's UPDATEs left (each a full-page image of 8 KiB or so).
AT_REST_WAL_BYTES = 64 << 10
PENDING_AT_REST_WAL_BYTES = 256 << 10  # WAL since the last checkpoint below which its buffers are left be


def settle(conn: psycopg.Connection) -> dict[str, Any] | None:
    """What was done (seconds, WAL the VACUUM wrote, WAL since the last checkpoint, whether a checkpoint
    followed), or None when the data set and the server's buffers were at rest."""
    tables = conn.execute(sqlfiles.text("settle/data_tables.sql")).fetchall()
    started = time.monotonic()
    before = one_row(conn, sqlfiles.text("settle/wal_position.sql"))[0]
    for schema, table in tables:
        conn.execute(sqlfiles.composed("settle/vacuum.sql", table=sql.Identifier(schema, table)))
    vacuum_wal = int(one_row(conn, sqlfiles.text("settle/wal_since.sql"), (before,))[0])
    pending = _wal_since_checkpoint(conn)
    if vacuum_wal < AT_REST_WAL_BYTES and (pending is None or pending < PENDING_AT_REST_WAL_BYTES):
        return None
    checkpoint = "done"
    try:
        conn.execute(sqlfiles.text("settle/checkpoint.sql"))
    except psycopg.errors.InsufficientPrivilege:  # a role without pg_checkpoint, with --dsn
        checkpoint = "not permitted"
    tables_named = f"{len(tables)} table" + ("s" if len(tables) != 1 else "")
    pruned = vacuum_wal >= AT_REST_WAL_BYTES
    done = (f"VACUUM of {tables_named} wrote {format_bytes(vacuum_wal)} of WAL" if pruned else
            f"the server had written {format_bytes(pending or 0)} of WAL since its last checkpoint") + (
        (", then a CHECKPOINT wrote out what it and the updates had dirtied" if pruned else
         ", then a CHECKPOINT wrote out the pages that WAL had dirtied") if checkpoint == "done" else
        "; a CHECKPOINT was not permitted to this role (grant it pg_checkpoint), so the background writer may "
        "write the dirty pages inside the window")
    return {"seconds": time.monotonic() - started, "done": done, "tables": len(tables),
            "vacuum_wal_bytes": vacuum_wal, "wal_since_checkpoint_bytes": pending, "checkpoint": checkpoint}


def _wal_since_checkpoint(conn: psycopg.Connection) -> int | None:
    """WAL the server wrote since its last checkpoint's redo point; None where the role may not read the
    control file (pg_control_checkpoint is a superuser's unless granted)."""
    try:
        return int(one_row(conn, sqlfiles.text("settle/wal_since_checkpoint.sql"))[0])
    except psycopg.errors.InsufficientPrivilege:
        return None
