"""dbio teardown, dbio instance ..., dbio report: the commands around setup and run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from dbio import result as results
from dbio import target as targets
from dbio import output, result_records
from dbio.collect import cgroup, host
from dbio.jobs import dataset
from dbio.config import Config
from dbio.engines.base import SetupRecord
from dbio.errors import UsageError
from dbio import report as reports
from dbio.report import limit_findings, storage_stack
from dbio.result_context import Storage
from dbio.ui import UI
from dbio.units import format_bytes


def teardown(config: Config, ui: UI, *, yes: bool = False, confirm: Callable[[str], bool] = lambda _: False) -> None:
    """Drop dbio's objects; a loaded data set only once confirmed (a question on a terminal, or --yes),
    as dbio instance destroy asks before it removes an instance."""
    if config.connection.embedded and not targets.instance_for(config, ui.note).exists():
        raise UsageError(f"no dbio instance in {config.instance.data_dir}", "nothing to tear down")
    target = targets.resolve_existing(config, ui.note, "nothing to tear down")
    conn = target.connect("dbio:teardown")
    try:
        info = target.engine.probe(conn)
        if info.caps.read_only:  # a hot standby: what its primary drops goes from it by replay
            ui.say(f"{info.description} is a read-only server (hot standby): nothing dropped there; tearing down "
                   "its primary removes dbio's objects from it too")
            return
        loaded = target.engine.read_setup(conn)
        if loaded is not None and not yes:
            question = f"drop the data set loaded in {info.description} ({_loaded_text(loaded)})?"
            if not confirm(question):
                raise UsageError(f"not confirmed: the data set in {info.description} stays",
                                 "answer y at the prompt, or pass --yes (scripts must)")
        done = target.engine.teardown(conn)
    finally:
        target.engine.close(conn)
    if not done.dropped:
        ui.say("nothing of dbio's was found; nothing dropped")
    for item in done.dropped:
        ui.say(f"dropped {item}")
    dataset.report_teardown(ui, done)


def _loaded_text(loaded: SetupRecord) -> str:
    """The data set a teardown would drop, as setup described it: its shape and its rows' size."""
    spec = loaded.spec
    return f"setup {loaded.setup_id}: {dataset.describe(spec.scale, spec.schemas)}" + (
        ", an interrupted load" if dataset.unfinished(loaded) else "")


def instance_init(config: Config, ui: UI) -> None:
    instance = targets.instance_for(config, ui.note)
    instance.init(config.instance, sessions=config.workload.sessions, dbname=config.connection.dbname)
    targets.remember(config, instance)
    ui.say(f"instance ready: {instance.conninfo(config.connection.dbname)}")


def instance_start(config: Config, ui: UI) -> None:
    instance = targets.instance_for(config, ui.note)
    if not instance.exists():
        raise UsageError(f"no dbio instance in {config.instance.data_dir}", "create it with dbio instance init")
    conninfo = instance.ensure(config.instance, sessions=config.workload.sessions, purpose="run",
                               dbname=config.connection.dbname)
    targets.remember(config, instance)
    ui.say(f"running: {conninfo}")


def instance_stop(config: Config, ui: UI) -> None:
    instance = targets.instance_for(config, ui.note)
    if not instance.exists():
        raise UsageError(f"no dbio instance in {config.instance.data_dir}", "nothing to stop")
    if not instance.stop():
        ui.say("the embedded server was not running")


def instance_status(config: Config, ui: UI) -> int:
    status = targets.instance_for(config, ui.note).status()
    if not status.exists:
        for line in absent_lines(config, status.data_dir):
            ui.say(line)
        return 3
    ui.say(f"instance   {status.data_dir}")
    ui.say(f"state      {'running (pid ' + str(status.pid) + ')' if status.running else 'stopped'}")
    ui.say(f"server     {status.server_line()}")
    ui.say(f"socket     {status.socket_line()}")
    ui.say(f"profile    {status.purpose}: {status.profile()}")
    ui.say(f"size       {format_bytes(status.size_bytes or 0)}")
    ui.say(f"log        {status.log_file}")
    for line in member_lines(status.members):  # () but with standbys (Features.standbys)
        ui.say(line)
    for label, text in storage_stack.pairs(Storage.of(host.storage_under(status.data_dir, status.wal_dir)),
                                           host.tuning()):
        ui.say(f"{label.lower():<10} {text}")
    if status.running and status.pid:  # a cgroup's quota, I/O limits or an affinity the server runs under
        limits = cgroup.limits_of([status.pid])
        if limits:
            ui.say(f"{'limits':<10} {limit_findings.summary(result_records.of({'environment': {'limits': limits}}))}")
    return 0 if status.running else 3


