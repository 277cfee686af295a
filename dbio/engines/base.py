"""What dbio needs from a database engine, and the records that cross that boundary.

Code outside engines/ asks the capabilities (caps.has_io_view), never the engine's name.
A second engine is a new package implementing Engine, not a change to the run or reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol, Sequence, TypeVar, cast

import numpy as np

from dbio.engines.spec import Features


def session_application_name(run_id: int, session: int) -> str:
    """How dbio names its sessions on the server: the run's short id and the session number."""
    return f"{application_prefix(run_id)}{session}"


def application_prefix(run_id: int) -> str:
    return f"dbio:{run_id % 100000}:"


HELPERS = ("control", "monitor", "waits", "probe")  # a run's own connections besides its sessions


def helper_application_name(run_id: int, helper: str) -> str:
    """A run's control, monitor or wait-sampler connection: named with the run, so that runs sharing a
    server (the parts of one run) each count only their own."""
    return f"dbio:{helper}:{run_id % 100000}"


@dataclass(frozen=True)
class Capabilities:
    engine: str
    server_version: str
    version_num: int
    has_io_view: bool  # per backend type / object / context I/O counters
    io_view_has_wal: bool  # WAL writes and syncs are part of the I/O view
    has_backend_cpu: bool  # server processes are on this host: /proc gives their CPU time
    can_see_waits: bool  # wait events of dbio's sessions are visible
    data_directory: str | None  # None when the server does not tell us (privileges)
    local: bool  # the server runs on this machine
    direct_io: bool  # data files are opened with O_DIRECT
    missing: tuple[tuple[str, str], ...] = ()  # (figure, why it is unavailable)
    # Facts reports and verdicts word themselves with, so that they never name an engine's settings:
    times_data_io: bool = False  # data-file reads and writes are timed (read/write latency figures)
    times_redo_io: bool = False  # redo log writes and syncs are timed
    cache_name: str = "the buffer cache"  # what its users call its buffer cache (PostgreSQL: shared_buffers)
    redo_directory: str | None = None  # where its redo log lives, when the server is local and it is known
    settings_shown: tuple[str, ...] = ()  # the settings a report lists, in this order
    maintenance_process: str | None = None  # the process kind (counters' by_backend) of background maintenance
    maintenance_name: str = "background maintenance"  # what to call that work (PostgreSQL: autovacuum)
    read_only: bool = False  # the server takes no writes (a hot standby): its sessions run no UPDATE
    redo_name: str = "WAL"  # what its users call its redo log (InnoDB: the redo log)
    block_name: str = "block"  # what its users call the unit of a data file it reads (InnoDB: page)
    page_bytes: int = 8192  # bytes of that unit: a buffer-cache miss reads one
    own_instance: str = "embedded"  # what dbio's own instance of it is called (MariaDB/MySQL: managed)
    # the most its server adds to a file at once while writing, and the setting that says so: the disk guard
    # keeps that much free besides its floor (PostgreSQL: a WAL segment; InnoDB: a tablespace's autoextension)
    growth_step_bytes: int = 0
    growth_step_setting: str | None = None
    # its I/O counters gain a session's work only as the session's call ends (PostgreSQL: a backend publishes
    # its counters as it goes idle); False: as the work is done (InnoDB's status counters): a per-interval rate of
    # them needs no wait for the sessions' calls (stats/published.py)
    counts_at_call_end: bool = True

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        data = asdict(self)
        data["missing"] = [{"figure": f, "why": w} for f, w in self.missing]
        data["settings_shown"] = list(self.settings_shown)
        return data


@dataclass(frozen=True)
class ServerInfo:
    caps: Capabilities
    settings: dict[str, dict[str, Any]]  # name -> {setting, unit, source}
    database: str
    user: str
    description: str  # "PostgreSQL 18.6 at /path/socket:port db dbio" (never a password)
    cache_bytes: int  # the engine's buffer cache (Capabilities.cache_name)
    max_connections: int
    reserved_connections: int
    connections_in_use: int
    backend_pid: int
    identity: str | None = None  # the same for two connections to one server (a run's nodes must differ)
    # the multi-writer cluster the server is a node of (a Galera cluster's state uuid): a run's nodes are one
    # cluster's or none's; None: a server on its own
    cluster: str | None = None


