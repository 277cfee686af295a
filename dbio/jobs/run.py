"""A run measured: everything checked, then the workload run, result.json and its reports written (measure.py):
each run of dbio run, quickstart, run --repeat and a sweep's steps; and what dbio run says after it
(`summary_lines`: quickstart says the same; run --repeat's are commands/repeat.py's)."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

from dbio import result as results
from dbio import target as targets
from dbio import readback, results_dir
from dbio.collect import host
from dbio.jobs import baseline as baselines
from dbio.jobs import after_window, disruptions, run_files
from dbio.jobs.measure import RunResult, measure
from dbio.config import RESERVED_CONNECTIONS, Config
from dbio.config_checks import display_key, show_value
from dbio.option_table import BY_KEY
from dbio.report import baseline_section, verdict, words
from dbio.engines import registry
from dbio.engines.base import Engine, ServerInfo, SetupRecord
from dbio.errors import DbioError, UsageError
from dbio.run import abandoned, disk_guard
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run import session_placement
from dbio.run.nodes import Node, role_of
from dbio.run.plan import RunPlan, make_plan
from dbio import parts
from dbio.run.readings import ONLY_NODE
from dbio.ui import UI
from dbio.units import BLOCK_SIZE, format_bytes


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
        baseline: baselines.Request | None = None, step_label: str = "") -> RunResult:
    """directory: the run's own (a sweep's step), refused when it exists; by default a new one in
    results_dir, named when the run starts (with a suffix when another run took that name). step_label: a
    sweep's step's name (its metrics carry it), given by the sweep."""
    if directory is None:  # before any server starts
        results_dir.check(config.run.results_dir)
    else:
        results_dir.check_new(directory)
    plan = make_plan(config.workload, config.run.interval, config.run.start_at,
                     parts.parse(config.run.part)[1] if config.run.part else 1)
    check_start_at(plan)
    disruptions.check_destinations(config)  # a backup's, before any server starts (again with the server's answers)
    for line in disruptions.left_to_other_parts(config):  # a run in parts: each event runs on one part's side
        ui.note(line)
    unique, directory = directory is None, directory or run_directory(config)
    if config.connection.embedded:
        instance = targets.instance_for(config, ui.note)
        if not instance.exists():
            raise UsageError(f"no dbio instance in {config.instance.data_dir}", "run dbio setup first")
        targets.check_members(config, instance)
        if config.workload.update_pct:
            instance.check_redo_room(config.instance)
    found = targets.resolve_nodes(config, purpose="run", sessions=config.workload.sessions, notify=ui.note)
    return run_on(found, config, ui, directory, plan, baseline=baseline, unique=unique, step_label=step_label)


def run_on(found: list[targets.Target], config: Config, ui: UI, directory: Path, plan: RunPlan, *,
           baseline: baselines.Request | None = None, unique: bool = True,
           clock: TimeSource = REAL_TIME, step_label: str = "") -> RunResult:
    """The run on resolved targets (one per node), whatever their engine: checks, sessions, result, reports.
    unique: directory is a name to make, or the next free one (results_dir.claim); else exactly it. clock and
    step_label: as in measure."""
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
                   baseline_after=after, room_paths=room_paths, room_floor=room_floor, unique=unique, clock=clock,
                   step_label=step_label)


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
        except (DbioError, readback.Refused) as exc:  # a damaged leftover must not stop the new run
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


# -- dbio run's lines after a run (quickstart says the same) --------------------------------------
def summary_lines(result: RunResult) -> list[str]:
    doc = result.result
    judged = verdict.judge(doc)  # judged once for every line below
    valid = (doc.document.get("verdict") or judged.summary)["valid"]
    # a run that did not complete is not called VALID: its headline says what its figures cover
    said = "NOT VALID" if not valid else "VALID" if doc.status == "complete" else None
    lines = [f"{doc.status}{', ' + said if said else ''}: {judged.headline}"]
    efficiency = baseline_section.efficiency_line(doc)
    if efficiency is not None:
        lines.append(efficiency)
    for finding in judged.findings:
        if finding.level != "info":
            lines.append(f"{finding.level}: {words.say(doc, finding.message)}")
    lines.append(f"result: {result.directory / results.RESULT_FILE}")
    unwritten = {item.path: item for item in result.unwritten}
    files = doc.document.get("files")
    for key, label, name in (("report", "report:", results.REPORT_FILE), ("html", "html:  ", results.HTML_REPORT_FILE)):
        path = result.directory / name
        if files is not None and key not in files:
            continue  # a report the run did not make (--no-html-report); one it could not write is named, null
        if path in unwritten:
            lines.append(f"{label} {run_files.unwritten_line(unwritten[path])}")
        elif path.exists():
            lines.append(f"{label} {path}")
        else:
            lines.append(f"{label} not written (interrupted): {run_files.report_command(path)}")
    return lines
