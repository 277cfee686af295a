"""The raw-device baseline: fio reading the same bytes on the same device as the database, at the
run's concurrency, so a result says what share of the storage the database delivered.

`dbio baseline` runs it alone (`baseline`: its summary, and its record in --out); `dbio run --baseline`
runs it around the database's run (half of the synchronous reads right before it, half right after, as
storage can change speed within minutes) and keeps it in the result (`baseline`, and its figures under
figures.baseline)."""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from dbio import signals as stopping
from dbio import target as targets
from dbio import trust
from dbio.collect import fio
from dbio.jobs import baseline_writes
from dbio.config import Config
from dbio.engines.base import Engine, ServerInfo
from dbio.errors import DbioError, Interrupted, Terminated, UsageError
from dbio.trust import path_problem
from dbio.ui import UI
from dbio.units import format_bytes

SYNC_SHARE, DEEP_SHARE = 0.15, 0.05  # of the run's time: the baseline adds about a fifth to a run
# Seconds, whatever the run's time. The floor: these VMs' storage changed speed 2x between a 2 s fio
# before a 20 s run and a 1 s fio after it; 3 s each side, and more rounds when they disagree.
SYNC_LIMITS, DEEP_LIMITS = (6, 60), (2, 20)
# fio's reads/s after the run / before it beyond this (or its inverse): the two disagree, and fio reads
# again for as long, up to EXTRA_ROUNDS more times, so that the efficiency's spread is measured
DISAGREE = 1.2
EXTRA_ROUNDS = 2
MORE = "sync_more_"  # the further rounds' names in the record's runs: sync_more_1, sync_more_2
NO_RUN_TIME = 60.0  # a run limited by loop iterations only: time the baseline as for a minute's run
SCRATCH_LIMITS = (64 << 20, 1 << 30)  # a scratch file under --baseline-path: the data set's size, within these
SCRATCH_NAME = "dbio-baseline.scratch"


@dataclass(frozen=True)
class Place:
    """What fio reads: the instance's own files (read-only) or one scratch file it lays out first."""

    files: tuple[str, ...]
    where: str  # for a reader: "the data files of dbio's tables under ...", "a scratch file in ..."
    bytes: int
    scratch: bool = False
    writes: baseline_writes.WriteSide | None = None  # the write side, for a run with updates
    block: int = fio.BLOCK_BYTES  # bytes per read: the engine's own (InnoDB's page, PostgreSQL's block)
    sequential: bool = False  # also fio's sequential bandwidth, for a run with scans


@dataclass(frozen=True)
class Request:
    """--baseline on a run: fio (found before anything runs) and --baseline-path, if given."""

    tool: str
    path: Path | None = None


def request(path: Path | None) -> Request:
    return Request(fio.find(), path)


def place_on(req: Request, engine: Engine, conn: Any, info: ServerInfo, data_bytes: int, *,
             writes: bool = False, sequential: bool = False) -> Place:
    """Where a run's baseline reads: --baseline-path, or the server's own data files; with writes
    (the run has updates), where its write side writes too."""
    place = scratch_place(req.path, data_bytes) if req.path is not None else data_place(engine, conn, info)
    place = replace(place, sequential=sequential)
    if not writes:
        return place
    return replace(place, writes=baseline_writes.plan(engine, info, req.path, data_bytes))


