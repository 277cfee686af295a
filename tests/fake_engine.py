"""A database engine with no database: dbio's Engine protocol over an in-process fake server.

It exists to test the run pipeline itself (connect, barrier, slices, samples, assemble,
reports) without PostgreSQL, and as the template a new engine follows: its SPEC (at the end)
is what registry.register takes (tests/unit/test_engine_spec.py). Its counters are
synthetic and exact: every session runs ITERATIONS_PER_SECOND statements a second, each reading
work_unit blocks from storage (one row per block) at READ_US a read, so a test can check the
figures dbio derives. Its time is its server's (FakeServer.time): the machine's, or a test's virtual time
(dbio/run/clock.py), which the run then runs on too (tests/fake_runs.py); its asyncio waits are on the run's loop,
and so in that time.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from dbio.engines.base import (Capabilities, Check, ProbeRead, RowBatch, ServerInfo, SetupRecord, SetupSpec,
                               SliceRequest, SliceResult, TableJob, TableTiming, Teardown)
from dbio.engines.spec import PROTOCOL_VERSION, EngineSpec, Features
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.errors import ConfigError, UsageError

ITERATIONS_PER_SECOND = 400  # per session: one statement per iteration
READ_US = 250.0  # every read takes this long
UPDATE_EVERY = 4  # with update_pct > 0, every 4th statement is an UPDATE (one block written)
BLOCK = 8192
CACHE_NAME = "the fake cache"  # what its capabilities call its buffer cache (reports use it)
FEATURES = Features(read_probe=True)  # its optional groups: a read probe; no timed maintenance, no standbys


@dataclass
class _Run:
    control: dict[str, Any]
    released: threading.Event = field(default_factory=threading.Event)
    start: float | None = None
    window_open: float | None = None
    deadline: float | None = None
    waiting: int = 0


class FakeServer:
    """The shared state of the fake engine's 'server': runs, barrier, cumulative counters, and its time (the
    run's: a test on virtual time gives the server the same, run/clock.py)."""

    def __init__(self, time: TimeSource = REAL_TIME) -> None:
        self.time = time
        self.lock = threading.Lock()
        self.runs: dict[int, _Run] = {}
        self.pids = itertools.count(900001)
        self.counters = {"reads": 0.0, "read_time_ms": 0.0, "writes": 0.0, "hits": 0.0, "commits": 0.0,
                         "wal_bytes": 0.0, "wal_writes": 0.0, "wal_syncs": 0.0}
        self.connections: set["FakeConnection"] = set()
        self.setup: SetupRecord | None = None
        # when it goes away (stop: every call fails, no new connection) and when it runs no more (freeze: every call
        # waits, as on a SIGSTOPped server, until thaw): each an instant on its time once known, None before
        self._stops: Callable[[], float | None] | None = None
        self._freezes: Callable[[], float | None] | None = None
        self.workload_replicated = True
        self.starts: list[float] = []  # every run's start, as released
        self.unsettled = False  # an earlier run's changes still to settle (set by a test)
        self.settles = 0  # how often a run asked it to settle
        self.last_answer_late = 0.0  # seconds a slice ending at the deadline answers after it (a loaded host)
        self.release_answer_late = 0.0  # seconds the release's answer comes after the sessions were let go

    def stop(self, at: Callable[[], float | None] = lambda: float("-inf")) -> None:
        """It goes away: now, or at the instant at() gives (a test's run, at a point of its timeline)."""
        self._stops = at

    def freeze(self, at: Callable[[], float | None] = lambda: float("-inf")) -> None:
        """It runs no more: now, or at the instant at() gives, until thaw()."""
        self._freezes = at

    def thaw(self) -> None:
        self._freezes = None

    @property
    def stopped(self) -> bool:
        return self._reached(self._stops)

    @property
    def frozen(self) -> bool:
        return self._reached(self._freezes)

    def _reached(self, at: Callable[[], float | None] | None) -> bool:
        instant = None if at is None else at()
        return instant is not None and self.time.wall() >= instant

    def check(self) -> None:
        if self.stopped:
            raise ConnectionError("the fake server stopped")

    async def answer(self, conn: "FakeConnection | None" = None) -> None:
        """A call's answer: none while the server is frozen, unless its connection is given up meanwhile
        (abandon: a frozen server's socket shut by its client), which ends the wait at once."""
        while self.frozen:
            if conn is not None and conn.closed:
                raise ConnectionError("the connection was abandoned")
            await asyncio.sleep(0.01)
        self.check()

    def answer_sync(self, conn: "FakeConnection") -> None:
        while self.frozen:
            if conn.closed:
                raise ConnectionError("the connection was abandoned")
            self.time.sleep_blocking(0.01)
        self.check()

    def add(self, **amounts: float) -> None:
        with self.lock:
            for key, value in amounts.items():
                self.counters[key] += value