@dataclass(frozen=True)
class SetupSpec:
    """What a load holds; two setups are the same data when their specs are equal."""

    scale: int  # rows (= blocks) per schema
    schemas: int
    scan_table_blocks: int
    key_order: str
    row_format: int = 1
    places: tuple[str, ...] = ()  # directories the schemas' tables are spread over in turn; none: the server's

    @property
    def partitions(self) -> int:
        """Parts the single schema's table is split into, one per place (0: not split)."""
        return len(self.places) if self.schemas == 1 and len(self.places) > 1 else 0

    def part_keys(self) -> list[tuple[int, int]]:
        """Each part's first and last key: keys 1..scale in consecutive ranges as even as can be."""
        n = self.partitions
        bounds = [self.scale * k // n for k in range(n + 1)] if n else []
        return [(bounds[k] + 1, bounds[k + 1]) for k in range(n)]

    def to_dict(self) -> dict[str, Any]:
        out = {"scale": self.scale, "schemas": self.schemas, "scan_table_blocks": self.scan_table_blocks,
               "key_order": self.key_order, "row_format": self.row_format}
        return {**out, "places": list(self.places)} if self.places else out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SetupSpec":
        return cls(int(data["scale"]), int(data["schemas"]), int(data["scan_table_blocks"]),
                   str(data["key_order"]), int(data.get("row_format", 1)), tuple(data.get("places") or ()))

    def differences(self, other: "SetupSpec") -> list[str]:
        out = []
        for key in ("scale", "schemas", "scan_table_blocks", "key_order", "row_format", "places"):
            mine, theirs = getattr(self, key), getattr(other, key)
            if mine != theirs:
                out.append(f"{key} {mine} -> {theirs}")
        return out


@dataclass(frozen=True)
class TableJob:
    schema_index: int  # 1-based; 0 for nothing
    kind: str  # data | scan
    rows: int
    part: int = 0  # 1-based partition of a split data table (single schema over data_dirs); 0: the whole table
    first_key: int = 1  # the part's keys are first_key .. first_key + rows - 1


@dataclass
class SetupRecord:
    setup_id: str
    spec: SetupSpec
    status: str  # loading | ready
    started_at: str
    finished_at: str | None = None
    seconds: float | None = None
    loaded_bytes: int | None = None
    streams: int | None = None
    steps: dict[str, float] = field(default_factory=dict)
    dbio_version: str = ""
    server_version: str = ""
    tables_done: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mb_per_s(self) -> float | None:
        if not self.seconds or not self.loaded_bytes:
            return None
        return self.loaded_bytes / 1e6 / self.seconds

    def to_dict(self) -> dict[str, Any]:
        return {"setup_id": self.setup_id, "spec": self.spec.to_dict(), "status": self.status,
                "started_at": self.started_at, "finished_at": self.finished_at, "seconds": self.seconds,
                "loaded_bytes": self.loaded_bytes, "mb_per_s": self.mb_per_s, "streams": self.streams,
                "steps": self.steps, "dbio_version": self.dbio_version, "server_version": self.server_version}


@dataclass(frozen=True)
class RowBatch:
    """Rows to load: keys, the updatable counter, and incompressible filler bytes."""

    keys: np.ndarray  # int64
    filler: np.ndarray  # uint8, shape (n, filler_bytes)

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True)
class TableTiming:
    load: float
    index: float
    analyze: float


@dataclass
class Teardown:
    """What a teardown did: dropped, dropped with one of dbio's tables although not dbio's
    (a user's index on it), and left in place, each with its reason."""

    dropped: list[str] = field(default_factory=list)
    with_it: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    """One verification result."""

    name: str
    ok: bool
    detail: str


@dataclass
class SliceResult:
    """What one session did in one slice of the work loop."""

    iterations: int
    selects: int
    updates: int
    scans: int
    rows: int
    think_seconds: float
    sum_us: list[float]  # per kind: select, update, scan, hot (run/tally.KINDS)
    max_us: list[float]
    hist: Any  # [kind][bucket]: a (4, buckets) array
    slice_end: float  # server clock, epoch seconds
    done: bool
    think_left: float = 0.0  # think time cut at the slice's end, owed by the next slice
    hot_rows: int = 0  # rows the hot spot's SELECTs counted (in rows too)
    retries: int = 0  # UPDATEs run again after a conflict rolled them back (in updates once each)
    # with a rate (an open loop): sum_us, max_us and hist have two kinds more, each statement's latency from its
    # intended start and its schedule lag (run/slice_totals.SCHEDULE); due: the next intended start (epoch)
    due: float | None = None
    late: int = 0  # statements later than the latency limit from their intended start
    # statements due in the warm-up that a late loop started after the window opened: the warm-up's queue carried
    # in, work the window did but not arrivals of the window's schedule (stats/rate.derive leaves them out)
    due_before_window: int = 0
    # the loop's waits for intended starts rounded up by its engine's timer (PostgreSQL's pg_sleep: whole milliseconds),
    # summed over the slice's statements: dbio's own lateness, left out of their latency from the intended start
    wait_rounding_us: float = 0.0


