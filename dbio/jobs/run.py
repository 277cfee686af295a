"""A run measured: everything checked, the workload run, result.json and its reports written: each run of dbio run,
quickstart, run --repeat and a sweep's steps."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dbio import result as results
from dbio import target as targets
from dbio import metrics, results_dir, signals
from dbio.collect import host
from dbio.jobs import baseline as baselines
from dbio.jobs import after_window, external_script, run_files
from dbio.config import RESERVED_CONNECTIONS, Config
from dbio.config_checks import display_key, show_value
from dbio.option_table import BY_KEY
from dbio.engines import registry
from dbio.engines.base import Engine, ServerInfo, SetupRecord
from dbio.errors import DbioError, Terminated, UsageError
from dbio.run import abandoned, manifest, disk_guard, runner
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run.identity import new_run_id
from dbio.run.monitor import SampleWriter
from dbio.run import session_placement
from dbio.run.nodes import Node, role_of
from dbio.run.plan import RunPlan, make_plan
from dbio.sweep.document import SWEEP_FILE
from dbio.run.readings import ONLY_NODE, Normalize, answered, normalized, normalizer
from dbio.report import stack_findings
from dbio.result_context import Storage
from dbio.stats import live
from dbio.ui import UI, RunObserver
from dbio.units import BLOCK_SIZE, format_bytes


@dataclass(frozen=True)
class RunResult:
    directory: Path
    document: dict[str, Any]
    signal: str | None = None  # the first signal that came: in the run's window, or after it (after_window.py)
    unwritten: tuple[run_files.Unwritten, ...] = ()  # reports a full disk kept out (named in the result)

    @property
    def status(self) -> str:
        return self.document["status"]


def run_directory(config: Config, now: datetime | None = None) -> Path:
    """The run's directory as named when it starts (results_dir.claim makes it, or the next free name)."""
    return config.run.results_dir / results_dir.run_name(config.run.label, now=now)


def check_setup(record: SetupRecord | None, config: Config, where: str) -> SetupRecord:
    w = config.workload
    if record is None:
        raise UsageError(f"nothing is loaded in {where}", "run dbio setup first (with the same options)")
    if record.status != "ready":
        raise UsageError(f"the load in {where} was interrupted", "run dbio setup again to finish it")
    spec = record.spec
    if w.scale > spec.scale:  # named where it was set (--scale, dbio.toml, DBIO_SCALE), in the user's units
        raise UsageError(f"{_named(config, 'scale')} = {show_value(BY_KEY['scale'], w.scale)}: larger than the "
                         f"{spec.scale:,} rows loaded ({format_bytes(spec.scale * BLOCK_SIZE)})",
                         "lower scale (a run may use a subset of the load) or reload with dbio setup --reload")
    if w.schemas > spec.schemas:
        raise UsageError(f"{_named(config, 'schemas')} = {w.schemas}: only {spec.schemas} are loaded",
                         "lower schemas or reload with dbio setup --reload")
    if w.key_order != spec.key_order:
        raise UsageError(f"key_order = {w.key_order} but the load has key_order {spec.key_order}",
                         f"set key_order = {spec.key_order} or reload with dbio setup --reload")
    if w.scan_pct and not spec.scan_table_blocks:
        raise UsageError("scan_pct > 0 but the load has no scan table",
                         "reload with scan_table_size > 0 (dbio setup --reload)")
    return record


def _named(config: Config, key: str) -> str:
    """An option as an error names it: where the user set it (--scale, dbio.toml: workload.scale, ...)."""
    return display_key(BY_KEY[key], config.origins.get(key, "default"))


START_LEAD = 10.0  # seconds a run needs at least, before its common start, to connect its sessions


