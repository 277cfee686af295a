"""dbio setup: the load as named, timed steps over parallel streams, resumable after an interruption.

Rows are generated here (keys in the configured physical order, incompressible filler) and
handed to the engine, which owns the bulk path (PostgreSQL: COPY FREEZE into a table created in
the same transaction, then index and ANALYZE, all in that transaction).
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol

import numpy as np

from dbio import faults, signals
from dbio.engines.base import Engine, RowBatch, SetupRecord, SetupSpec, TableJob
from dbio.errors import Interrupted

CHUNK_ROWS = 2048  # rows per COPY write: 16 MiB of blocks, 8 MiB on the wire
POOL_BYTES = 16 << 20  # random bytes each stream cuts its filler from


class Progress(Protocol):
    def start(self, total_bytes: int, done_bytes: int, description: str) -> None: ...
    def advance(self, nbytes: int) -> None: ...
    def stop(self) -> None: ...


def plan_jobs(spec: SetupSpec) -> list[TableJob]:
    if spec.partitions:  # the single schema's table in ranges of keys, one part per place, loaded in parallel
        jobs = [TableJob(1, "data", hi - lo + 1, part=k, first_key=lo)
                for k, (lo, hi) in enumerate(spec.part_keys(), start=1)]
    else:
        jobs = [TableJob(i, "data", spec.scale) for i in range(1, spec.schemas + 1)]
    if spec.scan_table_blocks:
        jobs.append(TableJob(1, "scan", spec.scan_table_blocks))
    return jobs


def new_setup_id() -> str:
    return uuid.uuid4().hex[:12]


def row_batches(job: TableJob, *, key_order: str, seed: int, filler_bytes: int,
                stop: threading.Event | None = None, chunk_rows: int = CHUNK_ROWS) -> Iterator[RowBatch]:
    """Rows 1..n in the physical order asked for; each row's filler is a random cut of random bytes
    that starts with the row's key, so no two rows (or blocks) are alike and none compresses."""
    rng = np.random.default_rng(seed)
    n = job.rows
    if key_order == "random" and job.kind == "data":
        keys = rng.permutation(n).astype(np.int64) + job.first_key
    else:
        keys = np.arange(job.first_key, job.first_key + n, dtype=np.int64)
    pool = np.frombuffer(rng.bytes(POOL_BYTES), dtype=np.uint8)
    windows = np.lib.stride_tricks.sliding_window_view(pool, filler_bytes)
    for start in range(0, n, chunk_rows):
        if stop is not None and stop.is_set():
            raise Interrupted("load stopped")
        chunk = keys[start:start + chunk_rows]
        offsets = rng.integers(0, len(pool) - filler_bytes, len(chunk))
        filler = windows[offsets]  # a copy: random bytes, different in every row
        filler[:, :8] = chunk.astype("<i8").view(np.uint8).reshape(-1, 8)  # and never equal: the key is in it
        yield RowBatch(chunk, filler)
        if start == 0:
            faults.point("load.copy")