@dataclass(frozen=True)
class SliceRequest:
    """One call of a session's work loop (run/sessions.py): the run and session, where the session stands,
    and what it still owes."""

    run_id: int
    session: int
    barrier: bool  # the session's first call: it waits at the run's start barrier
    iterations_before: int  # the session's iterations so far (the loop's UPDATE share and hot spot follow them)
    selects_before: int
    max_iterations: int | None  # --work-loop: the iterations left (None: until the deadline)
    think_left: float  # think time cut at the previous slice's end, owed now
    control: dict[str, Any] | None = None  # a read-only node's run control, carried in every call
    due: float | None = None  # with a rate: the next statement's intended start, from the previous slice (epoch)


@dataclass(frozen=True)
class ProbeRead:
    """What one read-probe lookup read (run/read_probe.py): blocks from outside the engine's cache, and
    the engine's own timer around those reads (us; None: not timed)."""

    blocks_read: int
    read_us: float | None


class Operations(Protocol):
    """Timed maintenance work on one server's loaded data set (dbio ops; engines/postgres/operations.py).

    window: a context manager factory the command supplies; the operation enters it around exactly
    the part it times, and the command's readings there give the device and CPU figures."""

    def connect(self) -> Any: ...
    def places(self, conn: Any, data_directory: str | None) -> dict[str, list[str]]: ...  # role -> directories
    def dataset_bytes(self, conn: Any) -> int: ...
    def loaded(self, conn: Any) -> SetupRecord: ...  # refuses when nothing is loaded
    def embedded(self, what: str) -> Any: ...  # refuses with --dsn
    def check_wal_room(self, wal_bytes: int) -> None: ...
    def check_dirty(self, dirty_bytes: int, cache_bytes: int, data_bytes: int) -> None: ...
    def rebuild_indexes(self, conn: Any, window: Callable[[], Any]) -> dict[str, Any]: ...
    def backup(self, destination: Any, window: Callable[[], Any], cold: bool = False) -> dict[str, Any]: ...
    # changes_per_block 1: each block changed once after the checkpoint (redo replays full-page images);
    # more: over a span larger than the cache, so that redo reads back the blocks it evicted
    def recovery(self, record: SetupRecord, wal_bytes: int, window: Callable[[], Any],
                 changes_per_block: int = 1) -> dict[str, Any]: ...
    def checkpoint(self, record: SetupRecord, dirty_bytes: int, window: Callable[[], Any]) -> dict[str, Any]: ...
    # during a run's window (--event vacuum, backup:PATH, index), the server left as it runs
    def vacuum_now(self, conn: Any) -> dict[str, Any]: ...  # dbio's loaded tables vacuumed: seconds, tables, wal_bytes
    def tables(self, conn: Any) -> list[tuple[str, str, str, int]]: ...  # dbio's: schema, table, index, bytes
    def backup_refusal(self, conn: Any) -> str | None: ...  # why the running server allows no online backup
    def backup_now(self, destination: Any) -> dict[str, Any]: ...


# An engine's own connection objects, which dbio only passes back: C for the calls that run in a thread,
# A for those awaited on the run's event loop. A protocol group that only takes them is contravariant in them.
C = TypeVar("C")
A = TypeVar("A")
C_in = TypeVar("C_in", contravariant=True)
A_in = TypeVar("A_in", contravariant=True)


class Connecting(Protocol[C, A]):
    """Connections and the facts a server gives about itself."""

    name: str  # its spec's name (EngineSpec.name; Capabilities.engine)
    features: Features  # its optional groups (its spec's): asked instead of hasattr

    def connect(self, conninfo: str, *, application_name: str, notify: Callable[[str], None] | None = None) -> C: ...
    def wait_while_recovering(self, conninfo: str, notify: Callable[[str], None]) -> None: ...
    async def aconnect(self, conninfo: str, *, application_name: str) -> A: ...
    def close(self, conn: C) -> None: ...
    async def aclose(self, conn: A) -> None: ...
    def abandon(self, conn: C) -> None: ...  # give up a connection whose server does not answer, at once
    def probe(self, conn: C) -> ServerInfo: ...
    def describe_target(self, conninfo: str) -> str: ...