def check_start_at(plan: RunPlan, now: float | None = None) -> None:
    """--start-at: far enough ahead to connect and warm up before the window opens."""
    if plan.start is None:
        return
    now = time.time() if now is None else now
    window_at = plan.start + plan.warmup
    if plan.start - now < START_LEAD:
        when = "passed" if window_at <= now else f"is {window_at - now:.0f} s away"
        raise UsageError(f"--start-at {results.iso(window_at)} {when}: the run needs {START_LEAD:.0f} s to connect "
                         f"and {plan.warmup:g} s of warm-up before its window opens",
                         f"give a time at least {START_LEAD + plan.warmup:.0f} s ahead")


def check_server(info: ServerInfo, config: Config, sessions: int | None = None) -> None:
    """sessions: how many of the run's sessions this server gets (all of them, unless several nodes)."""
    w = config.workload
    sessions = w.sessions if sessions is None else sessions
    available = info.max_connections - info.reserved_connections - info.connections_in_use
    if sessions + RESERVED_CONNECTIONS > available:
        raise UsageError(f"{sessions} sessions (+{RESERVED_CONNECTIONS} for dbio) exceed the {available} connections "
                         f"the server has free (max_connections {info.max_connections})",
                         "lower schemas x threads_per_schema or raise the server's max_connections")
    if not w.allow_cached:
        check_not_cached(info, w.table_bytes(info.caps.page_bytes))


def check_not_cached(info: ServerInfo, data_bytes: int) -> None:
    """A data set the server's cache (and, without direct I/O, the OS page cache) could hold is refused:
    its run would measure memory. setup asks the same before loading."""
    cache, name = info.cache_bytes, info.caps.cache_name
    label = f"{name} ({format_bytes(cache)})"
    if not info.caps.direct_io and info.caps.local:  # worded and sized as the report's verdict
        page_cache = host.host_facts().get("memory_available_bytes") or 0
        cache += page_cache
        label += f" plus the available page cache ({format_bytes(page_cache)}; the server does not use direct I/O)"
    if data_bytes <= cache:
        raise UsageError(f"the data set ({format_bytes(data_bytes)}) fits in {label}: the run would measure memory",
                         "raise scale or schemas, or pass --allow-cached for a logical I/O test")


def run(config: Config, ui: UI, directory: Path | None = None, *,
        baseline: baselines.Request | None = None) -> RunResult:
    """directory: the run's own (a sweep's step), refused when it exists; by default a new one in
    results_dir, named when the run starts (with a suffix when another run took that name)."""
    if directory is None:  # before any server starts
        results_dir.check(config.run.results_dir)
    else:
        results_dir.check_new(directory)
    plan = make_plan(config.workload, config.run.interval, config.run.start_at)
    check_start_at(plan)
    unique, directory = directory is None, directory or run_directory(config)
    if config.connection.embedded:
        instance = targets.instance_for(config, ui.note)
        if not instance.exists():
            raise UsageError(f"no dbio instance in {config.instance.data_dir}", "run dbio setup first")
        targets.check_members(config, instance)
        if config.workload.update_pct:
            instance.check_redo_room(config.instance)
    found = targets.resolve_nodes(config, purpose="run", sessions=config.workload.sessions, notify=ui.note)
    return run_on(found, config, ui, directory, plan, baseline=baseline, unique=unique)