def durations(run_time: float, sync_seconds: float = 0) -> tuple[int, int]:
    """Seconds of the synchronous run and of the deep-queue run, for a database run of run_time;
    sync_seconds (baseline_seconds), when given, is the synchronous run's."""
    base = run_time or NO_RUN_TIME
    if sync_seconds:
        sync = max(2, int(sync_seconds))
        return sync, max(1, min(DEEP_LIMITS[1], sync // 3))

    def within(share: float, limits: tuple[int, int]) -> int:
        return int(min(limits[1], max(limits[0], round(base * share))))

    return within(SYNC_SHARE, SYNC_LIMITS), within(DEEP_SHARE, DEEP_LIMITS)


def halves(sync_s: int) -> tuple[int, int]:
    """Seconds of the synchronous run before the database's run and after it (pure)."""
    return sync_s - sync_s // 2, sync_s // 2


def brackets(place: Place) -> bool:
    """Whether fio reads again after the run: not a scratch file, which would have to be laid out again."""
    return not place.scratch


def scratch_place(directory: Path, data_bytes: int) -> Place:
    """A scratch file in a directory on this host the user says is the storage under test."""
    if not directory.is_dir():
        raise UsageError(f"--baseline-path {directory} is not a directory", "give an existing directory on this host")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UsageError(f"--baseline-path {directory} is not writable", "give a directory dbio may write a "
                                                                           "scratch file in")
    if path_problem(directory):
        raise UsageError(f"--baseline-path {directory}: {path_problem(directory)}",
                         "give a directory only you (or root) can write")
    size = min(SCRATCH_LIMITS[1], max(SCRATCH_LIMITS[0], data_bytes))
    return Place((str(directory / SCRATCH_NAME),), f"a {format_bytes(size)} scratch file in {directory}", size,
                 scratch=True)


def data_place(engine: Engine, conn: Any, info: ServerInfo) -> Place:
    """The instance's own data files, read-only; one line when there is no device here to read."""
    if not info.caps.local or not info.caps.data_directory:
        where = "runs on another host" if not info.caps.local else "does not say where its data directory is"
        raise UsageError(f"the server {where}: there is no device on this host to read for a baseline",
                         "give --baseline-path DIR, a directory on this host that you know is the same storage")
    files = tuple(engine.data_files(conn, info))
    if not files:
        raise UsageError("dbio's tables have no data files to read", "run dbio setup first")
    odd = next((f for f in files if not _regular(f)), None)
    if odd is not None:  # the server's owner may make one a FIFO or a device: fio would hang on it, or read that
        raise UsageError(f"the data file {odd} is not a regular file", "check the data directory, or give "
                         "--baseline-path DIR, a directory on this host that you know is the same storage")
    _check_direct_read(files[0])
    return Place(files, f"the data files of dbio's tables under {info.caps.data_directory}",
                 sum(os.path.getsize(f) for f in files), block=info.caps.page_bytes)


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _check_direct_read(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
    except PermissionError:
        raise UsageError(f"cannot read the data file {path}", "run the baseline as root (or the server's user)") \
            from None
    except OSError as exc:
        if exc.errno in (22, 95):  # EINVAL, EOPNOTSUPP: a baseline there would read the page cache
            raise UsageError(f"the filesystem of {path} does not accept O_DIRECT reads",
                             "run without --baseline, or give --baseline-path on a filesystem that does") from None
        raise UsageError(f"cannot open the data file {path}: {exc.strerror}", "check the data directory") from None
    os.close(fd)


def measure(tool: str, place: Place, sessions: int, seconds: tuple[int, int], ui: UI, *,
            after: bool = False) -> dict[str, Any]:
    """fio's synchronous run at the sessions' concurrency, then its deep-queue run: the record.
    after: the database's run follows and `measure_after` will read again for the other half of the
    synchronous seconds. Ctrl-C or SIGTERM stops fio and its jobs and ends the command at once."""
    with stopping.sigterm_as_interrupt() as seen:
        try:
            return _measure(tool, place, sessions, seconds, ui, after=after)
        except KeyboardInterrupt:
            stopped = Terminated if seen else Interrupted
            raise stopped(f"{seen[0] if seen else 'Ctrl-C'} during the baseline's fio runs: fio stopped, nothing "
                          "measured") from None


def _measure(tool: str, place: Place, sessions: int, seconds: tuple[int, int], ui: UI, *,
             after: bool = False) -> dict[str, Any]:
    sync_s, deep_s = seconds
    if after and brackets(place):
        sync_s, after_s = halves(sync_s)
    else:
        after_s = 0
    deep_jobs = max(1, min(4, os.cpu_count() or 1))
    size = place.bytes if place.scratch else None
    started = time.time()
    ui.note(f"baseline: fio reads {place.where}: {sessions} synchronous job(s) for {sync_s} s, then "
            f"{deep_jobs} x {fio.DEEP_QUEUE} asynchronous for {deep_s} s"
            + (f", then 1 MiB sequential reads ({fio.SEQ_QUEUE} in flight) for {deep_s} s" if place.sequential else ""))
    try:
        sync = fio.run(tool, fio.Job("dbio-sync", place.files, sessions, sync_s, size=size, block=place.block))
        deep = fio.run(tool, fio.Job("dbio-ceiling", place.files, deep_jobs, deep_s, engine=fio.DEEP_ENGINE,
                                     iodepth=fio.DEEP_QUEUE, size=size, block=place.block))
        seq = fio.run(tool, fio.sequential("dbio-sequential", place.files, deep_s, size)) if place.sequential \
            else None
    finally:
        if place.scratch:
            Path(place.files[0]).unlink(missing_ok=True)
    if place.writes is not None:
        ui.note(f"baseline: fio writes a scratch file in {place.writes.data_directory} for {max(1, sync_s // 2)} s, "
                "then the redo log's sync test")
        writes = baseline_writes.measure(tool, place.writes, sessions, max(1, sync_s // 2))
    else:
        writes = None
    ended = time.time()
    return {"tool": "fio", "write_side": writes, "version": fio.version(tool), "place": place.where,
            "files": len(place.files),
            "bytes": place.bytes, "scratch": place.scratch, "sessions": sessions, "started_at": started,
            "ended_at": ended, "seconds": ended - started, "after_seconds": after_s,
            "runs": {"sync": sync, "deep": deep, **({"sequential": seq} if seq else {})}}


def measure_after(tool: str, place: Place, record: dict[str, Any], ui: UI, came: stopping.Received) -> None:
    """The second half of the synchronous reads, right after the database's run, into the record: with the
    first, it brackets the window, and their difference says whether the device changed speed meanwhile.
    The database's result must not be lost to it: a signal (came: those noted since the window; fio is
    stopped as one comes) or a fio failure leaves the record without it, and `after_skipped` says why."""
    after_s = int(record.get("after_seconds") or 0)
    if not after_s or not brackets(place):
        return
    if came.first:
        record["after_skipped"] = f"not run: {came.first} came before it"
        ui.note(f"baseline: fio's run after the database's {record['after_skipped']}: the result keeps the run "
                "before it only")
        return
    ui.note(f"baseline: fio reads {place.where} again: {record['sessions']} synchronous job(s) for {after_s} s")

    def signalled() -> bool:
        return came.first is not None

    try:
        run = fio.run(tool, fio.Job("dbio-sync-after", place.files, record["sessions"], after_s, block=place.block),
                      signalled)
    except fio.Stopped:
        record["after_skipped"] = f"{came.first} during fio's run after the database's"
        ui.note(f"baseline: {record['after_skipped']}: fio stopped, the result keeps the run before it only")
        return
    except DbioError as exc:
        record["after_skipped"] = str(exc)
        ui.note(f"baseline: fio after the run failed ({exc}): the result keeps the run before it only")
        return
    record["runs"]["sync_after"] = run
    record["seconds"] += run["ended_at"] - run["started_at"]

    def another() -> dict[str, Any]:
        return fio.run(tool, fio.Job("dbio-sync-more", place.files, record["sessions"], after_s, block=place.block),
                       signalled)

    more_rounds(record, another, after_s, ui.note)


def more_rounds(record: dict[str, Any], another: Callable[[], dict[str, Any]], seconds: int,
                note: Callable[[str], None]) -> None:
    """Rounds of `another` (a synchronous fio run) into the record's runs (sync_more_1, ...) while the
    last round disagrees with the one before it, up to EXTRA_ROUNDS; one a signal stopped (fio.Stopped) ends them."""
    rounds = sync_rounds(record)
    while len(rounds) - 2 < EXTRA_ROUNDS and _disagree(rounds[-2], rounds[-1]):
        note(f"baseline: fio read {rounds[-2]['reads_per_s']:,.0f} and then {rounds[-1]['reads_per_s']:,.0f} "
             f"reads/s: the device changed speed, so fio reads {seconds} s more")
        try:
            run = another()
        except fio.Stopped:
            note("baseline: fio's further round stopped by a signal: the result keeps the rounds before it")
            return
        except DbioError as exc:
            note(f"baseline: fio's further round failed ({exc}): the result keeps the rounds before it")
            return
        record["runs"][f"{MORE}{len(rounds) - 1}"] = run
        rounds.append(run)
        record["seconds"] += run["ended_at"] - run["started_at"]


def _disagree(first: dict[str, Any], second: dict[str, Any]) -> bool:
    a, b = first.get("reads_per_s") or 0.0, second.get("reads_per_s") or 0.0
    return bool(a and b) and not 1 / DISAGREE <= b / a <= DISAGREE


def sync_rounds(record: dict[str, Any]) -> list[dict[str, Any]]:
    """fio's synchronous rounds, before the run and after it (pure)."""
    runs = record.get("runs") or {}
    more = [runs[f"{MORE}{n}"] for n in range(1, EXTRA_ROUNDS + 1) if f"{MORE}{n}" in runs]
    return [r for r in (runs.get("sync"), runs.get("sync_after"), *more) if r]


def pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Synchronous runs as one (pure): reads and seconds summed, the average weighted by reads, the host's and
    fio's own CPU summed over the reads, p99 the higher of the runs' (percentiles do not pool)."""
    reads = sum(r.get("reads") or 0 for r in runs)
    seconds = sum(r.get("seconds") or 0.0 for r in runs)
    busy = _total([r.get("host_busy_seconds") for r in runs])
    own = _total([r.get("process_cpu_seconds") for r in runs])  # None in a record made before fio's own CPU was kept
    p99s = [r["p99_read_us"] for r in runs if r.get("p99_read_us") is not None]
    return {"reads": reads, "seconds": seconds, "reads_per_s": reads / seconds if seconds else 0.0,
            "avg_read_us": sum((r.get("avg_read_us") or 0.0) * (r.get("reads") or 0) for r in runs) / reads
            if reads else 0.0,
            "p99_read_us": max(p99s) if p99s else None,
            "host_cpu_us_per_read": busy * 1e6 / reads if reads and busy is not None else None,
            "process_cpu_us_per_read": own * 1e6 / reads if reads and own is not None else None}


def _total(values: list[float | None]) -> float | None:
    """Their sum, or None when a run lacks the value."""
    return None if None in values else sum(v for v in values if v is not None)


def drift(record: dict[str, Any]) -> float | None:
    """fio's reads/s after the database's run / before it (pure); None without both."""
    runs = record.get("runs") or {}
    before, after = runs.get("sync"), runs.get("sync_after")
    if not before or not after or not before.get("reads_per_s"):
        return None
    return after["reads_per_s"] / before["reads_per_s"]


def figures(record: dict[str, Any]) -> dict[str, Any]:
    """The baseline's figures beside the window's (figures.baseline; the catalogue declares them)."""
    runs = record["runs"]
    deep = runs["deep"]
    rounds = sync_rounds(record)
    sync = pooled(rounds) if len(rounds) > 1 else runs["sync"]
    rates = [r["reads_per_s"] for r in rounds if r.get("reads_per_s")]
    spread = {"reads_per_s_low": min(rates), "reads_per_s_high": max(rates), "rounds": len(rates)} \
        if len(rates) > 1 else {}
    return {"sessions": record["sessions"], "reads_per_s": sync["reads_per_s"], "avg_read_us": sync["avg_read_us"],
            **spread,
            "p99_read_us": sync["p99_read_us"], "host_cpu_us_per_read": sync["host_cpu_us_per_read"],
            "process_cpu_us_per_read": sync.get("process_cpu_us_per_read"), "drift": drift(record),
            "ceiling_reads_per_s": deep["reads_per_s"], "ceiling_avg_read_us": deep["avg_read_us"],
            "seq_read_mib_per_s": fio.mib_per_s(record["runs"]["sequential"]) if "sequential" in record["runs"]
            else None,
            **(baseline_writes.figures(record["write_side"]) if record.get("write_side") else {})}


def attach(document: dict[str, Any], record: dict[str, Any]) -> None:
    """Keep the baseline in a result: the record, and its figures beside the window's."""
    document["baseline"] = record
    if document.get("figures", {}).get("window_seconds"):
        document["figures"]["baseline"] = figures(record)


# -- dbio baseline: fio alone, its summary and its record in --out --------------------------------
ALONE_SECONDS = (30, 10)  # dbio baseline without --run-time: synchronous and deep-queue seconds


def alone_seconds(config: Config) -> tuple[int, int]:
    """dbio baseline's synchronous and deep-queue seconds: --run-time's when given, else ALONE_SECONDS
    (not the 5 minutes a run measures: that made 375 s of fio)."""
    if config.origins.get("run_time", "default") == "default":
        return ALONE_SECONDS
    sync_s = int(config.workload.run_time or NO_RUN_TIME)
    return sync_s, max(1, sync_s // 4)


def summary_lines(record: dict[str, Any]) -> list[str]:
    sync, deep = record["runs"]["sync"], record["runs"]["deep"]
    return [f"baseline ({record['version']}, {record['place']}):",
            f"  {sync['jobs']} synchronous job(s): {sync['reads_per_s']:,.0f} reads/s, {sync['avg_read_us']:,.0f} us "
            f"avg read, {_cpu(sync)} host CPU per read",
            f"  device ceiling ({deep['jobs']} x {deep['iodepth']} in flight): {deep['reads_per_s']:,.0f} reads/s, "
            f"{deep['avg_read_us']:,.0f} us avg read"] + _write_lines(record.get("write_side"))


def _write_lines(side: dict[str, Any] | None) -> list[str]:
    if not side:
        return []
    writes, redo = side["writes"], side.get("redo_sync")
    lines = [f"  {writes['jobs']} random-write job(s) on a scratch file: {writes['writes_per_s']:,.0f} writes/s, "
             f"{writes['avg_write_us']:,.0f} us avg write"]
    if redo:
        lines.append(f"  redo log sync ({redo['tool']}, {redo['method']}): {redo['syncs_per_s']:,.0f} syncs/s, "
                     f"{redo['avg_sync_us']:,.0f} us each")
    return lines


def _cpu(run: dict[str, Any]) -> str:
    value = run.get("host_cpu_us_per_read")
    return "?" if value is None else f"{value:,.1f} us"


def place_for(config: Config, path: Path | None, ui: UI) -> Place:
    """Where `dbio baseline` reads (and, with update_pct > 0, writes): --baseline-path, or the
    configured server's data files."""
    target = targets.resolve_existing(config, ui.note, "run dbio setup first")
    conn = target.connect("dbio:baseline")
    try:
        return place_on(Request("", path), target.engine, conn, target.engine.probe(conn),
                        config.workload.data_bytes, writes=config.workload.update_pct > 0,
                        sequential=config.workload.scan_pct > 0)
    finally:
        target.engine.close(conn)


def baseline(config: Config, ui: UI, path: Path | None, out: Path | None) -> dict[str, Any]:
    """dbio baseline: fio alone at the configured sessions; its summary, and the record in --out."""
    tool = fio.find()
    place = place_for(config, path, ui)
    record = measure(tool, place, config.workload.sessions, alone_seconds(config), ui)
    for line in summary_lines(record):
        ui.console.print(line, markup=False, highlight=False, soft_wrap=True)
    if out is not None:
        try:  # never through a link someone planted at --out (under /tmp, say) while fio ran
            trust.write_output(out, json.dumps(record, indent=2) + "\n")
        except OSError as exc:
            raise UsageError(f"--out {out} cannot be written: {exc.strerror}", "choose a writable path (the "
                                                                             "baseline's figures are above)") from None
    return record
