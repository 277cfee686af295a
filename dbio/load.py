"""dbio setup: the load as named, timed steps over parallel streams, resumable after an interruption.

Rows are generated here (keys in the configured physical order, incompressible filler) and
handed to the engine, which owns the bulk path (PostgreSQL: COPY FREEZE into a table created in
the same transaction, then index and ANALYZE, all in that transaction).
"""

from __future__ import annotations

import hashlib
import signal
import threading
import uuid
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol

import numpy as np

from dbio import faults
from dbio.engines.base import RowBatch, SetupRecord, SetupSpec, TableJob
from dbio.errors import Interrupted

CHUNK_ROWS = 2048  # rows per COPY write: 16 MiB of blocks, 8 MiB on the wire
POOL_BYTES = 16 << 20  # random bytes each stream cuts its filler from


class Progress(Protocol):
    def start(self, total_bytes: int, done_bytes: int, description: str) -> None: ...
    def advance(self, nbytes: int) -> None: ...
    def stop(self) -> None: ...


def plan_jobs(spec: SetupSpec) -> list[TableJob]:
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
        keys = rng.permutation(n).astype(np.int64) + 1
    else:
        keys = np.arange(1, n + 1, dtype=np.int64)
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
    digest = hashlib.sha256(f"{setup_id}:{job.kind}:{job.schema_index}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass(frozen=True)
class LoadOutcome:
    record: SetupRecord
    loaded_now: int  # tables loaded by this call (0: it was already complete)
    resumed: bool


def load(engine: Any, connect: Callable[[str], Any], record: SetupRecord, *, degree: int,
         filler_bytes: int, progress: Progress, resumed: bool) -> LoadOutcome:
    """Load every table the record's spec names that is not loaded yet, `degree` tables at a time.

    Ctrl-C or SIGTERM stops the load within seconds: statements running on the server are
    cancelled, each unfinished table's transaction rolls back, finished tables stay.
    """
    jobs = plan_jobs(record.spec)
    todo = [job for job in jobs if not engine.table_is_loaded(record, job)]
    done_bytes = sum(job.bytes for job in jobs if job not in todo)
    total_bytes = sum(job.bytes for job in jobs)
    streams = max(1, min(degree, len(todo)))
    stop = threading.Event()
    timings: dict[str, float] = {"load": 0.0, "index": 0.0, "analyze": 0.0}
    lock = threading.Lock()
    active: list[Any] = []

    def work(job: TableJob) -> None:
        if stop.is_set():
            return
        conn = connect(f"dbio:load:{job.kind}:{job.schema_index}")
        with lock:
            active.append(conn)
        try:
            engine.prepare_load_session(conn)
            batches = row_batches(job, key_order=record.spec.key_order, seed=job_seed(record.setup_id, job),
                                  filler_bytes=filler_bytes, stop=stop)
            timing = engine.load_table(conn, record, job, batches, lambda rows: progress.advance(rows * 8192),
                                       stop.is_set)
            with lock:
                timings["load"] += timing.load
                timings["index"] += timing.index
                timings["analyze"] += timing.analyze
        finally:
            with lock:
                active.remove(conn)
            conn.close()

    def halt() -> None:
        stop.set()
        faults.release()
        with lock:
            for conn in list(active):
                engine.cancel(conn)

    progress.start(total_bytes, done_bytes, f"loading {len(todo)} of {len(jobs)} tables, {streams} streams")
    pool = ThreadPoolExecutor(max_workers=streams, thread_name_prefix="dbio-load")
    previous = signal.signal(signal.SIGTERM, _raise_interrupt) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        futures = [pool.submit(work, job) for job in todo]
        try:
            finished, pending = wait(futures, return_when=FIRST_EXCEPTION)
        except KeyboardInterrupt:
            halt()
            wait(futures)
            raise Interrupted(_interrupted_message(engine, connect, jobs), "run dbio setup again to resume") from None
        failed = [f for f in finished if f.exception() is not None]
        if failed:
            halt()
            wait(pending)
            raise engine.load_error(failed[0].exception(), _done_count(engine, connect, jobs), len(jobs))
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        pool.shutdown(wait=True, cancel_futures=True)
        progress.stop()
    record.loaded_bytes = total_bytes
    record.streams = streams
    record.steps = {k: round(v + record.steps.get(k, 0.0), 3) for k, v in timings.items()}
    return LoadOutcome(record, len(todo), resumed)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _done_count(engine: Any, connect: Callable[[str], Any], jobs: list[TableJob]) -> int | None:
    try:
        conn = connect("dbio:load:status")
        try:
            record = engine.read_setup(conn)
        finally:
            conn.close()
    except Exception:  # the server may be what failed
        return None
    return sum(1 for job in jobs if record is not None and engine.table_is_loaded(record, job))


def _interrupted_message(engine: Any, connect: Callable[[str], Any], jobs: list[TableJob]) -> str:
    done = _done_count(engine, connect, jobs)
    if done is None:
        return "load interrupted"
    return f"load interrupted: {done} of {len(jobs)} tables are complete and kept"
