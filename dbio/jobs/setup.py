"""dbio setup: load (or resume, or verify) the data set the configuration describes."""

from __future__ import annotations

import dataclasses
import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Callable

from dbio import load, target as targets
from dbio.jobs import dataset, standby_setup
from dbio.jobs.run import check_not_cached
from dbio.collect import host
from dbio.config import Config
from dbio.engines.base import Check, ServerInfo, SetupRecord, SetupSpec
from dbio.errors import DbioError, UsageError
from dbio.filesystem import free_bytes
from dbio.ui import UI
from dbio.units import BLOCK_SIZE, format_bytes, format_duration

Window = Callable[[], AbstractContextManager[None]]

INDEX_BYTES_PER_ROW = 24  # unique btree on a bigint, leaf and inner pages
WAL_HEADROOM = 64 << 20  # plus a tenth of the data: the load writes little WAL, checkpoints and runs some


def spec_of(config: Config) -> SetupSpec:
    w = config.workload
    places = tuple(str(d) for d in getattr(config.instance, "data_dirs", ()))  # the engine's layout option
    return SetupSpec(scale=w.scale, schemas=w.schemas, scan_table_blocks=w.scan_table_blocks, key_order=w.key_order,
                     places=places)


def space_needed(spec: SetupSpec, record: SetupRecord | None = None, engine=None,
                 page_bytes: int = BLOCK_SIZE) -> int:
    """Bytes the load still has to write: tables not loaded yet (a row a page of page_bytes), their
    indexes, WAL headroom."""
    jobs = [job for job in load.plan_jobs(spec)
            if record is None or record.spec != spec or not engine.table_is_loaded(record, job)]
    data_rows = sum(job.rows for job in jobs if job.kind == "data")
    data = sum(job.rows for job in jobs) * page_bytes
    needed = data + data_rows * INDEX_BYTES_PER_ROW + WAL_HEADROOM + data // 10
    if record is not None and record.spec != spec:
        needed -= record.loaded_bytes or 0  # the load being replaced is dropped first
    return max(needed, WAL_HEADROOM)


def check_free_space(path_text: str, needed: int, key: str) -> None:
    from pathlib import Path

    free = free_bytes(Path(path_text))
    if free < needed:
        raise UsageError(f"{key} {path_text} has {format_bytes(free)} free but the load needs about "
                         f"{format_bytes(needed)} (tables, indexes, WAL headroom)",
                         "lower scale or schemas, or choose a filesystem with more free space")


def preflight_embedded(config: Config, spec: SetupSpec) -> None:
    """Before the instance is created: its location, the memory, and (for a new one) the disk."""
    instance = targets.instance_for(config, lambda _: None)
    if not instance.exists():
        instance.check_location()
        check_free_space(str(config.instance.data_dir), space_needed(spec), "--data-dir")
    instance.check_host(config.instance, host.host_facts().get("memory_bytes") or 0)


def as_configured(info: ServerInfo, instance: Any) -> ServerInfo:
    """dbio's own instance as the command loads and runs it (pure): with the cache it asks for and its direct I/O,
    not what the running server has now (another cache; after a dbio killed in a load, the load's buffered I/O)."""
    return dataclasses.replace(info, cache_bytes=instance.cache_bytes,
                               caps=dataclasses.replace(info.caps, direct_io=instance.direct_io))


def setup(config: Config, ui: UI, *, verify: bool = False, reload: bool = False,
          command: str = "dbio setup", window: Window | None = None) -> SetupRecord:
    """The data set config describes (dbio setup's takes an interrupted load's shape where the user gave none,
    so that `dbio setup` again finishes it, and --verify the loaded one's: config_resolver.shape_of).
    command: how the user asked for it (quickstart loads too), for the fix a refusal names;
    window: entered around the timed load alone (dbio ops load reads the devices there), the seconds the
    record states: not around the server's restarts into and out of its load profile."""
    spec = spec_of(config)
    if config.connection.embedded:
        preflight_embedded(config, spec)
    # Look before changing anything: the instance is used as it is until a load is really needed.
    target = targets.resolve(config, purpose="any", sessions=config.workload.sessions, notify=ui.note)
    engine = target.engine
    conn = target.connect("dbio:setup")
    try:
        info = engine.probe(conn)
        if info.caps.read_only:  # a hot standby: its load is its primary's, replayed
            replayed = _replayed_load(engine, conn, spec, info.description, command)
            ui.say(f"{info.description} is a read-only server (hot standby): it holds setup {replayed.setup_id}, "
                   "replicated from its primary; nothing to load")
            if verify:
                _print_checks(ui, engine.verify(conn, replayed))
            return replayed
        _keep_default_schema_out(target, conn, ui)
        record = engine.read_setup(conn)
        replace = record is not None and record.spec != spec
        if record is not None and replace and not reload:  # replace implies a record; mypy needs it said
            raise UsageError(f"this database holds a different load ({', '.join(record.spec.differences(spec))})",
                             f"run dbio teardown first, or {command} --reload to replace it")
        if replace or record is None or record.status != "ready":
            if not config.workload.allow_cached:  # refused now rather than by the run, after the load
                judged = as_configured(info, config.instance) if target.embedded else info
                check_not_cached(judged, config.workload.table_bytes(info.caps.page_bytes))
            engine.check_namespace(conn, spec)
            where = str(config.instance.data_dir) if target.embedded else info.caps.data_directory
            if where and (target.embedded or info.caps.local):
                check_free_space(where, space_needed(spec, record, engine, info.caps.page_bytes),
                                 "--data-dir" if target.embedded else "the server's data directory")
    finally:
        engine.close(conn)
    if record is not None and not replace and record.status == "ready":
        ui.say(f"already loaded: setup {record.setup_id}, {format_bytes(record.loaded_bytes or 0)} "
               f"in {len(record.tables_done)} tables, loaded {record.finished_at}; nothing to do")
    else:
        record = _load_with_profile(target, config, ui, spec, None if replace else record, replace, window)
    _install_loop(target)
    standby_setup.confirm(target, config, record, ui)
    if verify:
        conn = target.connect("dbio:verify")
        try:
            _print_checks(ui, engine.verify(conn, record))
        finally:
            engine.close(conn)
    return record


