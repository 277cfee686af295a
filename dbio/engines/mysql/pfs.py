"""What performance_schema tells dbio about InnoDB's I/O: what it instruments on this server
(probe), and one reading of its file I/O summaries (snapshot). Parsers are pure.

performance_schema times each data-file and redo-file operation of every thread, so the average
read and write latency are its timer sums over its counts; the account summary keeps the waits of
client threads (those with a user) after they end, so client sessions' reads and their wait time
are cumulative like every other counter. MariaDB 10.8+ does not instrument its redo log file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pymysql

from dbio.engines.mysql import sqlfiles
from dbio.engines.mysql.connection import Connection

DATA_FILE = "wait/io/file/innodb/innodb_data_file"
LOG_FILE = "wait/io/file/innodb/innodb_log_file"
FILE_COLUMNS = ("count_read", "sum_timer_read", "bytes_read", "count_write", "sum_timer_write", "bytes_write",
                "count_misc", "sum_timer_misc")
PS_PER_MS = 1e9  # performance_schema timers count picoseconds
# A user without SELECT on performance_schema: what it would time is not measured, and the run goes on.
NOT_ALLOWED = (1142, 1143, 1044, 1227)
NOT_READABLE = "the user may not read performance_schema (GRANT SELECT ON performance_schema.* TO it to measure this)"
NOT_EVERY_THREAD = ("performance_schema does not instrument every thread (setup_actors leaves some users out, or "
                    "performance_schema.threads has INSTRUMENTED = NO)")


@dataclass(frozen=True)
class Instrumented:
    """What this server's performance_schema gives (all False when it is off)."""

    data_io: bool = False  # data-file I/O counted and timed, per thread
    redo_io: bool = False  # redo log file I/O counted and timed
    waits: bool = False  # current wait event of each session (events_waits_current)
    why_not_data: str = "performance_schema is off on the server"
    why_not_redo: str = "performance_schema is off on the server"
    why_not_waits: str = "performance_schema is off on the server"


def instrumented(rows: list[tuple[Any, Any]], performance_schema: bool, product: str) -> Instrumented:
    """From pfs_setup.sql's rows (pure): which figures this server's instruments and consumers allow."""
    if not performance_schema:
        return Instrumented()
    setup = {str(k): str(v).upper() for k, v in rows}
    threads = setup.get("consumer:global_instrumentation") == "YES" and \
        setup.get("consumer:thread_instrumentation") == "YES"
    # A thread left out (setup_actors, threads.INSTRUMENTED) reads untimed and waits unseen: the
    # averages would divide some reads' time by all reads, and its samples would say CPU.
    every = setup.get("actors:every user") == "YES" and setup.get("threads:every thread") == "YES"

    def timed(instrument: str, what: str) -> tuple[bool, str]:
        state = setup.get(f"instrument:{instrument}")
        if state is None:
            return False, f"{product} does not instrument {what} in performance_schema"
        if state != "YES/YES":
            return False, f"performance_schema's {instrument} is not enabled and timed (setup_instruments)"
        if not threads:
            return False, "performance_schema's global or thread instrumentation consumer is off"
        if not every:
            return False, NOT_EVERY_THREAD
        return True, ""

    data, why_data = timed(DATA_FILE, "InnoDB's data files")
    redo, why_redo = timed(LOG_FILE, "its redo log file")
    waits = setup.get("consumer:events_waits_current") == "YES" and threads and every
    why_waits = "" if waits else (f"{NOT_EVERY_THREAD} (only the processlist's states are sampled)"
                                  if threads and not every else "performance_schema's events_waits_current consumer is "
                                  "off (only the processlist's states are sampled)")
    return Instrumented(data, redo, waits, why_data, why_redo, why_waits)


def probe(conn: Connection, performance_schema: bool, product: str) -> Instrumented:
    try:
        rows = conn.query(sqlfiles.statement("pfs_setup.sql")) if performance_schema else []
    except pymysql.err.MySQLError as exc:
        if not denied(exc):
            raise
        return Instrumented(why_not_data=NOT_READABLE, why_not_redo=NOT_READABLE, why_not_waits=NOT_READABLE)
    return instrumented(rows, performance_schema, product)


def denied(exc: BaseException) -> bool:
    """The user may not read that table (ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR, ...)."""
    return bool(exc.args) and exc.args[0] in NOT_ALLOWED


def classes_off(rows: list[tuple[Any, Any, Any]]) -> str:
    """From pfs_instruments.sql's rows (pure): the instrument classes none of whose instruments is
    enabled, in one line ("none" when every class has some on)."""
    off = [str(name) for name, enabled, _ in rows if not int(enabled or 0)]
    return ", ".join(off) or "none"


def instruments_off(conn: Connection) -> str:
    try:
        return classes_off(conn.query(sqlfiles.statement("pfs_instruments.sql")))
    except pymysql.err.MySQLError as exc:
        if not denied(exc):
            raise
        return "unknown (" + NOT_READABLE + ")"


def read(conn: Connection, own_ids: set[int]) -> dict[str, Any]:
    """One reading of the file I/O summaries: per event, every thread's; client threads' data-file
    waits; and those of dbio's own connections."""
    files = {str(row[0]).rsplit("/", 1)[-1]: dict(zip(FILE_COLUMNS, (float(v or 0) for v in row[1:])))
             for row in conn.query(sqlfiles.statement("pfs_files.sql"))}
    count, timer = conn.one(sqlfiles.statement("pfs_client_waits.sql")) or (0, 0)
    out = {"files": files, "client_waits": {"count": float(count or 0), "timer": float(timer or 0)}}
    if own_ids:
        ids = "(" + ",".join(str(int(i)) for i in sorted(own_ids)) + ")"
        count, timer = conn.one(sqlfiles.statement("pfs_session_waits.sql") + " " + ids) or (0, 0)
        out["own_waits"] = {"count": float(count or 0), "timer": float(timer or 0)}
    return out


def ms(picoseconds: float | None) -> float | None:
    return None if picoseconds is None else picoseconds / PS_PER_MS