class Loading(Protocol[C_in]):
    """The data set: its record, the load (load.py runs it over parallel streams), its checks."""

    @property
    def filler_bytes(self) -> int: ...  # filler per row that makes one row fill one block's share
    def read_setup(self, conn: C_in) -> SetupRecord | None: ...
    def check_namespace(self, conn: C_in, spec: SetupSpec) -> None: ...
    def begin_setup(self, conn: C_in, spec: SetupSpec, *, setup_id: str, server_version: str) -> SetupRecord: ...
    def prepare_load_session(self, conn: C_in) -> None: ...
    def table_is_loaded(self, record: SetupRecord, job: TableJob) -> bool: ...
    def load_table(self, conn: C_in, record: SetupRecord, job: TableJob, batches: Iterator[RowBatch],
                   on_rows: Callable[[int], None], should_stop: Callable[[], bool]) -> TableTiming: ...
    def cancel(self, conn: C_in) -> None: ...
    def load_error(self, exc: BaseException, done: int | None, total: int) -> BaseException: ...
    def finish_setup(self, conn: C_in, record: SetupRecord) -> SetupRecord: ...
    def verify(self, conn: C_in, record: SetupRecord) -> list[Check]: ...
    def default_schema_clash(self, conn: C_in) -> str | None: ...
    def keep_default_schema_out(self, conn: C_in) -> bool: ...


class WorkloadControl(Protocol[C_in]):
    """A run's control connection (sync): the loop installed, the run's plan, barrier and release."""

    def install_workload(self, conn: C_in) -> None: ...
    def prepare_run(self, conn: C_in, run_id: int, params: dict[str, Any]) -> None: ...
    # the loop's statements' plans; raises DbioError when they would not use access_path
    # scan_workers: the run scans the scan table with that many parallel workers (None: no scans), whose
    # plan is recorded too ("scan")
    def plans(self, conn: C_in, schema_index: int, access_path: str,
              scan_workers: int | None = None) -> dict[str, Any]: ...
    def hold_barrier(self, conn: C_in, run_id: int) -> None: ...
    def waiting_at_barrier(self, conn: C_in, run_id: int) -> int: ...
    # the common start: now, or start (another node's); returns (start, window open, deadline), server epoch
    def release(self, conn: C_in, run_id: int, *, warmup: float, run_time: float,
                start: float | None = None) -> tuple[float, float, float | None]: ...
    def forget_run(self, conn: C_in, run_id: int) -> None: ...
    # read-only nodes (Capabilities.read_only): nothing can be written there, so the loop must have come
    # from its primary, the barrier is released without a control row (each slice call carries the run's
    # control, its start agreed in advance), and forgetting the run only lets go of the barrier
    def has_workload(self, conn: C_in) -> bool: ...
    def server_clock(self, conn: C_in) -> float: ...  # the server's clock now (epoch seconds), for its offset
    def release_barrier(self, conn: C_in, run_id: int) -> None: ...
    def forget_abandoned_runs(self, conn: C_in, alive: Callable[[str], bool]) -> int: ...
    # before a read-only run: what earlier UPDATEs left in dbio's tables (old row versions, undo to
    # purge, dirty pages) done now instead of by the run's reads inside its window; what was done
    # ({"seconds", "done": in the engine's words, ...}), None when the data set was at rest
    def settle(self, conn: C_in) -> dict[str, Any] | None: ...


class Sessions(Protocol[A]):
    """A run's sessions (async): each connects, waits at the barrier, and calls the loop slice by slice."""

    async def init_session(self, conn: A, schema_index: int, access_path: str) -> int: ...
    # a session's connection, initialised as init_session does (in fewer round trips where the engine
    # can), and its server process id
    async def connect_session(self, conninfo: str, *, application_name: str, schema_index: int, access_path: str,
                              info: ServerInfo) -> tuple[A, int]: ...
    async def call_slice(self, conn: A, request: SliceRequest) -> SliceResult: ...
    async def cancel_statement(self, conn: A, timeout: float) -> bool: ...  # True when the server took it
    async def flush_stats(self, conn: A) -> None: ...
    def is_cancelled(self, exc: BaseException) -> bool: ...  # a statement dbio cancelled on purpose
    async def backend_pid(self, conn: A) -> int: ...