def absent_lines(config: Config, data_dir: Path) -> list[str]:
    """No instance where dbio looked: where that was and why there, the instances of dbio's in the other
    engines' default places, and how to name another."""
    from dbio.config_checks import display_key
    from dbio.engines import registry
    from dbio.option_table import BY_KEY

    engine = config.connection.engine
    origin = config.origins.get("data_dir", "default")
    why = (f"the {engine} engine's default place: no --data-dir given" if origin == "default"
           else f"from {display_key(BY_KEY['data_dir'], origin)}")
    lines = [f"no dbio instance in {data_dir} ({why})"]
    for other in (name for name in registry.names() if name != engine):
        place = registry.entry(other).default_data_dir()
        try:
            there = other in registry.owners_of_instance(place)
        except OSError:
            there = False
        if there:
            lines.append(f"the {other} engine's instance is in {place}: dbio instance status --engine {other}")
    lines.append("name the instance with --data-dir DIR (the one dbio instance init was given), and its engine "
                 f"with --engine {'|'.join(registry.names())}")
    return lines


def member_lines(members: tuple[Any, ...]) -> list[str]:
    """The members of an instance with standbys: role, state, port, replay lag, data directory (pure)."""
    if not members:
        return []
    lines = [f"{'member':<10} {'role':<8} {'state':<8} {'port':>5}  {'replay lag':<20} data directory"]
    for m in members:
        if m.role != "standby":  # a primary, or a node of a multi-writer cluster: nothing to replay behind
            lag = ""
        elif m.lag_bytes is None:
            lag = "-"
        else:
            seconds = "-" if m.lag_seconds is None else f"{m.lag_seconds:.3f} s"
            lag = f"{format_bytes(m.lag_bytes)}, {seconds}"
        state = "running" if m.running else "stopped"
        lines.append(f"{m.name:<10} {m.role:<8} {state:<8} {m.port:>5}  {lag:<20} {m.data_dir}"
                     + (f" ({m.note})" if m.note else ""))
    return lines


def instance_destroy(config: Config, ui: UI, *, yes: bool, confirm: Callable[[str], bool]) -> None:
    instance = targets.instance_for(config, ui.note)
    plan = instance.destroy_plan()
    question = (f"remove the dbio instance in {plan.data_dir} ({format_bytes(plan.size_bytes)} of data)?")
    if not yes and not confirm(question):
        raise UsageError(f"not confirmed: the instance in {plan.data_dir} stays",
                         "answer y at the prompt, or pass --yes (scripts must)")
    started = time.monotonic()
    if instance.is_running():  # a clean shutdown takes seconds (InnoDB's the most): said before it starts
        ui.note(f"stopping the server of the instance in {plan.data_dir} (a clean shutdown)")
        instance.stop(quiet=True)
    ui.note(f"removing {format_bytes(plan.size_bytes)} of data in {plan.data_dir}")
    instance.destroy(plan)
    for note in plan.leftovers():
        ui.say(f"left in place: {note}")
    ui.say(f"removed the instance in {plan.data_dir} ({time.monotonic() - started:.1f} s)")


def report(path: Path, out: Path | None, form: str, ui: UI, capacity: dict[str, Any] | None = None) -> None:
    """A result, or a sweep directory: rendered again from what was recorded; capacity: a target,
    objective and prices for a sweep (over those it was run with)."""
    from dbio.sweep.document import load_steps
    from dbio.report import sweep_model
    from dbio.sweep import document as sweeps

    from dbio import ops_result

    if ops_result.is_ops(path):  # a maintenance operation's result (dbio ops)
        from dbio.report import ops_model

        if capacity is not None:
            raise UsageError("--target-iops, --latency-slo and --price read a sweep's measured steps",
                             "give a sweep's directory")
        text = reports.render_model(ops_model.build(ops_result.read_operation(path)), form)
        source = (path / results.RESULT_FILE) if path.is_dir() else path
    elif sweeps.is_sweep(path):
        directory = path if path.is_dir() else path.parent
        sweep = sweeps.read_sweep(directory)
        text = reports.render_model(sweep_model.build(sweep, load_steps(directory, sweep), capacity), form)
        source = directory / sweeps.SWEEP_FILE
    else:
        if capacity is not None:
            raise UsageError("--target-iops, --latency-slo and --price read a sweep's measured steps",
                             "give a sweep's directory (dbio sweep --sessions 1,2,4,8 makes one)")
        text = reports.render(results.read_result(path), form)
        source = (path / results.RESULT_FILE) if path.is_dir() else path
    if out is not None and out.exists() and out.resolve() == source.resolve():
        raise UsageError(f"--out {out} is the input itself", "give another file name")
    output.deliver(text, out, ui)