@dataclass(eq=False)
class FakeConnection:
    server: FakeServer
    application_name: str
    pid: int
    closed: bool = False
    schema_index: int = 0


class FakeEngine:
    """Implements dbio.engines.base.Engine; every method is what an engine must do, in miniature."""

    name = "fake"
    features = FEATURES
    filler_bytes = 16  # the loader writes each row's key in its first 8 bytes

    def __init__(self, server: FakeServer | None = None, *, version: str = "Fake 1.0", read_only: bool = False,
                 clock_offset: float = 0.0, time: TimeSource | None = None):
        self.server = server or FakeServer(time or REAL_TIME)
        self.time = self.server.time
        self.version = version
        self.read_only = read_only  # a fake hot standby: no control row, its sessions carry the control
        self.clock_offset = clock_offset  # its clock against the host's (server_clock)

    # -- connections and facts ---------------------------------------------------------
    def connect(self, conninfo: str, *, application_name: str,
                notify: Callable[[str], None] | None = None) -> FakeConnection:
        self.server.check()
        conn = FakeConnection(self.server, application_name, next(self.server.pids))
        self.server.connections.add(conn)
        return conn

    def wait_while_recovering(self, conninfo: str, notify: Callable[[str], None]) -> None:
        return None

    async def aconnect(self, conninfo: str, *, application_name: str) -> FakeConnection:
        await self.server.answer()
        return self.connect(conninfo, application_name=application_name)

    def close(self, conn: FakeConnection) -> None:
        conn.closed = True
        self.server.connections.discard(conn)

    async def aclose(self, conn: FakeConnection) -> None:
        self.close(conn)

    def abandon(self, conn: FakeConnection) -> None:
        self.close(conn)

    def probe(self, conn: FakeConnection) -> ServerInfo:
        caps = Capabilities(engine=self.name, server_version=self.version, version_num=10000, has_io_view=True,
                            io_view_has_wal=False, has_backend_cpu=False, can_see_waits=True, data_directory=None,
                            local=False, direct_io=True,
                            missing=(("process CPU", "the fake server has no processes"),),
                            times_data_io=True, times_redo_io=False, cache_name=CACHE_NAME, redo_directory=None,
                            settings_shown=("fake_cache_blocks", "fake_sync"), maintenance_process="sweeper",
                            maintenance_name="the fake sweeper", read_only=self.read_only)
        settings = {"fake_cache_blocks": {"setting": "16", "unit": None, "source": "default"},
                    "fake_sync": {"setting": "on", "unit": None, "source": "default"},
                    "fake_hidden": {"setting": "x", "unit": None, "source": "default"}}
        return ServerInfo(caps=caps, settings=settings, database="fake", user="tester",
                          description=f"{self.version} (in process)", cache_bytes=16 * BLOCK,
                          max_connections=1000, reserved_connections=3,
                          connections_in_use=len(self.server.connections), backend_pid=conn.pid)

    def describe_target(self, conninfo: str) -> str:
        return f"{self.version} (in process)"

    # -- setup: a load is only its record (no rows are kept) -----------------------------
    def read_setup(self, conn: FakeConnection) -> SetupRecord | None:
        return self.server.setup

    def data_files(self, conn: FakeConnection, info: ServerInfo) -> list[str]:
        return []  # no files: its tables are only records

    def redo_sync_rate(self, info: ServerInfo, directory: str, seconds: int) -> dict[str, Any]:
        return {"tool": "none", "method": "none", "syncs_per_s": None, "avg_sync_us": None}

    def check_namespace(self, conn: FakeConnection, spec: SetupSpec) -> None:
        return None

    def begin_setup(self, conn: FakeConnection, spec: SetupSpec, *, setup_id: str,
                    server_version: str) -> SetupRecord:
        self.server.setup = SetupRecord(setup_id, spec, "loading", time.strftime("%Y-%m-%dT%H:%M:%S"),
                                        server_version=server_version)
        return self.server.setup

    def prepare_load_session(self, conn: FakeConnection) -> None:
        return None

    def table_is_loaded(self, record: SetupRecord, job: TableJob) -> bool:
        return any(t.get("schema") == job.schema_index and t.get("kind") == job.kind for t in record.tables_done)

    def load_table(self, conn: FakeConnection, record: SetupRecord, job: TableJob, batches: Iterator[RowBatch],
                   on_rows: Callable[[int], None], should_stop: Callable[[], bool] = lambda: False) -> TableTiming:
        began = self.time.monotonic()
        for batch in batches:
            if should_stop():
                break
            on_rows(len(batch))
        record.tables_done.append({"schema": job.schema_index, "kind": job.kind, "rows": job.rows})
        return TableTiming(load=self.time.monotonic() - began, index=0.0, analyze=0.0)

    def cancel(self, conn: FakeConnection) -> None:
        return None

    def load_error(self, exc: BaseException, done: int | None, total: int) -> BaseException:
        return exc

    def finish_setup(self, conn: FakeConnection, record: SetupRecord) -> SetupRecord:
        record.status = "ready"
        return record

    def verify(self, conn: FakeConnection, record: SetupRecord) -> list[Check]:
        return [Check("loaded", record.status == "ready", record.status)]

    def teardown(self, conn: FakeConnection) -> Teardown:
        self.server.setup = None
        return Teardown(dropped=["everything"])

    def default_schema_clash(self, conn: FakeConnection) -> str | None:
        return None

    def keep_default_schema_out(self, conn: FakeConnection) -> bool:
        return False

    # -- run: control connection ---------------------------------------------------------
    def install_workload(self, conn: FakeConnection) -> None:
        return None

    def prepare_run(self, conn: FakeConnection, run_id: int, params: dict[str, Any]) -> None:
        with self.server.lock:
            self.server.runs[run_id] = _Run(dict(params))

    def plans(self, conn: FakeConnection, schema_index: int, access_path: str,
              scan_workers: int | None = None) -> dict[str, Any]:
        plan = [{"Plan": {"Node Type": "Fake Lookup"}}]
        plans = {"select": {"nodes": ["Fake Lookup"], "plan": plan}, "update": {"nodes": ["Fake Lookup"], "plan": plan},
                 "access_path": access_path, "expected_node": "Fake Lookup"}
        if scan_workers is not None:
            plans["scan"] = {"nodes": ["Fake Scan"], "plan": [{"Plan": {"Node Type": "Fake Scan"}}]}
        return plans

    def hold_barrier(self, conn: FakeConnection, run_id: int) -> None:
        with self.server.lock:  # a read-only node has no run row: the barrier alone
            self.server.runs.setdefault(run_id, _Run({})).released.clear()

    def waiting_at_barrier(self, conn: FakeConnection, run_id: int) -> int:
        self.server.answer_sync(conn)
        return self.server.runs[run_id].waiting

    def release(self, conn: FakeConnection, run_id: int, *, warmup: float, run_time: float,
                start: float | None = None) -> tuple[float, float, float | None]:
        self.server.answer_sync(conn)
        run = self.server.runs[run_id]
        run.start = self.time.wall() if start is None else start
        self.server.starts.append(run.start)
        run.window_open = run.start + warmup
        run.deadline = run.start + warmup + run_time if run_time > 0 else None
        run.released.set()
        if self.server.release_answer_late:
            self.time.sleep_blocking(self.server.release_answer_late)
        return run.start, run.window_open, run.deadline

    def forget_run(self, conn: FakeConnection, run_id: int) -> None:
        self.server.answer_sync(conn)
        run = self.server.runs.pop(run_id, None)
        if run is not None:
            run.released.set()  # sessions still at the barrier find no run and return

    def has_workload(self, conn: FakeConnection) -> bool:
        return self.server.workload_replicated  # a fake standby whose primary never installed the loop: False

    def server_clock(self, conn: FakeConnection) -> float:
        self.server.answer_sync(conn)
        return self.time.wall() + self.clock_offset

    def release_barrier(self, conn: FakeConnection, run_id: int) -> None:
        self.server.answer_sync(conn)
        run = self.server.runs.pop(run_id, None)
        if run is not None:
            run.released.set()

    def forget_abandoned_runs(self, conn: FakeConnection, alive: Callable[[str], bool]) -> int:
        return 0

    def settle(self, conn: FakeConnection) -> dict[str, Any] | None:
        self.server.settles += 1
        if not self.server.unsettled:
            return None
        self.server.unsettled = False
        return {"seconds": 0.25, "done": "the fake server's pending work"}

    # -- run: sessions ---------------------------------------------------------------------
    async def connect_session(self, conninfo: str, *, application_name: str, schema_index: int, access_path: str,
                              info: ServerInfo) -> tuple[FakeConnection, int]:
        conn = await self.aconnect(conninfo, application_name=application_name)
        return conn, await self.init_session(conn, schema_index, access_path)

    async def init_session(self, conn: FakeConnection, schema_index: int, access_path: str) -> int:
        conn.schema_index = schema_index
        return conn.pid

    async def call_slice(self, conn: FakeConnection, request: SliceRequest) -> SliceResult:
        run_id, barrier, control = request.run_id, request.barrier, request.control
        max_iterations = request.max_iterations
        run = self.server.runs.get(run_id)
        if barrier and run is not None:
            run.waiting += 1
            while not run.released.is_set():
                await asyncio.sleep(0.005)
            run = self.server.runs.get(run_id)
        if control is not None:  # a read-only node: the run as its sessions carry it
            run = _Run(control, start=control["started_at"], window_open=control["window_open"],
                       deadline=control["deadline"])
        if barrier and run is not None and run.start is not None:  # a start agreed in advance: wait for it
            await asyncio.sleep(max(0.0, run.start - self.time.wall()))
        if run is None or run.start is None:
            raise RuntimeError(f"run {run_id} is gone")
        slice_seconds = float(run.control["slice_seconds"])
        began = self.time.wall()
        end = run.start + slice_seconds * (int((began - run.start) / slice_seconds) + 1)
        if run.deadline is not None:
            end = min(end, run.deadline)
        iterations = max(0, round((end - began) * ITERATIONS_PER_SECOND))
        if max_iterations is not None:
            iterations = min(iterations, max_iterations)
        await asyncio.sleep(max(0.0, end - self.time.wall()))
        await self.server.answer(conn)
        # as the engines' loops: a session that did its max_iterations is done
        result = self._slice(run, iterations, end, done=max_iterations is not None and iterations >= max_iterations)
        if self.server.last_answer_late and run.deadline is not None and end >= run.deadline - 1e-6:
            await asyncio.sleep(self.server.last_answer_late)  # its work counted at its end, its answer late
        return result

    def _slice(self, run: _Run, iterations: int, end: float, *, done: bool = False) -> SliceResult:
        bounds, rows = run.control["bounds_us"], int(run.control["work_unit"])
        update_rows = int(run.control.get("update_work_unit") or rows)
        updates = iterations // UPDATE_EVERY if run.control.get("update_pct") else 0
        selects = iterations - updates
        select_us, update_us = rows * READ_US, update_rows * READ_US  # every row read from storage, one by one
        hist = np.zeros((4, len(bounds) + 1), dtype=np.int64)  # select, update, scan, hot
        hist[0, bisect.bisect_left(bounds, select_us)] = selects
        hist[1, bisect.bisect_left(bounds, update_us)] += updates
        reads = selects * rows + updates * update_rows
        self.server.add(reads=reads, read_time_ms=reads * READ_US / 1000, writes=updates * update_rows,
                        commits=updates, wal_bytes=updates * update_rows * 200.0, wal_writes=updates,
                        wal_syncs=updates)
        done = done or (run.deadline is not None and end >= run.deadline - 1e-6)
        return SliceResult(iterations=iterations, selects=selects, updates=updates, scans=0, rows=reads,
                           think_seconds=0.0, sum_us=[selects * select_us, updates * update_us, 0.0, 0.0],
                           max_us=[select_us if selects else 0.0, update_us if updates else 0.0, 0.0, 0.0],
                           hist=hist, slice_end=end, done=done)

    async def cancel_statement(self, conn: FakeConnection, timeout: float) -> bool:
        return True

    async def flush_stats(self, conn: FakeConnection) -> None:
        await self.server.answer(conn)

    def is_cancelled(self, exc: BaseException) -> bool:
        return False

    async def backend_pid(self, conn: FakeConnection) -> int:
        return conn.pid

    # -- the read probe: every lookup reads one block in READ_US ------------------------------
    read_probe_method = "fake: each lookup reads one block in READ_US"

    async def read_probe_connect(self, conninfo: str, access_path: str, application_name: str = "dbio:probe",
                                 lookups: Sequence[int] = ()) -> tuple[FakeConnection, int]:
        conn = await self.aconnect(conninfo, application_name=application_name)
        return conn, conn.pid

    async def read_probe(self, conn: FakeConnection, keys: Sequence[int]) -> list[ProbeRead]:
        await self.server.answer(conn)
        return [ProbeRead(blocks_read=1, read_us=READ_US) for _ in keys]

    # -- statistics ------------------------------------------------------------------------
    async def prepare_monitor(self, conn: FakeConnection) -> None:
        return None

    async def snapshot(self, conn: FakeConnection, info: ServerInfo, run_id: int | None = None) -> dict[str, Any]:
        await self.server.answer(conn)
        with self.server.lock:
            return {"t": self.time.wall(), **self.server.counters}

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        reads, writes = raw["reads"], raw["writes"]
        io = {"reads": reads, "read_bytes": reads * BLOCK, "read_time_ms": raw["read_time_ms"], "writes": writes,
              "write_bytes": writes * BLOCK, "write_time_ms": None, "extends": None, "extend_bytes": None,
              "hits": raw["hits"], "evictions": None, "reuses": None, "fsyncs": None, "fsync_time_ms": None,
              "writebacks": None}
        return {"t": raw["t"], "data": io, "client": io, "client_normal": io, "by_backend": None,
                "db": {"commits": raw["commits"], "rollbacks": 0.0, "blks_read": reads, "blks_hit": raw["hits"]},
                "checkpoints": {"done": 0.0, "buffers_written": 0.0},
                "wal": {"bytes": raw["wal_bytes"], "records": raw["wal_writes"], "fpi": 0.0, "buffers_full": 0.0,
                        "writes": raw["wal_writes"], "write_bytes": None, "write_time_ms": None,
                        "syncs": raw["wal_syncs"], "sync_time_ms": None}}

    async def session_states(self, conn: FakeConnection, pids: list[int]) -> list[str]:
        await self.server.answer(conn)
        return ["IO:DataFileRead" if i % 2 else "CPU" for i in range(len(pids))]

    async def background_pids(self, conn: FakeConnection, session_pids: list[int]) -> list[int]:
        return []

    async def read_helper_pids(self, conn: FakeConnection) -> list[int]:
        return []


