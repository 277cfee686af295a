"""dbio ops OPERATION (and each step of sweep --op): maintenance work timed as a workload (the white
paper's load, index creation, backup and crash recovery, and a checkpoint), each with the figures of every
device that holds its source or its destination and the host's CPU, written as a result (ops_result.py) that
dbio report and dbio compare read. Its options are checked here too (`request`, sweep --op's `sweep_op`),
and its lines after (`summary_lines`).

Everything an operation needs is checked before anything is created or changed; the engine does
the work (engines/base.Operations) and enters `window` around the part it times, where this
module takes its readings. Ctrl-C (or SIGTERM) ends it within seconds: the engine restores what
it changed and the result is written, marked interrupted."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from dbio import __version__, command_options, ops_records, ops_result, results_dir
from dbio import signals as stopping
from dbio import report as reports
from dbio import result as results
from dbio import target as targets
from dbio.collect import fio, host, procfs
from dbio.jobs import backup_destination, dataset, run_files
from dbio.jobs.run import run_directory
from dbio.config import Config
from dbio.engines.base import timed_operations
from dbio.errors import DbioError, Interrupted, Terminated, UsageError
from dbio.report import ops_model
from dbio.stats import ops as figures
from dbio.ui import UI
from dbio.units import UnitError, parse_size

OPERATIONS = figures.OPERATIONS
SEQUENTIAL_SECONDS = 5  # fio's sequential read of the data files before a backup (--baseline)


@dataclass(frozen=True)
class Request:
    """What was asked on the command line, checked (sizes in bytes)."""

    operation: str
    destination: Path | None = None  # backup: where it is written (--target)
    wal_bytes: int | None = None
    dirty_bytes: int | None = None
    baseline: bool = False
    cold: bool = False  # backup: the instance stopped and its files copied
    changes_per_block: int = 1  # recovery: 1, first changes (full-page images); more, redo reads blocks back

    def asked(self) -> dict[str, Any]:
        return {"target": None if self.destination is None else str(self.destination), "wal_bytes": self.wal_bytes,
                "dirty_bytes": self.dirty_bytes, "baseline": self.baseline or None, "cold": self.cold or None,
                "changes_per_block": self.changes_per_block if self.operation == "recovery" else None}


@dataclass(frozen=True)
class StepOutcome:
    """A sweep step's operation, as a sweep reads a run's outcome (status, signal, document)."""

    document: dict[str, Any]
    signal: str | None = None

    @property
    def status(self) -> str:
        return self.document["status"]


def step(config: Config, ui: UI, op: dict[str, Any], directory: Path) -> StepOutcome:
    req = Request(op["operation"], None, op.get("wal_bytes"), op.get("dirty_bytes"))
    return StepOutcome(ops(config, ui, req, directory))


class Readings:
    """/proc/stat and /proc/diskstats of the devices involved, at the start and end of the timed part."""

    def __init__(self, devices: set[str]):
        self.devices = devices
        self.begin: dict[str, Any] | None = None
        self.end: dict[str, Any] | None = None

    @contextmanager
    def window(self) -> Iterator[None]:
        self.begin = self._reading()
        try:
            yield
        finally:
            self.end = self._reading()

    def _reading(self) -> dict[str, Any]:
        return {"t": time.time(), "stat": procfs.read_stat(), **procfs.disk_reading(self.devices)}


@dataclass
class Prepared:
    """An operation checked and ready: the engine's operations, the loaded data set, the places."""

    engine: Any
    operations: Any
    conn: Any
    info: Any
    record: Any
    places: dict[str, list[str]]