def job_seed(setup_id: str, job: TableJob) -> int:
    part = f":{job.part}" if job.part else ""  # a whole table keeps the seed it always had
    digest = hashlib.sha256(f"{setup_id}:{job.kind}:{job.schema_index}{part}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass(frozen=True)
class LoadOutcome:
    record: SetupRecord
    loaded_now: int  # tables loaded by this call (0: it was already complete)
    resumed: bool


def load(engine: Engine, connect: Callable[[str], Any], record: SetupRecord, *, degree: int,
         filler_bytes: int, progress: Progress, resumed: bool, page_bytes: int) -> LoadOutcome:
    """Load every table the record's spec names that is not loaded yet, `degree` tables at a time.

    Ctrl-C or SIGTERM stops the load within seconds: statements running on the server are
    cancelled, each unfinished table's open transaction rolls back and the table, unrecorded, is
    made again on resume; finished tables stay.
    """
    jobs = plan_jobs(record.spec)
    todo = [job for job in jobs if not engine.table_is_loaded(record, job)]
    # a row takes one of the engine's pages (InnoDB's may be 16 KiB): the bytes written, not the rows' 8 KiB
    done_bytes = sum(job.rows for job in jobs if job not in todo) * page_bytes
    total_bytes = sum(job.rows for job in jobs) * page_bytes
    streams = max(1, min(degree, len(todo)))
    loader = _Streams(engine, connect, record, filler_bytes, progress, page_bytes)
    tables = f"{len(todo)} of {len(jobs)} table{'s' if len(jobs) != 1 else ''}"
    progress.start(total_bytes, done_bytes, f"loading {tables}, {streams} stream{'s' if streams != 1 else ''}")
    try:
        with signals.sigterm_as_interrupt():
            loader.run(todo, streams, jobs)
    finally:
        progress.stop()
    record.loaded_bytes = total_bytes
    record.streams = streams
    record.steps = {k: round(v + record.steps.get(k, 0.0), 3) for k, v in loader.timings.items()}
    return LoadOutcome(record, len(todo), resumed)


class _Streams:
    """The load's parallel streams: one connection and one table at a time each, all stopped at once."""

    def __init__(self, engine: Engine, connect: Callable[[str], Any], record: SetupRecord, filler_bytes: int,
                 progress: Progress, page_bytes: int):
        self.engine, self.connect, self.record = engine, connect, record
        self.filler_bytes, self.progress, self.page_bytes = filler_bytes, progress, page_bytes
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.active: list[Any] = []  # connections loading now (a halt cancels their statements)
        self.timings: dict[str, float] = {"load": 0.0, "index": 0.0, "analyze": 0.0}

    def run(self, todo: list[TableJob], streams: int, jobs: list[TableJob]) -> None:
        """Every table of todo; the first failure (or Ctrl-C) halts the others, then is raised."""
        engine, connect = self.engine, self.connect
        pool = ThreadPoolExecutor(max_workers=streams, thread_name_prefix="dbio-load")
        try:
            futures = [pool.submit(self.table, job) for job in todo]
            try:
                finished, pending = wait(futures, return_when=FIRST_EXCEPTION)
            except KeyboardInterrupt:
                self.halt()
                wait(futures)
                raise Interrupted(_interrupted_message(engine, connect, jobs), "run dbio setup again to resume") \
                    from None
            failed = [error for f in finished if (error := f.exception()) is not None]
            if failed:
                self.halt()
                wait(pending)
                raise engine.load_error(failed[0], _done_count(engine, connect, jobs), len(jobs))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def table(self, job: TableJob) -> None:
        if self.stop.is_set():
            return
        engine, record = self.engine, self.record
        conn = self.connect(f"dbio:load:{job.kind}:{job.schema_index}")
        with self.lock:
            self.active.append(conn)
        try:
            engine.prepare_load_session(conn)
            batches = row_batches(job, key_order=record.spec.key_order, seed=job_seed(record.setup_id, job),
                                  filler_bytes=self.filler_bytes, stop=self.stop)
            timing = engine.load_table(conn, record, job, batches,
                                       lambda rows: self.progress.advance(rows * self.page_bytes), self.stop.is_set)
            with self.lock:
                self.timings["load"] += timing.load
                self.timings["index"] += timing.index
                self.timings["analyze"] += timing.analyze
        finally:
            with self.lock:
                self.active.remove(conn)
            engine.close(conn)

    def halt(self) -> None:
        self.stop.set()
        faults.release()
        with self.lock:
            for conn in list(self.active):
                self.engine.cancel(conn)


def _done_count(engine: Engine, connect: Callable[[str], Any], jobs: list[TableJob]) -> int | None:
    try:
        conn = connect("dbio:load:status")
        try:
            record = engine.read_setup(conn)
        finally:
            engine.close(conn)
    except Exception:  # the server may be what failed
        return None
    return sum(1 for job in jobs if record is not None and engine.table_is_loaded(record, job))


def _interrupted_message(engine: Engine, connect: Callable[[str], Any], jobs: list[TableJob]) -> str:
    done = _done_count(engine, connect, jobs)
    if done is None:
        return "load interrupted"
    return f"load interrupted: {done} of {len(jobs)} tables are complete and kept"