def _install_loop(target: targets.Target) -> None:
    """This dbio's work loop beside the load (a run installs it again): a standby replays it, and so
    can run before any run on its primary."""
    conn = target.connect("dbio:setup")
    try:
        target.engine.install_workload(conn)
    finally:
        target.engine.close(conn)


REPLAY_WAIT = 60.0  # seconds a standby may take to replay the load its primary just finished


def _replayed_load(engine, conn, spec: SetupSpec, where: str, command: str) -> SetupRecord:
    """The load a read-only server replayed from its primary, waiting a little for a load just made."""
    deadline = time.monotonic() + REPLAY_WAIT
    while True:
        record = engine.read_setup(conn)
        if record is not None and record.status == "ready" and record.spec == spec:
            return record
        if time.monotonic() > deadline:
            raise UsageError(f"{where} is a read-only server (hot standby) without this load, and dbio cannot load it",
                             f"run {command} on its primary (the standby replays it), with the same options")
        time.sleep(0.5)


def _load_with_profile(target: targets.Target, config: Config, ui: UI, spec: SetupSpec,
                       record: SetupRecord | None, replace: bool, window: Window | None) -> SetupRecord:
    """The embedded instance loads with buffered I/O (fast), and goes back to its run profile after."""
    if target.instance is not None:
        target = targets.resolve(config, purpose="load", sessions=config.workload.load_parallel_degree,
                                 notify=ui.note)
    try:
        conn = target.connect("dbio:setup")
        try:
            info = target.engine.probe(conn)
            if replace:
                ui.note("replacing the existing load made with another configuration")
                dataset.report_teardown(ui, target.engine.teardown(conn))
            with window() if window is not None else nullcontext():
                return _load(target, conn, info, record, spec, config, ui)
        finally:
            target.engine.close(conn)
    finally:
        if target.instance is not None:
            target.instance.ensure(config.instance, sessions=config.workload.sessions, purpose="run",
                                   dbname=config.connection.dbname)


def _load(target: targets.Target, conn, info, record: SetupRecord | None, spec: SetupSpec, config: Config,
          ui: UI) -> SetupRecord:
    engine = target.engine
    started = time.monotonic()
    resumed = record is not None
    if record is None:
        record = engine.begin_setup(conn, spec, setup_id=load.new_setup_id(), server_version=info.caps.server_version)
    else:
        ui.note(f"resuming the interrupted load of setup {record.setup_id}: "
                f"{len(record.tables_done)} of {len(load.plan_jobs(spec))} tables were complete")
    create_seconds = time.monotonic() - started
    previous = record.seconds or 0.0
    outcome = load.load(engine, target.connect, record, degree=config.workload.load_parallel_degree,
                        filler_bytes=engine.filler_bytes, progress=ui.load_progress(), resumed=resumed,
                        page_bytes=info.caps.page_bytes)
    record = outcome.record
    record.steps["create"] = round(record.steps.get("create", 0.0) + create_seconds, 3)
    seconds = previous + (time.monotonic() - started)
    record.seconds = seconds
    record = engine.finish_setup(conn, record)
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in record.steps.items())
    ui.say(f"loaded {format_bytes(record.loaded_bytes or 0)} ({spec.schemas} schema{'s' if spec.schemas > 1 else ''} "
           f"x {spec.scale:,} rows{', scan table' if spec.scan_table_blocks else ''}) in "
           f"{format_duration(seconds)}: {format_bytes((record.loaded_bytes or 0) / seconds)}/s with "
           f"{record.streams} "
           f"stream{'s' if record.streams != 1 else ''} ({steps}; summed over streams)")
    return record


def _print_checks(ui: UI, checks: list[Check]) -> None:
    failed = [c for c in checks if not c.ok]
    for check in checks:
        ui.say(f"  {'ok ' if check.ok else 'BAD'}  {check.name}: {check.detail}")
    if failed:
        raise DbioError(f"verification failed: {len(failed)} of {len(checks)} checks",
                        "reload with dbio setup --reload")
    ui.say(f"verified: all {len(checks)} checks passed")


def _keep_default_schema_out(target: targets.Target, conn, ui: UI) -> None:
    """A role named like one of dbio's schemas ("$user" in search_path) creates what it names
    without a schema in that schema: the embedded superuser is made to default to public."""
    if target.embedded:
        if target.engine.keep_default_schema_out(conn):
            ui.note("role dbio now uses search_path = public, so that what it creates without a schema stays "
                    "out of dbio's schema dbio")
        return
    clash = target.engine.default_schema_clash(conn)
    if clash:
        ui.warn(f"role {clash} has dbio's schema {clash} as its default schema (\"$user\" in search_path): what it "
                f"creates without naming a schema lands there; ALTER ROLE {clash} SET search_path = public avoids that")