def run_on(found: list[targets.Target], config: Config, ui: UI, directory: Path, plan: RunPlan, *,
           baseline: baselines.Request | None = None, unique: bool = True,
           clock: TimeSource = REAL_TIME) -> RunResult:
    """The run on resolved targets (one per node), whatever their engine: checks, sessions, result, reports.
    unique: directory is a name to make, or the next free one (results_dir.claim); else exactly it. clock: as
    in measure."""
    if baseline is not None and len(found) > 1:
        raise UsageError("--baseline measures one server's storage; this run has several",
                         "run dbio baseline against each server, or give one --dsn")
    weights = node_weights(config, len(found))
    share = max(session_placement.shares(weights, config.workload.sessions))  # the most sessions one node gets
    probed = [_probe(target) for target in found]
    check_distinct([info for info, _ in probed])
    check_one_cluster([info for info, _ in probed])
    check_writable(config, [info for info, _ in probed])
    checked = [(info, check_setup(loaded, config, info.description)) for info, loaded in probed]
    for info, _ in checked:
        check_server(info, config, share)
    record = checked[0][1]
    for info, other in checked[1:]:
        if other.spec != record.spec:
            differences = ", ".join(record.spec.differences(other.spec))
            raise UsageError(f"{info.description} holds another data set ({differences})",
                             "load every node with the same options (dbio setup with every --dsn)")
    recover_abandoned(config.run.results_dir, ui)
    storages = [_storage(info, record.spec.places) for info, _ in checked]  # each node's, read once
    names = node_names(config, len(found), [target.name for target in found])
    nodes = [Node(name, target.engine, target.conninfo, info, role=role_of(info), devices=_devices(storage),
                  weight=weight)
             for name, weight, target, (info, _), storage in zip(names, weights, found, checked, storages)]
    room_paths = written_paths(storages) if config.workload.update_pct else ()
    step, setting = max((info.caps.growth_step_bytes, info.caps.growth_step_setting or "") for info, _ in checked)
    room_floor = disk_guard.floor_of(step)
    short = disk_guard.too_little_to_start(room_paths, room_floor)
    if short is not None:
        grows = f" ({setting} lets the server grow a file by {step >> 20} MiB at once)" if step else ""
        raise UsageError(f"an update run needs room to write: {short}{grows}, and it would be stopped at once before "
                         f"the disk filled", "free some space there, or run without updates (--update-pct 0)")
    raw, after = None, None
    if baseline is not None:  # around the database's run, at its concurrency: the same storage, before and after
        place, raw = _baseline(baseline, found[0], checked[0][0], config, plan, ui)
        after = _after(baseline.tool, place, raw, ui)
    return measure(nodes, config, ui, directory, plan, record.to_dict(), storages[0], baseline=raw,
                   baseline_after=after, room_paths=room_paths, room_floor=room_floor, unique=unique, clock=clock)


def written_paths(storages: list[dict[str, Any]]) -> tuple[str, ...]:
    """Where the servers on this host write (pure): each one's data directory, WAL and table places."""
    places = [s for storage in storages for s in (storage.get("data_directory"), storage.get("wal"),
                                                 *(storage.get("tablespaces") or []))]
    return tuple(sorted({p["path"] for p in places if isinstance(p, dict) and p.get("path") and not p.get("error")}))


def _baseline(baseline: baselines.Request, target: targets.Target, info: ServerInfo, config: Config, plan: RunPlan,
              ui: UI) -> tuple[baselines.Place, dict[str, Any]]:
    """The raw device's figures at the run's concurrency, on the storage under the server's data: where
    fio read, and the record of its runs before the database's."""
    conn = target.connect("dbio:baseline")
    try:
        place = baselines.place_on(baseline, target.engine, conn, info, config.workload.data_bytes,
                                   writes=config.workload.update_pct > 0, sequential=config.workload.scan_pct > 0)
    finally:
        target.engine.close(conn)
    seconds = baselines.durations(plan.run_time, config.run.baseline_seconds)
    return place, baselines.measure(baseline.tool, place, plan.sessions, seconds, ui, after=True)


def _after(tool: str, place: baselines.Place, record: dict[str, Any], ui: UI) -> after_window.BaselineAfter:
    return lambda came: baselines.measure_after(tool, place, record, ui, came)


def _probe(target: targets.Target) -> tuple[ServerInfo, SetupRecord | None]:
    """What the node's server is, and what it holds."""
    engine = target.engine
    conn = target.connect("dbio:run")
    try:
        return engine.probe(conn), engine.read_setup(conn)
    finally:
        engine.close(conn)


