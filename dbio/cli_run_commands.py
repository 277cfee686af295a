"""The commands that load the data set and measure on the server: quickstart, setup, run, baseline, ops and
sweep; how a run's end becomes the exit code."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from dbio.cli_config import build_config, config_options, with_config
from dbio.cli_group import EXIT_INTERRUPTED, EXIT_TERMINATED, command, ui_of
from dbio.commands.quickstart import PRESET as QUICKSTART_PRESET
from dbio.config import Config
from dbio.errors import UsageError

@command("quickstart")
@with_config("quickstart", preset=QUICKSTART_PRESET)
@click.pass_context
def quickstart_command(ctx: click.Context, config: Config, reload: bool, **_: Any) -> None:
    """Create the embedded instance, load a data set 8x its buffer cache, run 30 s and report."""
    from dbio.commands import quickstart as qs
    from dbio.jobs.run import summary_lines

    result = qs.quickstart(config, ui_of(ctx), reload=reload)
    _finish_run(ctx, result, summary_lines(result) + qs.closing_lines(config))


@command()
@with_config("setup")
@click.pass_context
def setup(ctx: click.Context, config: Config, verify: bool, reload: bool, **_: Any) -> None:
    """Load the data set (resumes an interrupted load; does nothing when it is already loaded)."""
    from dbio.jobs import setup as setup_job
    from dbio.config import each_node

    for node in each_node(config):  # several --dsn: every server is loaded, one after the other
        setup_job.setup(node, ui_of(ctx), verify=verify, reload=reload)


BASELINE_PATH_HELP = ("For the baseline: a directory on this host on the storage under test, where fio reads a "
                      "scratch file it writes first (and removes); needed when the server runs on another host.")


REPEAT_HELP = ("Run N times, one after the other, each its own result, in one directory with repeat.json: each "
               "figure's median, min and max over the runs; dbio compare judges against that spread [default: 1].")


def _repeat_checked(config: Config, repeat: int | None) -> int:
    from dbio.commands import repeat as repeats

    return repeats.check(repeat, config)


@command()
@with_config("run", check=lambda config, params: _repeat_checked(config, params.get("repeat")))
@click.pass_context
def run(ctx: click.Context, config: Config, baseline: bool, baseline_path: Path | None, repeat: int | None,
        **_: Any) -> None:
    """Run the workload and write its result in a new directory under --results-dir (dbio-results/DATE-TIME-LABEL):
    result.json (every figure, for dbio report and dbio compare), report.txt (AWR style), report.html (the same
    with charts, for a browser) and samples.jsonl (every interval's readings)."""
    from dbio import metrics
    from dbio.jobs import baseline as baselines
    from dbio.commands import repeat as repeats
    from dbio.jobs import run as run_job

    repeat = _repeat_checked(config, repeat)
    request = baselines.request(baseline_path) if baseline or baseline_path is not None else None
    with metrics.serving(config.run.metrics_port, config.run.metrics_address, ui_of(ctx)):
        if repeat > 1:
            repeated = repeats.run(config, ui_of(ctx), repeat, baseline=request)
        else:
            result = run_job.run(config, ui_of(ctx), baseline=request)
    if repeat > 1:
        _finish_run(ctx, repeated, repeats.summary_lines(repeated))
        return
    _finish_run(ctx, result, run_job.summary_lines(result))


@command("baseline")
@with_config("baseline")
@click.pass_context
def baseline_command(ctx: click.Context, config: Config, baseline_path: Path | None, out: Path | None,
                     **_: Any) -> None:
    """fio alone on the storage under test: 8 KiB O_DIRECT random reads of the instance's own data files, one
    synchronous job per session, then a deep asynchronous queue for the device's ceiling (needs fio)."""
    from dbio.jobs import baseline as baselines

    baselines.baseline(config, ui_of(ctx), baseline_path, out)


@command("ops")
@click.argument("operation", type=click.Choice(["load", "index", "backup", "recovery", "checkpoint"]))
@with_config("ops", exclusive=False)  # it holds the server itself, once its request is checked
@click.pass_context
def ops_command(ctx: click.Context, config: Config, operation: str, destination: Path | None, wal: str | None,
                dirty: str | None, baseline: bool, cold: bool, changes: int | None = None, **_: Any) -> None:
    """Time a maintenance operation on the loaded data set, with each device's figures and the host's CPU, and
    write a result: load (drops dbio's data set and loads it again), index (re-creates dbio's own index), backup
    (pg_basebackup to --target), recovery (WAL, crash, timed restart; the embedded instance only), checkpoint."""
    from dbio.jobs import ops as ops_job

    document = ops_job.ops(config, ui_of(ctx), ops_job.request(operation, destination, wal, dirty, baseline, cold,
                                                               changes))
    for line in ops_job.summary_lines(document):
        ui_of(ctx).console.print(line, markup=False, highlight=False, soft_wrap=True)
    if document["status"] == "interrupted":
        ctx.exit(EXIT_TERMINATED if document.get("signal") == "SIGTERM" else EXIT_INTERRUPTED)
    if document["status"] != "complete" or document["unwritten"]:
        ctx.exit(1)


def _finish_run(ctx: click.Context, result: Any, lines: list[str]) -> None:
    ui = ui_of(ctx)
    for line in lines:
        ui.console.print(line, markup=False, highlight=False, soft_wrap=True)
    if result.status == "interrupted" or result.signal:  # a signal may also stop the baseline after a whole run
        ctx.exit(EXIT_TERMINATED if result.signal == "SIGTERM" else EXIT_INTERRUPTED)
    if result.status != "complete" or result.unwritten:  # a report a full disk kept out: said above, with why
        ctx.exit(1)


@command()
@functools.partial(config_options, command="sweep")
@click.pass_context
def sweep(ctx: click.Context, vary: tuple[str, ...], sessions: str | None, until_peak: bool, peak_gain: float,
          knee_gain: float, resume_dir: Path | None, baseline: bool, baseline_path: Path | None, op: str | None,
          target_iops: float | None, latency_slo: str | None, prices: tuple[str, ...], repeat: int | None = None,
          objective: str | None = None, max_sessions: int | None = None, rates: str | None = None,
          max_rate: int | None = None, **params: Any) -> None:
    """Run a step per combination of knob values, each a normal result, and report them together."""
    from dbio.jobs import baseline as baselines
    from dbio.jobs import capacity
    from dbio.commands import sweep as sweep_command
    from dbio.sweep import plan as sweep_plan

    if resume_dir is not None:
        given = [k for k, v in params.items() if v not in (None, ())] + (["--vary"] if vary else [])
        given += ["--baseline"] if baseline or baseline_path is not None else []
        given += ["--target-iops/--latency-slo/--price"] if target_iops or latency_slo or prices else []
        given += ["--op"] if op else []
        given += ["--rate/--max-rate"] if rates is not None or max_rate is not None else []
        given += ["--repeat"] if repeat is not None else []
        given += ["--objective/--max-sessions"] if objective is not None or max_sessions is not None else []
        if given:
            raise UsageError(f"--resume takes no other options (got {', '.join(given)})",
                             "a resumed sweep runs with the settings it was started with")
        sweep_command.resume(resume_dir, ui_of(ctx), Path.cwd())
        return
    checked: dict[str, Any] = {}
    flags_given = dict(params)  # as typed: the configuration's build takes them from params

    def request_checked(located: Config) -> None:  # before any server is reached (a stopped one is not started)
        if located.run.start_at is not None:
            raise UsageError("--start-at opens one run's window at an agreed instant; a sweep runs many windows",
                             "use --start-at with dbio run")
        if repeat is not None and repeat < 1:
            raise UsageError(f"--repeat {repeat}: each step runs at least once", "give --repeat 1 or more (e.g. 3)")
        if len(located.connection.dsns) > 1:
            raise UsageError("a sweep runs on one server (several --dsn are for dbio run)", "give one --dsn")
        checked["asked"] = capacity.request(target_iops, latency_slo, prices, located.cost)
        checked["varies"] = [sweep_plan.parse_vary(v) for v in vary]
        if rates is not None:  # --rate R1,R2,... is --vary rate=R1,R2,...: one of them
            if any(v.key == "rate" for v in checked["varies"]):
                raise UsageError(f"--rate {rates} is also varied by --vary rate=...",
                                 "give --rate or --vary rate, not both")
            checked["varies"].append(sweep_plan.rate_vary(rates))
        for varied in checked["varies"]:  # a step takes the varied value: a flag's own would be dropped unsaid
            if flags_given.get(varied.key) not in (None, ()):
                flag = "--" + varied.key.replace("_", "-")
                raise UsageError(f"{flag} {flags_given[varied.key]} is also varied by --vary {varied.key}=...",
                                 f"give {flag} or --vary {varied.key}, not both")
        sweep_command.search_request(objective, max_sessions, until_peak=until_peak, op=op is not None,
                                     repeat=repeat or 1, sessions=sessions, varies=checked["varies"],
                                     max_rate=max_rate)
        sweep_command.grid_checked(checked["varies"], sessions)

    base = build_config(params, None, ui_of(ctx), "sweep", request_checked)
    asked, varies = checked["asked"], checked["varies"]
    request = baselines.request(baseline_path) if baseline or baseline_path is not None else None
    from dbio import metrics
    from dbio.jobs import ops as ops_job

    with metrics.serving(base.run.metrics_port, base.run.metrics_address, ui_of(ctx)):
        sweep_command.start(base, varies, ui_of(ctx), until_peak=until_peak, knee_gain=knee_gain,
                            peak_gain=peak_gain, sessions=sessions, baseline=request, capacity=asked,
                            op=ops_job.sweep_op(op) if op else None, repeat=repeat or 1, objective=objective,
                            max_sessions=max_sessions, max_rate=max_rate)



COMMANDS = (quickstart_command, setup, run, baseline_command, ops_command, sweep)
