"""Connecting to PostgreSQL and finding out what the server offers."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import psycopg
from psycopg import waiting
from psycopg._conninfo_attempts_async import conninfo_attempts_async
from psycopg.conninfo import timeout_from_conninfo
from psycopg.rows import dict_row

from dbio.engines.base import Capabilities, ServerInfo
from dbio.engines.postgres import facts, sqlfiles
from dbio.engines.postgres.dsn import redact_dsn, scrub
from dbio.engines.postgres.rows import one_row
from dbio.errors import DbioError, UsageError

MIN_VERSION_NUM = 150000  # pg_stat_force_next_flush(), shared-memory statistics
LOOPBACK = {"localhost", "127.0.0.1", "::1", ""}
# Crash recovery replays the WAL written since the last checkpoint: up to max_wal_size, minutes
# on a slow disk. The server says when it gives up; this limit is for a server that never ends.
RECOVERY_WAIT_SECONDS = 300.0
RECOVERY_POLL_SECONDS = 0.5
# When the server resets after its backends are gone, a connection can break without an answer:
# shortly after a refusal that is still the recovery, not a server that is down.
RECOVERY_RESET_GRACE_SECONDS = 2.0


def connect(conninfo: str, *, application_name: str, autocommit: bool = True,
            notify: Callable[[str], None] | None = None) -> psycopg.Connection:
    """A connection; with notify, a server that refuses connections while it recovers from a
    crash (SQLSTATE 57P03) is waited for, saying so once through notify."""
    started = time.monotonic()
    refused_at: float | None = None
    while True:
        try:
            return psycopg.connect(conninfo, autocommit=autocommit, application_name=application_name)
        except psycopg.OperationalError as exc:
            if notify is None:
                raise connection_error(conninfo, exc) from None
            now = time.monotonic()
            if _cannot_connect_now(conninfo):
                if refused_at is None:
                    notify(f"the server is recovering from a crash; waiting up to {RECOVERY_WAIT_SECONDS:.0f} s")
                refused_at = now
            step = recovery_step(refused_at == now, now - started, None if refused_at is None else now - refused_at,
                                 RECOVERY_WAIT_SECONDS)
            if step == "fail":
                raise connection_error(conninfo, exc) from None
            if step == "give up":
                raise DbioError(f"{describe(conninfo)} still refuses connections after {RECOVERY_WAIT_SECONDS:.0f} s "
                                "(the database system is not accepting connections yet)",
                                "read the server log; run the command again once crash recovery has finished")
        time.sleep(RECOVERY_POLL_SECONDS)


def recovery_step(refused_now: bool, waited: float, since_refused: float | None, limit: float) -> str:
    """After a failed connection: 'wait' and connect again, 'give up' waiting, or 'fail' at once.

    refused_now: the server answers SQLSTATE 57P03 (cannot_connect_now); since_refused: seconds
    since it last did (None: never), during which a connection broken by its reset is no failure."""
    recovering = refused_now or (since_refused is not None and since_refused <= RECOVERY_RESET_GRACE_SECONDS)
    if not recovering:
        return "fail"
    return "wait" if waited < limit else "give up"


def _cannot_connect_now(conninfo: str) -> bool:
    """libpq's PQping answers PQPING_REJECT exactly when the server sent SQLSTATE 57P03
    (cannot_connect_now); psycopg does not expose the SQLSTATE of a failed connection."""
    return psycopg.pq.PGconn.ping(conninfo.encode()) == psycopg.pq.Ping.REJECT


class QuietAsyncConnection(psycopg.AsyncConnection):
    """An async connection that does not wake up while the server works.

    psycopg wakes every 0.1 s during a query so that a blocking program can notice Ctrl-C; a
    session's one-second slice thus cost ten event-loop round trips, most of the client's CPU
    at 64 sessions. Under asyncio a cancelled task stops waiting at once, and dbio handles
    signals in the loop, so waking up once in a while is enough."""

    async def wait(self, gen: Any, interval: float = 5.0, timeout: float | None = None) -> Any:
        return await super().wait(gen, interval=max(interval, 5.0), timeout=timeout)


async def aconnect(conninfo: str, *, application_name: str) -> psycopg.AsyncConnection:
    try:
        return await QuietAsyncConnection.connect(conninfo, autocommit=True, application_name=application_name)
    except psycopg.OperationalError as exc:
        raise connection_error(conninfo, exc) from None


@dataclass(frozen=True)
class SessionTarget:
    """A server's connection string made ready once for a run's many sessions: parsed and its host
    resolved, so that each session only appends its own name and options (libpq takes the last
    value of a repeated keyword). Parsing a connection string costs psycopg about 0.2 ms of the
    client's one CPU; at 2,048 sessions five parses each were a second of the start."""

    conninfo: str  # the one attempt, resolved
    existing_options: str  # the DSN's options, or PGOPTIONS
    timeout: float | None


