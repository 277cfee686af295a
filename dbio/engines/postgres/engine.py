"""PostgreSQL behind dbio's Engine interface."""

from __future__ import annotations

import asyncio
import os
import socket
from typing import TYPE_CHECKING, Any, Callable

import psycopg

from dbio.engines.base import (ServerInfo, SetupRecord, SetupSpec, Teardown, application_prefix)
from dbio.engines.postgres import catalog, lean_call, loader, server, sqlfiles, stats, tablespaces, workload
from dbio.engines.postgres import read_probe as probing
from dbio.engines.postgres import settle as settling
from dbio.engines.postgres.dsn import scrub
from dbio.engines.postgres.facts import FEATURES
from dbio.engines.postgres.rows import one_row, one_row_async
from dbio.errors import DbioError

if TYPE_CHECKING:
    from dbio.engines.base import Engine, ReadProbing, TimedOperations


def _first_line(exc: BaseException) -> str:
    text = scrub(str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class PostgresEngine:
    name = "postgresql"
    features = FEATURES
    filler_bytes = loader.FILLER_BYTES
    kinds = workload.KINDS

    def __init__(self) -> None:
        self._session_targets: tuple[Any, dict[str, Any]] = (None, {})  # (event loop, conninfo -> SessionTarget)

    # -- connections and facts ---------------------------------------------------------
    connect = staticmethod(server.connect)

    def wait_while_recovering(self, conninfo: str, notify: Callable[[str], None]) -> None:
        server.connect(conninfo, application_name="dbio:wait", notify=notify).close()

    aconnect = staticmethod(server.aconnect)

    def close(self, conn: psycopg.Connection) -> None:
        conn.close()

    async def aclose(self, conn: psycopg.AsyncConnection) -> None:
        lean_call.forget(conn)
        await conn.close()

    def abandon(self, conn: psycopg.Connection | psycopg.AsyncConnection) -> None:
        """Give up a connection whose server does not answer: shut its socket, so that whatever waits
        on it (here or in a thread) fails at once, and its backend ends when it next reads."""
        try:
            sock = socket.socket(fileno=os.dup(conn.pgconn.socket))
        except Exception:
            return  # already closed
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        finally:
            sock.close()

    probe = staticmethod(server.probe)
    describe_target = staticmethod(server.describe)

    def operations(self, conninfo: str, instance: Any, *, instance_config: Any, sessions: int, dbname: str,
                   notify: Callable[[str], None]) -> Any:
        from dbio.engines.postgres.operations import PostgresOperations

        return PostgresOperations(conninfo, instance, instance_config, sessions=sessions, dbname=dbname, notify=notify)

    def checkpoint_now(self, conninfo: str, notify: Callable[[str], None]) -> dict[str, Any]:
        from dbio.engines.postgres.operations import checkpoint_now

        return checkpoint_now(conninfo, notify)

    # -- setup -------------------------------------------------------------------------
    read_setup = staticmethod(catalog.read_setup)

    def redo_sync_rate(self, info: ServerInfo, directory: str, seconds: int) -> dict[str, Any]:
        from dbio.engines.postgres import wal_sync_rate

        method = (info.settings.get("wal_sync_method") or {}).get("setting") or "fdatasync"
        return wal_sync_rate.redo_sync_rate(directory, seconds, method)

    def data_files(self, conn: psycopg.Connection, info: ServerInfo) -> list[str]:
        from dbio.engines.postgres import files

        return files.data_files(conn, info.caps.data_directory if info.caps.local else None)

    check_namespace = staticmethod(catalog.check_namespace)

    def begin_setup(self, conn: psycopg.Connection, spec: SetupSpec, *, setup_id: str,
                    server_version: str) -> SetupRecord:
        tablespaces.ensure(conn, spec)  # outside begin_setup's transaction, as PostgreSQL needs
        return catalog.begin_setup(conn, spec, setup_id=setup_id, server_version=server_version)

    def prepare_load_session(self, conn: psycopg.Connection) -> None:
        conn.execute("SET maintenance_work_mem = '256MB'")

    table_is_loaded = staticmethod(loader.table_is_loaded)
    load_table = staticmethod(loader.load_table)

    def cancel(self, conn: psycopg.Connection) -> None:
        """Cancel what a connection is running (from another thread); quiet when there is nothing."""
        try:
            conn.cancel_safe(timeout=5)
        except Exception:
            pass

    def load_error(self, exc: BaseException, done: int | None, total: int) -> BaseException:
        """A load failure as the user should read it (the table that failed rolled back)."""
        kept = "" if done is None else f"; {done} of {total} tables are complete and kept"
        if isinstance(exc, psycopg.errors.DiskFull):
            return DbioError(f"the server ran out of disk space while loading ({_first_line(exc)}){kept}",
                             "free space on the server's data directory, then run dbio setup again to resume")
        if isinstance(exc, psycopg.OperationalError):
            return DbioError(f"the connection to the server broke while loading ({_first_line(exc)}){kept}",
                             "check the server, then run dbio setup again to resume")
        if isinstance(exc, psycopg.Error):
            return DbioError(f"the server refused the load ({_first_line(exc)}){kept}",
                             "fix the cause, then run dbio setup again to resume")
        return exc

    finish_setup = staticmethod(catalog.finish_setup)
    verify = staticmethod(catalog.verify)

    def teardown(self, conn: psycopg.Connection) -> Teardown:
        places = catalog.places_of_setup(conn)  # read before the setup record goes
        done = catalog.teardown(conn)
        tablespaces.drop_ours(conn, done, places)
        return done

    default_schema_clash = staticmethod(catalog.default_schema_clash)
    keep_default_schema_out = staticmethod(catalog.keep_default_schema_out)
    # -- run ---------------------------------------------------------------------------
    install_workload = staticmethod(workload.install)
    prepare_run = staticmethod(workload.prepare_run)
    hold_barrier = staticmethod(workload.hold_barrier)
    waiting_at_barrier = staticmethod(workload.waiting_at_barrier)
    release = staticmethod(workload.release)
    forget_run = staticmethod(workload.forget_run)
    has_workload = staticmethod(workload.has_workload)

    def server_clock(self, conn: psycopg.Connection) -> float:
        return float(one_row(conn, "SELECT date_part('epoch', clock_timestamp())")[0])

    release_barrier = staticmethod(workload.release_barrier)
    forget_abandoned_runs = staticmethod(workload.forget_abandoned_runs)
    settle = staticmethod(settling.settle)

    async def connect_session(self, conninfo: str, *, application_name: str, schema_index: int, access_path: str,
                              info: ServerInfo) -> tuple[psycopg.AsyncConnection, int]:
        # readied once per server and run (a run is one event loop); the first sessions, connecting
        # at once, may each ready it
        loop = asyncio.get_running_loop()
        if self._session_targets[0] is not loop:
            self._session_targets = (loop, {})
        targets = self._session_targets[1]
        if conninfo not in targets:
            targets[conninfo] = await server.session_target(conninfo)
        target = targets[conninfo]
        return await server.aconnect_session(
            conninfo, target, application_name=application_name,
            options=lambda existing: workload.startup_options(schema_index, access_path, info.caps.version_num,
                                                              existing))

    init_session = staticmethod(workload.init_session)
    call_slice = staticmethod(workload.call_slice)

    async def backend_pid(self, conn: psycopg.AsyncConnection) -> int:
        return int((await one_row_async(conn, "SELECT pg_backend_pid()"))[0])

    async def cancel_statement(self, conn: psycopg.AsyncConnection, timeout: float) -> bool:
        try:
            await conn.cancel_safe(timeout=timeout)
            return True
        except Exception:
            return False

    def is_cancelled(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.QueryCanceled)

    async def flush_stats(self, conn: psycopg.AsyncConnection) -> None:
        """Make an interrupted session's counters visible now rather than at its next idle second."""
        await conn.execute("SELECT pg_stat_force_next_flush()")

    def plans(self, conn: psycopg.Connection, schema_index: int, access_path: str,
              scan_workers: int | None = None) -> dict[str, Any]:
        workload.init_session_sync(conn, schema_index, access_path)
        select = workload.explain(conn, update=False)
        update = workload.explain(conn, update=True)
        plans = {"select": {"nodes": workload.plan_nodes(select), "plan": select},
                 "update": {"nodes": workload.plan_nodes(update), "plan": update}}
        if scan_workers is not None:
            scan = workload.explain_scan(conn, scan_workers)
            plans["scan"] = {"nodes": workload.plan_nodes(scan), "plan": scan}
        return workload.check_access_path(plans, access_path)

    # -- the read probe ----------------------------------------------------------------
    read_probe_method = ("EXPLAIN (ANALYZE, BUFFERS) of each lookup with track_io_timing on in the probe's "
                         "session: Shared Read Blocks and their I/O Read Time")

    read_probe_connect = staticmethod(probing.connect)
    read_probe = staticmethod(probing.read_many)

    # -- statistics --------------------------------------------------------------------
    async def prepare_monitor(self, conn: psycopg.AsyncConnection) -> None:
        """All views of one snapshot agree with each other (one statistics snapshot per statement)."""
        await conn.execute("SET stats_fetch_consistency = snapshot")

    async def snapshot(self, conn: psycopg.AsyncConnection, info: ServerInfo,
                       run_id: int | None = None) -> dict[str, Any]:
        query = stats.snapshot_sql(info.caps.version_num, None if run_id is None else application_prefix(run_id),
                                   info.caps.read_only)
        return (await one_row_async(conn, query))[0]

    normalize = staticmethod(stats.normalize)

    async def session_states(self, conn: psycopg.AsyncConnection, pids: list[int]) -> list[str]:
        cur = await conn.execute(sqlfiles.text("stats/waits.sql"), {"pids": pids})
        return [stats.session_state(state, wtype, wevent) for _pid, state, wtype, wevent in await cur.fetchall()]

    async def background_pids(self, conn: psycopg.AsyncConnection, session_pids: list[int]) -> list[int]:
        cur = await conn.execute(sqlfiles.text("stats/processes.sql"), {"pids": session_pids})
        return [pid for pid, btype in await cur.fetchall() if btype != "client backend"]

    async def read_helper_pids(self, conn: psycopg.AsyncConnection) -> list[int]:
        cur = await conn.execute(sqlfiles.text("stats/io_workers.sql"))  # none unless io_method = worker
        return [pid for (pid,) in await cur.fetchall()]


if TYPE_CHECKING:  # mypy checks every member's signature against the protocol and the groups FEATURES declares
    _ENGINE: Engine[psycopg.Connection, psycopg.AsyncConnection] = PostgresEngine()
    _PROBE: ReadProbing[psycopg.AsyncConnection] = PostgresEngine()
    _OPERATIONS: TimedOperations = PostgresEngine()