def ops(config: Config, ui: UI, req: Request, directory: Path | None = None) -> dict[str, Any]:
    """Check, run and record one operation (in directory: a sweep's step); returns the written document."""
    config = replace(config, run=replace(config.run, label=config.run.label or f"ops-{req.operation}"))
    if directory is None:
        results_dir.check(config.run.results_dir)
    else:
        results_dir.check_new(directory)
    unique, directory = directory is None, directory or run_directory(config)
    if not config.connection.embedded and req.operation in ("backup", "recovery"):
        raise UsageError(f"dbio ops {req.operation} stops, starts or reconfigures the server: it needs the embedded "
                         "instance, not --dsn", "run it without --dsn, on an instance placed on the storage under test")
    if config.connection.embedded and not targets.instance_for(config, ui.note).exists() and req.operation != "load":
        raise UsageError(f"no dbio instance in {config.instance.data_dir}", "load a data set first with dbio setup")
    with targets.exclusive(config, f"ops {req.operation}", ui.note):
        return _hold_and_run(config, ui, req, directory, unique)


def _hold_and_run(config: Config, ui: UI, req: Request, directory: Path, unique: bool = True) -> dict[str, Any]:
    prepared = _prepare(config, ui, req)
    roles = _roles(prepared.places)
    readings = Readings(set(roles))
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    detail, status, reason, sequential, signals = {}, "complete", None, None, []
    try:
        # proved only ours once made: its path was checked before the preparation's seconds, during which
        # another user could have made a directory of theirs on the way (under /tmp), to plant links in it
        directory = results_dir.claim(directory, "the operation's result", unique=unique)
    except BaseException:
        _close(prepared)
        raise
    try:
        with stopping.sigterm_as_interrupt() as signals:
            if req.baseline:
                sequential = _sequential(prepared, ui)
            detail = _run(req, prepared, readings, config, ui)
    except (KeyboardInterrupt, Interrupted) as exc:  # the load stops on its own signal handling (Interrupted)
        signals += ["SIGTERM"] if isinstance(exc, Terminated) else []
        status = "interrupted"
        reason = f"interrupted by {(signals or ['SIGINT'])[0]}; the server keeps its own settings"
    except DbioError as exc:
        status, reason = "failed", str(exc)
    finally:
        _close(prepared)
    document = _document(req, config, prepared, roles, readings, detail, started, status, reason, sequential)
    try:
        written = run_files.write(directory, document, [(
            "report", results.REPORT_FILE,
            lambda doc: reports.render_model(ops_model.build(ops_records.of(doc)), "text"))],
            ops_result.write)
    except OSError as exc:
        raise DbioError(f"the operation's result could not be written to {directory / results.RESULT_FILE} "
                        f"({exc.strerror or exc}); it was {status}", "free some space there") from None
    document = written.document
    document["directory"], document["signal"] = str(directory), signals[0] if signals else None
    document["unwritten"] = [run_files.unwritten_line(item) for item in written.unwritten]
    return document


def _prepare(config: Config, ui: UI, req: Request) -> Prepared:
    if req.operation != "load":  # it times work on a loaded data set: an instance or database not there is made by none
        targets.resolve_existing(config, ui.note, "run dbio setup first")
    target = targets.resolve(config, purpose="run", sessions=config.workload.sessions, notify=ui.note)
    timed = timed_operations(target.engine)
    if timed is None:
        raise UsageError(f"dbio ops has no maintenance operations for the {target.engine.name} engine yet",
                         "run dbio ops on PostgreSQL (--engine postgresql)")
    operations = timed.operations(target.conninfo, target.instance, instance_config=config.instance,
                                  sessions=config.workload.sessions, dbname=config.connection.dbname, notify=ui.note)
    if req.operation in ("backup", "recovery"):
        operations.embedded(req.operation)
    conn = operations.connect()
    try:
        info = target.engine.probe(conn)
        record = operations.loaded(conn) if req.operation != "load" else None
        places = operations.places(conn, info.caps.data_directory if info.caps.local else None)
        if req.operation == "backup":
            assert req.destination is not None  # request() refuses a backup without --target
            backup_destination.check_room(req.destination, operations.dataset_bytes(conn),
                                          [p for ps in places.values() for p in ps])
            places["target"] = [str(req.destination)]  # the result's word for it
        elif req.operation == "recovery":
            assert req.wal_bytes is not None  # request() sizes a recovery's WAL, sweep --op's too (in sweep.json)
            operations.check_wal_room(req.wal_bytes)
        elif req.operation == "checkpoint":
            # request() sizes a checkpoint's dirty data, sweep --op's too; loaded() refused an empty database
            assert req.dirty_bytes is not None and record is not None
            operations.check_dirty(req.dirty_bytes, info.cache_bytes, record.loaded_bytes or 0)
    except BaseException:
        conn.close()
        raise
    return Prepared(target.engine, operations, conn, info, record, places)