async def session_target(conninfo: str) -> SessionTarget | None:
    """None when the connection string names several hosts: each session then connects as usual."""
    params = psycopg.conninfo.conninfo_to_dict(conninfo)
    existing = str(params["options"]) if "options" in params else os.environ.get("PGOPTIONS", "")
    try:
        attempts = await conninfo_attempts_async(params)
    except psycopg.OperationalError as exc:
        raise connection_error(conninfo, exc) from None
    if len(attempts) != 1:
        return None
    return SessionTarget(psycopg.conninfo.make_conninfo("", **attempts[0]), existing or "",
                         timeout_from_conninfo(params))


def quote_value(value: str) -> str:
    """A connection string value, quoted (pure)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


async def aconnect_session(conninfo: str, target: SessionTarget | None, *, application_name: str,
                           options: Callable[[str], str]) -> tuple[psycopg.AsyncConnection, int]:
    """A session's connection with its settings in the startup packet (options: the existing
    libpq options -> the session's), and its backend's pid, which libpq already knows."""
    if target is None:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
        existing = str(params["options"]) if "options" in params else os.environ.get("PGOPTIONS", "")
        conn = await aconnect(psycopg.conninfo.make_conninfo(conninfo, options=options(existing or "")),
                              application_name=application_name)
        return conn, conn.info.backend_pid
    full = (f"{target.conninfo} application_name={quote_value(application_name)} "
            f"options={quote_value(options(target.existing_options))}")
    try:
        conn = await waiting.wait_conn_async(QuietAsyncConnection._connect_gen(full), interval=0.1,
                                             timeout=target.timeout)
    except psycopg.OperationalError as exc:
        raise connection_error(conninfo, exc) from None
    await conn.set_autocommit(True)
    return conn, conn.info.backend_pid


def connection_error(conninfo: str, exc: Exception) -> DbioError:
    text = scrub(str(exc)).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    reason = lines[-1] if lines else "unknown error"
    for line in lines:
        # libpq: 'connection to server at "h", port 1 failed: Connection refused' and then its own
        # hint, which would repeat ours; the reason is what follows the last "failed:"
        if "FATAL" in line or "failed:" in line:
            reason = line.split("FATAL:", 1)[-1].strip() if "FATAL" in line else line.rsplit("failed:", 1)[-1].strip()
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        hint = "check the user and the password in PGPASSWORD or ~/.pgpass"
    elif "does not exist" in lowered and "database" in lowered:
        hint = "create the database or name an existing one (dbname=... in --dsn)"
    elif "role" in lowered and "does not exist" in lowered:
        hint = "connect as an existing role (user=... in --dsn)"
    elif "could not translate host name" in lowered or "failed to resolve host" in lowered:
        hint = "check the host name"
    elif "connection refused" in lowered or "no such file" in lowered or "could not connect" in lowered:
        hint = "is the server running and listening there? check host and port"
    elif "timeout" in lowered or "timed out" in lowered:
        hint = "the host did not answer: check the address, the port and any firewall"
    else:
        hint = "check the connection string (--dsn) and the PG* environment variables"
    return UsageError(f"cannot connect to {describe(conninfo)}: {reason}", hint)


def describe(conninfo: str) -> str:
    """Where a connection string points, without secrets."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:
        return "the server (unparsable connection string)"
    host = str(params.get("host") or os.environ.get("PGHOST") or "the default socket")
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    db = params.get("dbname") or os.environ.get("PGDATABASE")
    where = f"{host}:{port}" if not host.startswith("/") else f"socket {host} port {port}"
    return f"PostgreSQL at {where}" + (f", database {db}" if db else "")