class Monitoring(Protocol[A_in]):
    """Raw snapshots in, engine-neutral counters (counters.py) out; the sessions' and helpers' states."""

    async def prepare_monitor(self, conn: A_in) -> None: ...
    # raw cumulative counters in one consistent reading ("t": server epoch); with run_id, the run's
    # own sessions' counters too where the engine can tell them apart
    async def snapshot(self, conn: A_in, info: ServerInfo, run_id: int | None = None) -> dict[str, Any]: ...
    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]: ...
    async def session_states(self, conn: A_in, pids: list[int]) -> list[str]: ...  # one label per session
    async def background_pids(self, conn: A_in, session_pids: list[int]) -> list[int]: ...  # server helpers
    # the processes that do the sessions' reads for them (PostgreSQL's I/O workers): their wait for a CPU lies
    # within the reads
    async def read_helper_pids(self, conn: A_in) -> list[int]: ...


class Maintenance(Protocol[C_in]):
    """dbio's objects removed; what a raw-device baseline beside a run needs to know."""

    def teardown(self, conn: C_in) -> Teardown: ...
    # absolute paths of the loaded tables' files on this host (a raw-device baseline reads them);
    # empty when the server is elsewhere or does not say where its files are
    def data_files(self, conn: C_in, info: ServerInfo) -> list[str]: ...
    # the redo log's sync-write rate on this host, measured with a scratch file in directory (removed):
    # {syncs_per_s, avg_sync_us, method, command, ...}
    def redo_sync_rate(self, info: ServerInfo, directory: str, seconds: int) -> dict[str, Any]: ...


class Engine(Connecting[C, A], Loading[C], WorkloadControl[C], Sessions[A], Monitoring[A], Maintenance[C],
             Protocol[C, A]):
    """The engine-specific part of dbio, its required groups: behaviour, never SQL for others to run.
    Implementations live in dbio/engines/<name>/ (tests/fake_engine.py is a template with no database);
    each declares that it conforms (under TYPE_CHECKING, so that mypy checks every signature).

    Connections are the engine's own objects; dbio only passes them back. Methods that take an
    async connection are awaited on the run's event loop; the others run in a thread. The optional
    groups below are implemented when the engine's Features say so, and reached through
    read_probing() and timed_operations(), never by hasattr.
    """


class ReadProbing(Protocol[A]):
    """Optional (Features.read_probe): the read probe (run/read_probe.py), one connection beside the sessions
    that looks up single rows by the loop's key and access path and times each read with the engine's own
    timer."""

    # how the probe's reads are timed, for the report ("EXPLAIN (ANALYZE, BUFFERS) with track_io_timing")
    read_probe_method: str

    # connecting raises DbioError (why) when this engine or role cannot time single reads. Returns the connection
    # and its server pid. application_name: the probe's, named with its run (helper_application_name);
    # lookups: the schema each lookup of a batch reads (a batch is one statement: the engine's own timer per lookup;
    # none: the connection alone)
    async def read_probe_connect(self, conninfo: str, access_path: str, application_name: str = "dbio:probe",
                                 lookups: Sequence[int] = ()) -> tuple[A, int]: ...
    # one batch: a lookup of each key, in the order (and on the schemas) of the connection's lookups
    async def read_probe(self, conn: A, keys: Sequence[int]) -> list[ProbeRead]: ...


class TimedOperations(Protocol):
    """Optional (Features.operations): maintenance work timed by dbio ops."""

    def operations(self, conninfo: str, instance: Any, *, instance_config: Any, sessions: int, dbname: str,
                   notify: Callable[[str], None]) -> Operations: ...
    # a checkpoint now, on a connection of its own (--event N=checkpoint): its seconds, buffers_written,
    # write_ms and sync_ms (None where the engine does not count them)
    def checkpoint_now(self, conninfo: str, notify: Callable[[str], None]) -> dict[str, Any]: ...


def read_probing(engine: Engine) -> ReadProbing[Any] | None:
    """The engine's read probe, None when its Features declare none."""
    return cast("ReadProbing[Any]", engine) if engine.features.read_probe else None


def timed_operations(engine: Engine) -> TimedOperations | None:
    """The engine's timed maintenance, None when its Features declare none."""
    return cast(TimedOperations, engine) if engine.features.operations else None