def _run(req: Request, p: Prepared, readings: Readings, config: Config, ui: UI) -> dict[str, Any]:
    ui.note(f"dbio ops {req.operation}: timing it with the devices {', '.join(sorted(readings.devices)) or '-'}")
    if req.operation == "index":
        return p.operations.rebuild_indexes(p.conn, readings.window)
    if req.operation == "load":
        return _load(p, readings, config, ui)
    p.conn.close()  # the others stop, restart or reconnect the server themselves
    if req.operation == "backup":
        return p.operations.backup(req.destination, readings.window, cold=req.cold)
    if req.operation == "recovery":
        return p.operations.recovery(p.record, req.wal_bytes, readings.window, req.changes_per_block)
    return p.operations.checkpoint(p.record, req.dirty_bytes, readings.window)


def _load(p: Prepared, readings: Readings, config: Config, ui: UI) -> dict[str, Any]:
    """A timed load: dbio's loaded data set (and nothing else) is dropped first, then loaded again."""
    from dbio.jobs import setup as setup_job

    # the data set loaded is the one timed again, unless the options say another (as run and ops index): the
    # configuration has its shape already (config_resolver.py)
    loaded = p.engine.read_setup(p.conn)
    if loaded is not None:
        ui.note("dropping dbio's loaded data set (and nothing else), to time loading it again")
        dataset.report_teardown(ui, p.engine.teardown(p.conn))
    p.conn.close()
    record = setup_job.setup(config, ui, window=readings.window)
    return record.to_dict()


def _sequential(p: Prepared, ui: UI) -> float:
    """fio's sequential 1 MiB O_DIRECT read rate of the data files (MB/s), the backup's reference."""
    from dbio.jobs import baseline as baselines

    tool = fio.find()
    files = baselines.data_place(p.engine, p.conn, p.info).files
    ui.note(f"baseline: fio reads the data files sequentially (1 MiB, O_DIRECT) for {SEQUENTIAL_SECONDS} s")
    run = fio.run(tool, fio.Job("dbio-sequential", files, 1, SEQUENTIAL_SECONDS, rw="read", block=1 << 20))
    return run["reads_per_s"] * (1 << 20) / 1e6


def _roles(places: dict[str, list[str]]) -> dict[str, list[str]]:
    """Block device -> what it holds of the operation (data, wal, tablespace, target: the backup's
    destination, the result's word for it)."""
    out: dict[str, list[str]] = {}
    for role, paths in places.items():
        for path in paths:
            where = Path(path)
            while not where.exists() and where != where.parent:
                where = where.parent
            for device in host.storage_of(where).get("diskstats_devices") or []:
                if role not in out.setdefault(device, []):
                    out[device].append(role)
    return out


def _close(p: Prepared) -> None:
    try:
        p.conn.close()
    except Exception:  # the server was stopped under it (recovery): nothing left to close
        pass


def _document(req: Request, config: Config, p: Prepared, roles: dict[str, list[str]], readings: Readings,
              detail: dict[str, Any], started: str, status: str, reason: str | None,
              sequential: float | None) -> dict[str, Any]:
    figs = figures.derive(req.operation, detail, readings.begin, readings.end, roles, os.cpu_count(), sequential)
    return {
        "format": ops_result.FORMAT, "format_version": ops_result.FORMAT_VERSION, "kind": ops_result.KIND,
        "operation": req.operation, "status": status, "status_reason": reason, "label": config.run.label,
        "created_at": started, "dbio_version": __version__,
        "config": {**config.to_dict(), "ops": req.asked()},
        "environment": {"host": host.host_facts(),
                        "server": {"description": p.info.description, "version": p.info.caps.server_version},
                        "storage": {role: [host.storage_of(path) for path in paths if Path(path).exists()]
                                    for role, paths in p.places.items()}},
        "places": p.places, "detail": detail, "readings": {"begin": readings.begin, "end": readings.end},
        "figures": figs,
    }