def probe(conn: psycopg.Connection) -> ServerInfo:
    """Version, settings and capabilities; refuses servers dbio does not support."""
    version_num = int(one_row(conn, "SHOW server_version_num")[0])
    version = one_row(conn, "SHOW server_version")[0].split()[0]
    check_version(version_num, version)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(sqlfiles.text("stats/settings.sql")).fetchall()
    settings = {r["name"]: {"setting": r["setting"], "unit": r["unit"], "source": r["source"]} for r in rows}
    info = one_row(
        conn, "SELECT current_database(), current_user, pg_backend_pid(), "
        "current_setting('shared_buffers'), current_setting('block_size')::int, "
        "pg_size_bytes(current_setting('shared_buffers')), current_setting('max_connections')::int, "
        "current_setting('superuser_reserved_connections')::int, "
        "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'), "
        "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user), "
        # one server whichever way it is reached (socket or TCP, any database): when it started, its port
        # (and its system identifier where this role may read it: clusters made alike differ there)
        "coalesce(CASE WHEN has_function_privilege('pg_control_system()', 'execute') "
        "THEN (SELECT system_identifier::text FROM pg_control_system()) END, '?') || ':' || "
        "date_part('epoch', pg_postmaster_start_time())::text || ':' || current_setting('port')")
    database, user, pid, _, block_size, shared_buffers, max_conn, su_reserved, in_use, is_super, identity = info
    if block_size != 8192:
        raise UsageError(f"the server uses {block_size}-byte blocks; dbio's one-row-per-block tables need 8192",
                         "use a server built with the default 8 KiB block size")
    reserved = su_reserved
    if version_num >= 160000:
        reserved += int(one_row(conn, "SHOW reserved_connections")[0])
    local = _is_local(conn, pid)
    data_directory = settings.get("data_directory", {}).get("setting")
    if data_directory is None and local:
        data_directory = _cwd_of(pid)
    direct = "data" in (settings.get("debug_io_direct", {}).get("setting") or "")
    missing: list[tuple[str, str]] = []
    if version_num < 160000:
        missing += [("I/O by backend type (pg_stat_io)", f"PostgreSQL {version} has no pg_stat_io (16+)"),
                    ("physical write latency", "needs pg_stat_io (PostgreSQL 16+)"),
                    ("physical reads outside this database", "pg_stat_database counts this database only")]
    if not local:
        missing += [("DB CPU of the sessions", "the server is not on this host"),
                    ("device statistics of the data directory", "the server is not on this host"),
                    ("host CPU of the server", "the server is not on this host (host CPU is dbio's own host)")]
    elif data_directory is None:
        missing.append(("device statistics of the data directory",
                        "the data directory is hidden (needs pg_read_all_settings) and /proc/<pid>/cwd is unreadable"))
    if settings.get("track_io_timing", {}).get("setting") != "on":
        missing.append(("physical read and write latency", "track_io_timing is off on the server"))
    if settings.get("track_wal_io_timing", {}).get("setting") != "on":
        missing.append(("WAL write and sync latency", "track_wal_io_timing is off on the server"))
    caps = Capabilities(
        engine="postgresql", server_version=version, version_num=version_num,
        has_io_view=version_num >= 160000, io_view_has_wal=version_num >= 180000,
        has_backend_cpu=local, can_see_waits=True, data_directory=data_directory, local=local,
        direct_io=direct, missing=tuple(missing),
        read_only=bool(one_row(conn, "SELECT pg_is_in_recovery()")[0]),
        **facts.capability_facts(settings, data_directory=data_directory, local=local))
    return ServerInfo(caps=caps, settings=settings, database=database, user=user,
                      description=describe_connection(conn, version), cache_bytes=int(shared_buffers),
                      max_connections=max_conn, reserved_connections=reserved, connections_in_use=int(in_use),
                      backend_pid=pid, identity=identity)


def check_version(version_num: int, version: str) -> None:
    if version_num < MIN_VERSION_NUM:
        raise UsageError(f"the server runs PostgreSQL {version}; dbio needs PostgreSQL 15 or newer",
                         "use a PostgreSQL 15+ server, or the embedded PostgreSQL 18 (omit --dsn)")


def describe_connection(conn: psycopg.Connection, version: str) -> str:
    info = conn.info
    where = f"socket {info.host} port {info.port}" if info.host.startswith("/") else f"{info.host}:{info.port}"
    return f"PostgreSQL {version} at {where}, database {info.dbname}, user {info.user}"


def _is_local(conn: psycopg.Connection, backend_pid: int) -> bool:
    host = conn.info.host or ""
    local_names = LOOPBACK | {socket.gethostname(), socket.getfqdn()}
    if not (host.startswith("/") or host in local_names or conn.info.hostaddr in ("127.0.0.1", "::1")):
        return False
    # The backend serving us must be a postgres process in our /proc (not in a container's namespace). Its
    # pid is the server's answer: a server dbio does not own could give a path instead of a number.
    if type(backend_pid) is not int or backend_pid <= 0:
        return False
    try:
        comm = Path(f"/proc/{backend_pid}/comm").read_text().strip()
    except OSError:
        return False
    return comm.startswith("postgres")


def _cwd_of(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


__all__ = ["connect", "aconnect", "probe", "describe", "redact_dsn"]