def check_writable(config: Config, infos: list[ServerInfo]) -> None:
    """UPDATEs need a node that takes writes: a run of read-only nodes (hot standbys) only reads."""
    if config.workload.update_pct and all(info.caps.read_only for info in infos):
        which = "the server is" if len(infos) == 1 else f"all {len(infos)} servers are"
        raise UsageError(f"update_pct = {config.workload.update_pct} but {which} read-only (hot standby): "
                         "no session could UPDATE", "set update_pct = 0, or add a writable server (--dsn of the "
                                                    "primary)")


def node_names(config: Config, count: int, own: list[str | None] | None = None) -> list[str]:
    """The nodes' names: as configured (node_names), else the targets' own (an embedded cluster's members),
    else node1, node2, ... (the one node of a run of one)."""
    if config.connection.node_names and len(config.connection.node_names) == count and count > 1:
        return list(config.connection.node_names)
    if own and all(own) and len(set(own)) == count:
        return [str(name) for name in own]
    return [ONLY_NODE] if count == 1 else [f"node{i}" for i in range(1, count + 1)]


def node_weights(config: Config, count: int) -> list[float]:
    """Each node's weight (weights, checked against the nodes when the config was read); equal: the rotor."""
    return [float(w) for w in config.connection.weights] if config.connection.weights else [1.0] * count


def check_one_cluster(infos: list[ServerInfo]) -> None:
    """Nodes of a multi-writer cluster (ServerInfo.cluster) are one cluster's: a run of two clusters' nodes, or of
    a cluster's node and another server, would add up unrelated write-sets as if each node applied every one."""
    clustered = [info for info in infos if info.cluster is not None]
    if not clustered:
        return
    alone = next((info for info in infos if info.cluster is None), None)
    if alone is not None:
        raise UsageError(f"{alone.description} is not a node of the cluster {clustered[0].description} belongs to",
                         "give only the nodes of one cluster (a --dsn each)")
    other = next((info for info in clustered if info.cluster != clustered[0].cluster), None)
    if other is not None:
        raise UsageError(f"{other.description} and {clustered[0].description} are nodes of different clusters "
                         f"({other.cluster}, {clustered[0].cluster})", "give only the nodes of one cluster (a --dsn "
                                                                        "each)")


def check_distinct(infos: list[ServerInfo]) -> None:
    """Nodes are different servers: one server twice would count its (server-wide) I/O twice."""
    seen: dict[str, ServerInfo] = {}
    for info in infos:
        if info.identity is not None and info.identity in seen:
            raise UsageError(f"{seen[info.identity].description} and {info.description} are the same server",
                             "give each server once (a node is a server, not a database)")
        if info.identity is not None:
            seen[info.identity] = info