# -- the fake engine's spec: what registry.register takes (tests/unit/test_engine_spec.py) --------------
# It has no managed instance: every command names its server with --dsn fake://NAME, each NAME one fake
# server in this process (a setup and the run after it find the same one).
SERVERS: dict[str, FakeServer] = {}
NO_INSTANCE = UsageError("the fake engine has no managed instance", "name its server with --dsn fake://NAME")


def _server(conninfo: str) -> FakeServer:
    return SERVERS.setdefault(conninfo, FakeServer())


def _resolve(config: Any, *, purpose: str, sessions: int, notify: Callable[[str], None]) -> tuple[Any, str, None]:
    if config.connection.embedded:
        raise NO_INSTANCE
    return FakeEngine(_server(config.connection.dsn)), config.connection.dsn, None


def _no_instance(*_: Any, **__: Any) -> Any:
    raise NO_INSTANCE


@contextlib.contextmanager
def _alone(config: Any, command: str, notify: Callable[[str], None]) -> Iterator[None]:
    yield  # one process: nothing else holds a fake server


SPEC = EngineSpec(
    name="fake", title="the fake engine", protocol=PROTOCOL_VERSION, features=FEATURES, options=(),
    dsn_schemes=("fake",), password_env="DBIO_FAKE_PASSWORD", instance_record="dbio-fake-instance.json",
    restart_knobs={}, layout_knobs={}, remembered=(),
    create_engine=FakeEngine,
    check=lambda config: [] if config.connection.dsns else [ConfigError("dsn", "", "the fake engine has no managed "
                                                                         "instance", "give --dsn fake://NAME")],
    instance_config=lambda values, workload: values,
    default_data_dir=lambda: Path("/nonexistent/dbio-fake-instance"),
    resolve=_resolve, instance_for=_no_instance, exclusive=_alone,
    relayout=lambda config, notify, check_only=False: None,
    redact_dsn=lambda dsn: dsn, has_password=lambda dsn: False, same_server=lambda dsn, redacted: dsn == redacted,
    scrub=lambda text: text, server_error_text=lambda exc: None, builtin_scripts=dict,
    complete_result=lambda document: document, complete_manifest=lambda manifest: manifest,
)
