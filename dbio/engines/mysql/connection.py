"""Connecting to MySQL or MariaDB through PyMySQL (pure Python: installs without C headers).

A Connection wraps the driver's with what dbio asks of it later: the server's id for the
session (KILL QUERY from another connection cancels it), the OS thread serving it (/proc
gives its CPU when the server is local), and where it connects (a cancel connects again)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pymysql

from dbio.engines.mysql import dsn as dsns
from dbio.errors import DbioError, UsageError

CONNECT_TIMEOUT = 10
_SHOWN = 100  # characters of a statement in a message


@dataclass(eq=False)
class Connection:
    raw: Any  # pymysql.connections.Connection
    dsn: dsns.Dsn
    thread_id: int  # CONNECTION_ID(): what KILL and the processlist name
    application_name: str
    os_tid: int | None = None  # the session's own OS thread in the server (None: the server pools its threads)
    server_tid: int | None = None  # an OS thread of the server serving it now (where the server runs)
    schema_index: int = 0  # the data table a session works on (init_session)
    probe_lookups: tuple[int, ...] = ()  # the read probe's: the data table of each lookup of its batch

    def query(self, sql: str, args: Any = None) -> list[tuple]:
        with self.raw.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall() or [])

    def one(self, sql: str, args: Any = None) -> tuple | None:
        rows = self.query(sql, args)
        return rows[0] if rows else None

    def one_row(self, sql: str, args: Any = None) -> tuple:
        """The row of a statement that always returns one (a function's value, a variable, an aggregate)."""
        row = self.one(sql, args)
        if row is None:
            shown = " ".join(sql.split())
            raise DbioError("the server returned no row for a statement that always returns one: "
                            + (shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "..."))
        return row

    def execute(self, sql: str, args: Any = None) -> int:
        with self.raw.cursor() as cur:
            return cur.execute(sql, args)

    def close(self) -> None:
        try:
            self.raw.close()
        except Exception:
            pass  # already closed, or the server is gone: nothing left to release here


def connect(conninfo: str, *, application_name: str, database: bool = True) -> Connection:
    """A connection in autocommit mode, UTC session clock; database=False: none selected."""
    dsn = dsns.parse(conninfo)
    password = None if dsn.socket_auth else dsns.password()
    args: dict[str, Any] = {"user": dsn.user, "database": dsn.database if database else None, "autocommit": True,
                            "charset": "utf8mb4", "connect_timeout": CONNECT_TIMEOUT,
                            "program_name": application_name[:32], "local_infile": False}
    if password is not None:
        args["password"] = password
    if dsn.via_socket:
        # no TLS over a local socket (the mysql client's own rule): PyMySQL's "preferred" TLS builds a default
        # context with the system's certificates for every connection, 70 ms of the client's CPU on this host
        # even when the server has no TLS; 64 sessions' connects took longer than a node is given to answer
        args.update(unix_socket=dsns.socket_path(dsn), ssl_disabled=True)
    else:
        args.update(host=dsn.host, port=dsn.port)
    try:
        raw = pymysql.connect(**args)
    except pymysql.err.MySQLError as exc:
        raise connection_error(dsn, exc) from None
    conn = Connection(raw, dsn, raw.thread_id(), application_name)
    conn.execute("SET SESSION time_zone = '+00:00'")  # UNIX_TIMESTAMP() of the server's clock, no DST
    conn.os_tid, conn.server_tid = _threads(conn)
    return conn


ONE_THREAD_EACH = ("one-thread-per-connection", "no-threads")  # thread_handling values without a pool


def _threads(conn: Connection) -> tuple[int | None, int | None]:
    """(the session's own OS thread, None when a thread pool serves sessions in turn; the OS thread serving
    it now, a thread of the server either way). performance_schema first: information_schema.PROCESSLIST fills
    an internal temporary table per query (sql/processlist.sql), asked then only where performance_schema is off."""
    try:
        row = conn.one("SELECT THREAD_OS_ID, @@thread_handling FROM performance_schema.threads "
                       "WHERE PROCESSLIST_ID = CONNECTION_ID()")
    except pymysql.err.MySQLError:
        row = None  # MariaDB before 10.5 has no THREAD_OS_ID
    if row and row[0]:
        return (int(row[0]) if str(row[1]) in ONE_THREAD_EACH else None), int(row[0])
    try:  # MariaDB's processlist says TID 0 for a session a thread pool serves
        row = conn.one("SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
    except pymysql.err.MySQLError:
        return None, None  # MySQL has no TID column, and its performance_schema is off
    if row and row[0]:
        return int(row[0]), int(row[0])
    return None, None


def connection_error(dsn: dsns.Dsn, exc: BaseException) -> UsageError:
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    reason = dsns.scrub(str(exc.args[1] if len(exc.args) > 1 else exc)).splitlines()[0]
    hints = {1045: "check the user, and the password in MYSQL_PWD or ~/.my.cnf",
             1049: "create the database (CREATE DATABASE ...) or name an existing one in --dsn",
             1044: "grant the user access to the database, or connect as another user",
             2002: "is the server running? check the socket (?unix_socket=/path in --dsn)",
             2003: "is the server running and listening there? check host and port"}
    if dsn.via_socket and code == 2003:  # PyMySQL reports a socket it cannot reach as 2003, as for TCP
        code = 2002
    default = "check --dsn (mysql://user@host:port/dbname) and MYSQL_PWD or ~/.my.cnf"
    hint = default if code is None else hints.get(code, default)
    return UsageError(f"cannot connect to {dsns.describe(dsn)}: {reason}", hint)


def server_error_text(exc: BaseException) -> str | None:
    if not isinstance(exc, pymysql.err.MySQLError):
        return None
    text = dsns.scrub(str(exc.args[1] if len(exc.args) > 1 else exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def kill_query(conn: Connection) -> bool:
    """Cancel what conn runs, from a new connection (the server ends the statement, not the session)."""
    try:
        other = connect(dsns.unparse(conn.dsn), application_name="dbio:cancel", database=False)
    except UsageError:
        return False
    try:
        other.execute(f"KILL QUERY {int(conn.thread_id)}")
        return True
    except pymysql.err.MySQLError:
        return False
    finally:
        other.close()


def is_local_server(conn: Connection) -> bool:
    """The thread serving conn is one of a mysqld/mariadbd process in our /proc."""
    if conn.server_tid is None:
        return False
    try:
        status = open(f"/proc/{conn.server_tid}/status").read()
        tgid = next(line.split()[1] for line in status.splitlines() if line.startswith("Tgid:"))
        comm = open(f"/proc/{tgid}/comm").read().strip()
    except (OSError, StopIteration):
        return False
    return comm in ("mysqld", "mariadbd")


def is_cancelled(exc: BaseException) -> bool:
    """A statement ended by KILL QUERY (ER_QUERY_INTERRUPTED) or by max_statement_time."""
    return isinstance(exc, pymysql.err.MySQLError) and bool(exc.args) and exc.args[0] in (1317, 1969, 3024)


def abandon(conn: Connection) -> None:
    """Shut the socket of a connection whose server does not answer, so whatever waits on it fails now."""
    import socket

    sock = getattr(conn.raw, "_sock", None)
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


__all__ = ["Connection", "connect", "kill_query"]
