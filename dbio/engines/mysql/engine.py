"""MySQL and MariaDB (InnoDB) behind dbio's Engine interface.

PyMySQL is synchronous: the async methods run its calls in threads of the engine's own pool,
large enough for every session of a run to wait in the server at once."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import pymysql

from dbio.engines.base import (ProbeRead, RowBatch, ServerInfo, SetupRecord, SliceRequest,
                               SliceResult, TableJob, TableTiming)
from dbio.engines.mysql import catalog, connection, loader, server, sqlfiles, stats, verify, workload, wsrep
from dbio.engines.mysql import settle as settling
from dbio.engines.mysql.connection import Connection
from dbio.engines.mysql.facts import FEATURES
from dbio.errors import DbioError
from dbio.stats import histogram

if TYPE_CHECKING:
    from dbio.engines.base import Engine, ReadProbing

_POOL = ThreadPoolExecutor(max_workers=512, thread_name_prefix="dbio-mysql")


async def _in_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(_POOL, lambda: fn(*args, **kwargs))


class MysqlEngine:
    name = "mysql"
    features = FEATURES  # no timed maintenance (dbio ops refuses); members: a Galera cluster's nodes
    kinds = ("select", "update", "scan", "hot")

    def __init__(self) -> None:
        self.page_size = 16384  # until probe() says otherwise
        self.own_ids: set[int] = set()  # connection ids of this dbio's connections (not "other sessions")
        self.pid_to_id: dict[int, int] = {}  # what init_session returned -> the session's connection id
        self.bounds = histogram.bounds_us()
        self.sees_waits = False  # performance_schema keeps the sessions' current waits (probe() says)
        self.galera = False  # a Galera node (probe() says): its sessions read outside a primary component too

    @property
    def filler_bytes(self) -> int:
        return loader.filler_bytes(self.page_size)

    # -- connections and facts ---------------------------------------------------------
    def connect(self, conninfo: str, *, application_name: str,
                notify: Callable[[str], None] | None = None) -> Connection:
        conn = connection.connect(conninfo, application_name=application_name)
        self.own_ids.add(conn.thread_id)
        return conn

    def wait_while_recovering(self, conninfo: str, notify: Callable[[str], None]) -> None:
        self.close(self.connect(conninfo, application_name="dbio:wait"))

    async def aconnect(self, conninfo: str, *, application_name: str) -> Connection:
        return await _in_thread(self.connect, conninfo, application_name=application_name)

    def close(self, conn: Connection) -> None:
        conn.close()

    async def aclose(self, conn: Connection) -> None:
        await _in_thread(conn.close)

    abandon = staticmethod(connection.abandon)

    def probe(self, conn: Connection) -> ServerInfo:
        info = server.probe(conn)
        self.page_size = server.page_size(info)
        self.sees_waits = info.caps.can_see_waits
        self.galera = info.cluster is not None
        return info

    def describe_target(self, conninfo: str) -> str:
        from dbio.engines.mysql import dsn

        return dsn.describe(dsn.parse(conninfo))

    # -- setup -------------------------------------------------------------------------
    read_setup = staticmethod(catalog.read_setup)

    def data_files(self, conn: Connection, info: ServerInfo) -> list[str]:
        if not info.caps.local or not info.caps.data_directory:
            return []
        names = [n for n in catalog.dbio_tables(conn) if n.startswith("dbio_cf") and catalog.is_dbio_table_name(n)]
        files = [os.path.join(info.caps.data_directory, conn.dsn.database, f"{n}.ibd") for n in sorted(names)]
        return [f for f in files if os.path.exists(f)]

    def redo_sync_rate(self, info: ServerInfo, directory: str, seconds: int) -> dict[str, Any]:
        return {"tool": "none", "method": "not measured for InnoDB yet", "syncs_per_s": None, "avg_sync_us": None,
                "command": None}

    check_namespace = staticmethod(catalog.check_namespace)
    begin_setup = staticmethod(catalog.begin_setup)

    def prepare_load_session(self, conn: Connection) -> None:
        return None

    table_is_loaded = staticmethod(loader.table_is_loaded)

    def load_table(self, conn: Connection, record: SetupRecord, job: TableJob, batches: Iterator[RowBatch],
                   on_rows: Callable[[int], None], should_stop: Callable[[], bool] = lambda: False) -> TableTiming:
        return loader.load_table(conn, record, job, batches, on_rows, should_stop, self.page_size)


    def cancel(self, conn: Connection) -> None:
        connection.kill_query(conn)  # its bool (whether a statement was running) is no answer here

    def load_error(self, exc: BaseException, done: int | None, total: int) -> BaseException:
        kept = "" if done is None else f"; {done} of {total} tables are complete and kept"
        if not isinstance(exc, pymysql.err.MySQLError):
            return exc
        text = connection.server_error_text(exc)
        code = exc.args[0] if exc.args else None
        if code in (1114, 1021, 3):  # table full, disk full, error writing
            return DbioError(f"the server ran out of space while loading ({text}){kept}",
                             "free space on the server's data directory, then run dbio setup again to resume")
        if isinstance(exc, pymysql.err.OperationalError):
            return DbioError(f"the connection to the server broke while loading ({text}){kept}",
                             "check the server, then run dbio setup again to resume")
        return DbioError(f"the server refused the load ({text}){kept}", "fix the cause, then run dbio setup again")

    finish_setup = staticmethod(catalog.finish_setup)
    verify = staticmethod(verify.verify)
    teardown = staticmethod(catalog.teardown)

    def default_schema_clash(self, conn: Connection) -> str | None:
        return None  # MySQL has no default schema per user

    def keep_default_schema_out(self, conn: Connection) -> bool:
        return False

    # -- run: control connection ---------------------------------------------------------
    install_workload = staticmethod(workload.install)
    prepare_run = staticmethod(workload.prepare_run)

    def plans(self, conn: Connection, schema_index: int, access_path: str,
              scan_workers: int | None = None) -> dict[str, Any]:
        return workload.plans(conn, schema_index, scans=scan_workers is not None)

    hold_barrier = staticmethod(workload.hold_barrier)
    waiting_at_barrier = staticmethod(workload.waiting_at_barrier)
    release = staticmethod(workload.release)
    forget_run = staticmethod(workload.forget_run)

    def has_workload(self, conn: Connection) -> bool:
        return True  # its probe refuses replicas and read-only servers: no node waits for a replicated loop

    server_clock = staticmethod(workload.server_clock)

    def release_barrier(self, conn: Connection, run_id: int) -> None:
        raise NotImplementedError("read-only MySQL nodes are not supported")

    forget_abandoned_runs = staticmethod(workload.forget_abandoned_runs)
    settle = staticmethod(settling.settle)

    # -- run: sessions -------------------------------------------------------------------
    async def connect_session(self, conninfo: str, *, application_name: str, schema_index: int, access_path: str,
                              info: ServerInfo) -> tuple[Connection, int]:
        conn = await self.aconnect(conninfo, application_name=application_name)
        return conn, await self.init_session(conn, schema_index, access_path)

    async def init_session(self, conn: Connection, schema_index: int, access_path: str) -> int:
        await _in_thread(workload.init_session, conn, schema_index, self.bounds)
        if self.galera:
            await _in_thread(wsrep.read_anyway, conn)
        pid = conn.os_tid or conn.thread_id
        self.pid_to_id[pid] = conn.thread_id
        return pid

    async def call_slice(self, conn: Connection, request: SliceRequest) -> SliceResult:
        # no read-only MySQL node (replica.py refuses one): its sessions never carry the run's control
        return await _in_thread(workload.call_slice, conn, len(self.bounds) + 1, run_id=request.run_id,
                                session=request.session, barrier=request.barrier,
                                iterations_before=request.iterations_before, selects_before=request.selects_before,
                                max_iterations=request.max_iterations, think_left=request.think_left,
                                due=request.due)

    async def cancel_statement(self, conn: Connection, timeout: float) -> bool:
        try:
            return await asyncio.wait_for(_in_thread(connection.kill_query, conn), timeout)
        except Exception:
            return False

    async def flush_stats(self, conn: Connection) -> None:
        return None  # InnoDB's counters are current at once

    is_cancelled = staticmethod(connection.is_cancelled)

    async def backend_pid(self, conn: Connection) -> int:
        return conn.os_tid or conn.thread_id

    # -- the read probe ----------------------------------------------------------------
    read_probe_method = ("MariaDB's ANALYZE FORMAT=JSON of each lookup: r_engine_stats pages_read_count and "
                         "pages_read_time_ms, timed inside InnoDB")

    async def read_probe_connect(self, conninfo: str, access_path: str, application_name: str = "dbio:probe",
                                 lookups: Sequence[int] = ()) -> tuple[Connection, int]:
        from dbio.engines.mysql import read_probe

        conn = await self.aconnect(conninfo, application_name=application_name or read_probe.PROBE_NAME)
        conn.probe_lookups = tuple(lookups)
        try:
            await _in_thread(read_probe.check, conn)
        except BaseException:
            await self.aclose(conn)
            raise
        return conn, conn.os_tid or conn.thread_id

    async def read_probe(self, conn: Connection, keys: Sequence[int]) -> list[ProbeRead]:
        from dbio.engines.mysql import read_probe

        return await _in_thread(read_probe.read_many, conn, keys)

    # -- statistics ----------------------------------------------------------------------
    async def prepare_monitor(self, conn: Connection) -> None:
        return None

    async def snapshot(self, conn: Connection, info: ServerInfo, run_id: int | None = None) -> dict[str, Any]:
        return await _in_thread(stats.read, conn, set(self.own_ids), info.caps.times_data_io)

    normalize = staticmethod(stats.normalize)

    async def session_states(self, conn: Connection, pids: list[int]) -> list[str]:
        ids = [self.pid_to_id.get(pid, pid) for pid in pids]
        if not ids:
            return []
        waits = sqlfiles.statement("session_waits.sql") + " (" + ",".join(str(int(i)) for i in ids) + ")"

        def read() -> list[tuple]:
            return stats.state_rows(stats.processlist(conn), conn.query(waits) if self.sees_waits else [], ids)

        return stats.session_labels(await _in_thread(read), ids, waits_seen=self.sees_waits)

    async def background_pids(self, conn: Connection, session_pids: list[int]) -> list[int]:
        return []  # InnoDB's background threads are threads of the one server process

    async def read_helper_pids(self, conn: Connection) -> list[int]:
        return []  # InnoDB reads a buffer-pool miss in the session's own thread


if TYPE_CHECKING:  # mypy checks every member's signature against the protocol and the groups FEATURES declares
    _ENGINE: Engine[Connection, Connection] = MysqlEngine()
    _PROBE: ReadProbing[Connection] = MysqlEngine()