def measure(nodes: list[Node], config: Config, ui: UI, directory: Path, plan: RunPlan, setup: dict[str, Any],
            storage: dict[str, Any], *, baseline: dict[str, Any] | None = None,
            baseline_after: after_window.BaselineAfter | None = None, room_paths: tuple[str, ...] = (),
            room_floor: int = disk_guard.FLOOR, unique: bool = True, clock: TimeSource = REAL_TIME) -> RunResult:
    """The run on checked nodes: its directory (unique: as in run_on), the sessions, result.json and the reports.
    clock: the run's time (run/clock.py; the fake engine's tests give virtual time)."""
    run_id = new_run_id()
    script = external_script.check(config.run.external_script)
    man = manifest.manifest(config, plan, nodes, setup, storage, run_id, clock)
    observer: RunObserver | metrics.MetricsObserver = ui.run_observer(
        sessions=plan.sessions, window=plan.run_time, warmup=plan.warmup, bounds_us=plan.bounds_us,
        facts=live_facts(man))
    directory = results_dir.claim(directory, "the run's result", unique=unique)
    if ui.metrics is not None:  # --metrics-port: a sweep's step is labelled with its directory's name
        step = directory.name if (directory.parent / SWEEP_FILE).exists() else ""
        ui.metrics.begin(run_id, config.run.label, step, plan.bounds_us)
        observer = metrics.MetricsObserver(observer, ui.metrics)
    try:
        manifest.write_manifest(directory, man)
    except OSError as exc:  # nothing ran: leave no run directory behind
        shutil.rmtree(directory, ignore_errors=True)
        raise DbioError(f"{directory / results.RUN_MANIFEST} could not be written ({exc.strerror or exc})",
                        "free some space in the results directory") from None
    hook = external_script.Hook(script, directory, ui)  # called as the window opens and closes
    settled = _settle(nodes, config, ui)
    flushed = _flush_pending_writes(nodes, ui)
    samples = SampleWriter(directory / results.SAMPLES_FILE)
    normalize = normalizer({node.name: node.engine for node in nodes})
    with signals.received() as came:
        def on_window(event: str) -> None:
            came.shield()  # the window opened: from now on the run has a result to keep, which no signal may cost
            came.step("run")
            hook.window(event)

        try:
            outcome = runner.run(runner.RunContext(
                nodes=nodes, plan=plan, access_path=config.workload.access_path, samples=samples,
                wait_interval=config.run.wait_sample_interval, observer=_NormalizingObserver(normalize, observer),
                run_id=run_id, client=man["client"], room_paths=room_paths, room_floor=room_floor,
                on_window=on_window, time=clock))
        except BaseException as exc:
            hook.finish(interrupted=True)
            samples.close()
            if samples.lines == 0:  # nothing ran: leave no run directory behind
                shutil.rmtree(directory, ignore_errors=True)
            if isinstance(exc, KeyboardInterrupt) and came.first == "SIGTERM":  # 143, as SIGTERM ends a process
                raise Terminated("SIGTERM before the run's window opened: nothing measured") from None
            raise
        finally:
            observer.close()
            samples.close()
        came.shield()  # the run has ended: what follows is its result's (after_window.py)
        written = after_window.finish(came, outcome, man, normalize, samples, directory, hook, ui,
                                      events=settled + ([flushed] if flushed is not None else []),
                                      baseline=baseline, baseline_after=baseline_after)
    return RunResult(written.directory, written.document, came.first, written.unwritten)


def live_facts(man: dict[str, Any]) -> live.RunFacts:
    """What the live view's findings know of the run besides its samples, as the verdict's rules know it (from
    its manifest): the engine's read unit, direct I/O, whether the devices dbio reads hold every read the engine
    counts (every node on this host, every data place on a device dbio reads), every server on this host."""
    caps = man["capabilities"]
    page = caps.get("page_bytes")
    local = all(node["capabilities"].get("local") for node in man.get("nodes") or [{"capabilities": caps}])
    places = Storage.of(man.get("storage"))
    measured = not any(stack_findings.unmeasured(place) for place in (places.data_directory, *places.tablespaces)
                       if place)
    return live.RunFacts(page_bytes=page if isinstance(page, int) and page > 0 else live.RunFacts.page_bytes,
                         direct_io=bool(caps.get("direct_io")), devices_hold_data=local and measured, local=local)


def _settle(nodes: list[Node], config: Config, ui: UI) -> list[dict[str, Any]]:
    """Before a read-only run, each writable node's data set brought to rest: what an earlier run's
    UPDATEs left would otherwise be pruned, purged and written out by this run's reads inside its
    window. An event per node that had anything to settle, with the time it took."""
    if config.workload.update_pct > 0:
        return []
    events = []
    for node in nodes:
        if node.read_only:  # a standby has its primary's data set, settled there
            continue
        conn = node.engine.connect(node.conninfo, application_name="dbio:settle")
        try:
            done = node.engine.settle(conn)
        finally:
            node.engine.close(conn)
        if done is None:
            continue
        where = f" on {node.name}" if len(nodes) > 1 else ""
        message = (f"settled the data set{where} before this read-only run, what earlier writes left in it: "
                   f"{done['done']} ({done['seconds']:.1f} s)")
        ui.note(message)
        events.append({"t": time.time(), "kind": "settled", "node": node.name, "message": message, **done})
    return events


FLUSH_FLOOR = 16 << 20  # pending bytes below which a flush is not worth a note
FLUSH_LIMIT = 30.0  # seconds a run waits for the OS to write out what it had pending