# -- dbio ops OPERATION's options checked (and sweep --op's), its lines after ---------------------
DEFAULT_WAL: int = command_options.default("ops", "wal")  # said once, in its row (and so in --help)
DEFAULT_DIRTY: int = command_options.default("ops", "dirty")


def request(operation: str, destination: Path | None, wal: str | None, dirty: str | None, baseline: bool,
            cold: bool = False, changes: int | None = None) -> Request:
    """The options of one operation, each refused in one line when it does not belong or is wrong."""
    given = {"--target": destination is not None, "--wal": wal is not None, "--dirty": dirty is not None,
             "--baseline": baseline, "--cold": cold, "--changes-per-block": changes is not None}
    belongs = {"backup": {"--target", "--baseline", "--cold"}, "recovery": {"--wal", "--changes-per-block"},
               "checkpoint": {"--dirty"}}
    stray = [flag for flag, on in given.items() if on and flag not in belongs.get(operation, set())]
    if stray:
        raise UsageError(f"dbio ops {operation} takes no {', '.join(stray)}",
                         "--target, --cold and --baseline are for backup, --wal and --changes-per-block for recovery, "
                         "--dirty for checkpoint")
    if baseline:
        fio.find()  # one line naming the package when it is missing, before anything runs
    if operation == "backup" and destination is None:
        raise UsageError("dbio ops backup needs --target DIR", "give an empty or new directory for the backup")
    return Request(operation, backup_destination.check_shape(destination) if destination is not None else None,
                   _size("--wal", wal, DEFAULT_WAL) if operation == "recovery" else None,
                   _size("--dirty", dirty, DEFAULT_DIRTY) if operation == "checkpoint" else None, baseline, cold,
                   changes or 1)


def _size(flag: str, text: str | None, default: int) -> int:
    if text is None:
        return default
    try:
        value = parse_size(text)
    except UnitError as exc:
        raise UsageError(f"{flag} {text}: {exc}", f"give a size such as {flag} 256MB") from None
    if value < (1 << 20):
        raise UsageError(f"{flag} {text} is less than 1 MiB", f"give a size such as {flag} 256MB")
    return value


SWEEPABLE = ("index", "recovery", "checkpoint")  # a backup's destination is one directory, a load replaces the data set


def sweep_op(text: str) -> dict[str, Any]:
    """sweep --op OPERATION[=SIZE] (recovery=256MB: its WAL, checkpoint=64MB: its dirty data), checked."""
    operation, _, size = text.partition("=")
    if operation not in SWEEPABLE:
        raise UsageError(f"--op {text}: a sweep runs {', '.join(SWEEPABLE)}", "e.g. --op recovery=256MB")
    if size and operation == "index":
        raise UsageError(f"--op {text}: index takes no size", "give --op index")
    req = request(operation, None, size or None if operation == "recovery" else None,
                  size or None if operation == "checkpoint" else None, False)
    return {"operation": operation, "wal_bytes": req.wal_bytes, "dirty_bytes": req.dirty_bytes}


def summary_lines(document: dict[str, Any]) -> list[str]:
    lines = [f"{document['status']}: {ops_model.headline(ops_records.of(document))}"]
    for name, device in sorted((document["figures"].get("devices") or {}).items()):
        lines.append(f"  {name} ({', '.join(device.get('roles') or []) or '-'}): "
                     f"read {_mib(device.get('read_mib_per_s'))} MiB/s, written {_mib(device.get('write_mib_per_s'))} "
                     f"MiB/s, {_mib(device.get('utilization_pct'))}% busy")
    if document.get("status_reason"):
        lines.append(f"  {document['status_reason']}")
    lines.append(f"result: {Path(document['directory']) / 'result.json'}")
    lines.extend(f"report: {line}" for line in document.get("unwritten") or [])
    return lines


def _mib(value: Any) -> str:
    return "-" if value is None else f"{value:,.1f}"