def _flush_pending_writes(nodes: list[Node], ui: UI) -> dict[str, Any] | None:
    """Before a run on this host's storage, the OS's pending writes (a load's, an installation's) go to
    the device now rather than inside the measured window, where they would be the device's writes
    that the engine did not make. The event says how much and whether it finished in time."""
    if not any(node.info.caps.local for node in nodes):
        return None
    pending = host.pending_writes()
    if pending < FLUSH_FLOOR:
        return None
    ui.note(f"writing out {format_bytes(pending)} the OS had pending, so it does not reach the device "
            "inside the measured window")
    done = host.flush_pending_writes(pending, FLUSH_LIMIT)
    message = (f"the OS had {format_bytes(done['pending_bytes'])} of writes pending; they were written out "
               f"before the run ({done['seconds']:.1f} s)") if done["finished"] else \
        (f"the OS had {format_bytes(done['pending_bytes'])} of writes pending and had not written them out "
         f"after {FLUSH_LIMIT:.0f} s ({format_bytes(done['left_bytes'])} left): the device may write them "
         "inside the measured window")
    if not done["finished"]:
        ui.note(message)
    return {"t": time.time(), "kind": "pending_writes", "message": message, **done}


def engine_named(name: str | None) -> Engine:
    """The engine a recorded node names (a format-1 run names it in its capabilities)."""
    return registry.entry(name or registry.DEFAULT).create_engine()


def recover_abandoned(results_dir: Path, ui: UI) -> list[Path]:
    """Runs whose dbio process was killed: their result is rebuilt from what they wrote, marked lost."""
    recovered = []
    for directory in abandoned.abandoned(results_dir):
        try:
            written = run_files.write(directory, abandoned.recover(directory, engine_named), run_files.run_reports())
        except OSError as exc:
            ui.warn(f"could not write the recovered result of the abandoned run in {directory}: "
                    f"{exc.strerror or exc}")
            continue
        except DbioError as exc:  # a damaged leftover must not stop the new run
            ui.warn(f"could not recover the abandoned run in {directory}: {exc}")
            continue
        except Exception as exc:
            ui.warn(f"could not recover the abandoned run in {directory}: {type(exc).__name__}: {exc}")
            continue
        recovered.append(directory)
        ui.note(f"recovered the result of a run whose dbio process ended early: {directory} (marked lost)")
        for item in written.unwritten:
            ui.warn(run_files.unwritten_line(item))
        for event in written.document["events"]:
            if event["kind"] == "samples_skipped":
                ui.warn(f"{directory}: {event['message']}")
    return recovered


class _NormalizingObserver:
    def __init__(self, normalize: Normalize, observer: Any):
        self.normalize, self.observer = normalize, observer

    def phase(self, message: str) -> None:
        self.observer.phase(message)

    def event(self, message: str) -> None:
        self.observer.event(message)

    def second(self, sample: dict[str, Any]) -> None:
        if answered(sample):
            self.observer.second(normalized(sample, self.normalize))


def _devices(storage: dict[str, Any]) -> set[str]:
    """The block devices under every place of a storage record (data, WAL, each tablespace)."""
    places = [p for value in storage.values() for p in (value if isinstance(value, list) else [value])]
    return {d for place in places for d in (place or {}).get("diskstats_devices") or []}


def _storage(info: ServerInfo, places: tuple[str, ...] = ()) -> dict[str, Any]:
    """Where the server writes: its data directory, its WAL, and the directories the tables were
    spread over (data_dirs), each with its device."""
    if not info.caps.local or not info.caps.data_directory:
        return {"data_directory": None, "wal": None}
    if places:
        return {**_storage(info), "tablespaces": [host.storage_of(place) for place in places]}
    redo = Path(info.caps.redo_directory).resolve() if info.caps.redo_directory else None  # wal_dir: a link
    return host.storage_under(info.caps.data_directory, redo)
