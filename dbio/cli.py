"""The dbio command line. The one place that turns errors into messages and exit codes."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import click

from dbio import __version__, command_help, command_options, controls
from dbio.commands.quickstart import PRESET as QUICKSTART_PRESET
from dbio.config import SESSIONS_FLAG, Config
from dbio.engines import registry
from dbio.errors import ConfigErrors, DbioError, UsageError
from dbio.option import Option
from dbio.options import BY_KEY, LAYOUT_KNOBS, OPTIONS, RESTART_KNOBS
from dbio.ui import UI

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process SIGTERM ended
SECTION_TITLES = {"workload": "workload", "instance": "embedded instance", "run": "results", "connection": "server"}


def config_options(func: Callable[..., Any], preset: dict[str, Any] | None = None,
                   command: str = "run") -> Callable[..., Any]:
    """The options the command uses (command_options.COMMANDS), plus the configuration files, as
    command-line flags; preset: the command's own defaults, shown in its help."""
    used = [option for option in OPTIONS if command_options.takes(command, option)]
    keys = {option.key for option in used}
    def hidden(name: str) -> bool:  # listed in the command's help, or only in dbio options (command_help)
        return command in command_help.KEY_OPTIONS and not command_help.shown(command, name)

    extras: dict[str, dict[str, Any]] = {
        "--config": dict(param_decls=("--config", "config_file"), type=click.Path(path_type=Path),
                         help="TOML configuration file [default: ./dbio.toml when it exists]."),
        "--slob-conf": dict(param_decls=("--slob-conf", "slob_conf"), type=click.Path(path_type=Path),
                            help="A SLOB-style slob.conf (KEY=VALUE lines with SLOB's names)."),
        **{option.flag: dict(param_decls=(option.flag, option.key), multiple=True, help=text,
                             metavar="NAME=VALUE" if option.kind == "settings" else "NAME")
           for option, text in engine_flags()},
        "--password": dict(param_decls=("--password", "ask_password"), is_flag=True,
                           help="Ask for the server's password (it is never shown, stored or written anywhere)."),
    }
    brought = {**command_options.EXTRA_FLAGS, **{option.flag: option.key for option, _ in engine_flags()}}
    decorators = [click.option(*spec.pop("param_decls"), default=None, hidden=hidden(flag), **spec)
                  for flag, spec in extras.items() if brought[flag] is None or brought[flag] in keys]
    if command_options.takes_sessions(command):
        decorators.append(click.option(
            SESSIONS_FLAG, "total_sessions", type=click.IntRange(min=1), default=None, metavar="N",
            hidden=hidden(SESSIONS_FLAG),
            help="(workload) Total sessions: threads_per_schema = N / schemas (N itself with one schema; with "
                 "several, a multiple of them). Instead of --threads-per-schema."))
    for option in used:
        names = command_options.flags_of(option)
        if not names or option.kind in ("settings", "names"):
            continue
        title = SECTION_TITLES[option.section]
        text = f"({title}) {command_options.help_text(option, preset)}"
        if option.kind == "bool":
            flag = f"{option.flag}/--no-{option.flag[2:]}"
            decorators.append(click.option(flag, option.key, default=None, help=text, hidden=hidden(option.key)))
        else:
            metavar = {"blocks": "BLOCKS|SIZE", "size": "SIZE", "duration": "DURATION", "int": "N", "pct": "PCT",
                       "choice": "|".join(option.choices), "path": "PATH"}.get(option.kind, "TEXT")
            decorators.append(click.option(*names, option.key, default=None, metavar=metavar, hidden=hidden(option.key),
                                           multiple=option.kind == "strs", help=text))
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def engine_flags() -> list[tuple[Option, str]]:
    """Each registered engine's own repeatable flags (EngineSpec.flags: --pg-setting, --allow-setting), with their
    help: options of kind settings or names, taken one item each time."""
    return [(BY_KEY[key], text) for name in registry.names() for key, text in registry.entry(name).flags.items()]


def engine_titles() -> str:
    """Each engine's name and what its users call it: 'postgresql: PostgreSQL, mysql: MySQL and MariaDB'."""
    return ", ".join(f"{name}: {registry.entry(name).title}" for name in registry.names())


def build_config(params: dict[str, Any], preset: dict[str, Any] | None = None, ui: UI | None = None,
                 command: str = "", check: Callable[[Config], object] | None = None) -> Config:
    """The command's one Config (config_resolver.py), the files it read said on the terminal. check: the
    command's own flags against the configuration, before any server is reached."""
    from dbio import config_resolver

    sources = config_resolver.command_sources(params, preset, command)
    config = config_resolver.resolve_config(sources, command=command, shape=config_resolver.shape_of(command, params),
                                            writes_results=command in WRITES_RESULTS,
                                            notify=ui.note if ui is not None else lambda _: None,
                                            request_check=check)
    if ui is not None:
        say_files_read(config, ui)
    return config


def say_files_read(config: Config, ui: UI) -> None:
    for path in config.files:
        ui.note(f"configuration read from {path}")
    for notice in config.notices:
        ui.err.print(f"dbio: {notice}", markup=False, highlight=False, soft_wrap=True)


def _ui(ctx: click.Context) -> UI:
    return ctx.obj["ui"]


# Each makes its directory in --results-dir, judged before the server is held, started or changed
# (config_resolver.resolve_config; a sweep's too).
WRITES_RESULTS = ("quickstart", "run", "ops", "sweep")


def with_config(command: str, preset: dict[str, Any] | None = None, *, exclusive: bool = True,
                check: Callable[[Config, dict[str, Any]], object] | None = None) -> Callable[..., Any]:
    """Build the validated Config from the command's flags before the command body runs.

    command: as typed (it decides the flags); exclusive: the command changes or measures the
    instance (or database): it holds it alone for its whole duration, and is refused at once
    while another dbio command does; check: the command's own flags checked against the Config, before."""
    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def inner(*args: Any, **params: Any) -> Any:
            config = build_config(params, preset, _ui(click.get_current_context()), command,
                                  (lambda located: check(located, params)) if check is not None else None)
            if not exclusive:
                return func(*args, config=config, **params)
            from dbio import target

            with target.exclusive(config, command, _ui(click.get_current_context()).note):
                return func(*args, config=config, **params)

        return config_options(inner, preset, command)
    return wrap


DEBUG_HELP = "Show tracebacks of unexpected errors."
QUIET_HELP = "Only errors and the final summary."


def _global_after(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--debug or -q after the command's name (dbio run -q): as given before it."""
    if value:
        root = ctx.find_root()
        root.ensure_object(dict)
        if param.name == "debug":
            root.obj["debug"] = True
        else:
            root.obj["ui"] = UI(quiet=True)


GLOBAL_OPTIONS = (
    click.Option(["--debug"], is_flag=True, expose_value=False, callback=_global_after, help=DEBUG_HELP),
    click.Option(["--quiet", "-q"], is_flag=True, expose_value=False, callback=_global_after, help=QUIET_HELP),
)


class Commands(click.Group):
    """dbio's commands, each taking the global options too: `dbio run -q` as `dbio -q run`."""

    group_class = type  # a group made with @cli.group() is one of these: its commands take them as well
    prefix = ""  # the words before its commands' names: "instance " in the instance group

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        path = f"{self.prefix}{name or cmd.name}"  # as typed: "run", "instance init"
        if isinstance(cmd, Commands):
            cmd.prefix = f"{path} "
        cmd.epilog = cmd.epilog or command_help.epilog(path) or None
        taken = {opt for param in cmd.params for opt in param.opts}
        cmd.params += [param for param in GLOBAL_OPTIONS if not taken & set(param.opts)]
        super().add_command(cmd, name)


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="dbio")
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
@click.pass_context
def cli(ctx: click.Context, debug: bool, quiet: bool) -> None:
    """dbio: can this platform serve SQL-driven database physical I/O, and at what latency and CPU cost?

    The SLOB method for PostgreSQL, and for MySQL and MariaDB (--engine mysql): one-row-per-block
    tables much larger than the buffer cache, many synchronized zero-think-time sessions running a
    server-side work loop, and AWR-style reports from the engine's own counters. Without --dsn,
    dbio uses an embedded PostgreSQL 18 instance it creates itself, or with --engine mysql a
    MariaDB/MySQL instance of the server programs on the machine (put either on the storage under
    test with --data-dir).
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["ui"] = UI(quiet=quiet)


cli.epilog = command_help.epilog("")


@cli.command("quickstart")
@click.option("--reload", is_flag=True, help="Replace a data set loaded with a different configuration.")
@with_config("quickstart", preset=QUICKSTART_PRESET)
@click.pass_context
def quickstart_command(ctx: click.Context, config: Config, reload: bool, **_: Any) -> None:
    """Create the embedded instance, load a data set 8x its buffer cache, run 30 s and report."""
    from dbio.commands import quickstart as qs
    from dbio.commands.run import summary_lines

    result = qs.quickstart(config, _ui(ctx), reload=reload)
    _finish_run(ctx, result, summary_lines(result) + qs.closing_lines(config))


@cli.command()
@click.option("--verify", is_flag=True, help="Check the load: one row per block, keys, index, scattering.")
@click.option("--reload", is_flag=True, help="Replace a load made with a different configuration.")
@with_config("setup")
@click.pass_context
def setup(ctx: click.Context, config: Config, verify: bool, reload: bool, **_: Any) -> None:
    """Load the data set (resumes an interrupted load; does nothing when it is already loaded)."""
    from dbio.commands import setup as setup_command
    from dbio.config import each_node

    for node in each_node(config):  # several --dsn: every server is loaded, one after the other
        setup_command.setup(node, _ui(ctx), verify=verify, reload=reload)


BASELINE_PATH_HELP = ("For the baseline: a directory on this host on the storage under test, where fio reads a "
                      "scratch file it writes first (and removes); needed when the server runs on another host.")


REPEAT_HELP = ("Run N times, one after the other, each its own result, in one directory with repeat.json: each "
               "figure's median, min and max over the runs; dbio compare judges against that spread [default: 1].")


def _repeat_checked(config: Config, repeat: int | None) -> int:
    from dbio.commands import repeat as repeats

    return repeats.check(repeat, config)


@cli.command()
@click.option("--baseline", is_flag=True, help="Run fio on the same data files right before the run, at the same "
                                                "sessions, and report the database's efficiency (needs fio).")
@click.option("--baseline-path", "baseline_path", type=click.Path(path_type=Path), default=None,
              help=BASELINE_PATH_HELP)
@click.option("--repeat", "repeat", type=int, default=None, metavar="N", help=REPEAT_HELP)
@with_config("run", check=lambda config, params: _repeat_checked(config, params.get("repeat")))
@click.pass_context
def run(ctx: click.Context, config: Config, baseline: bool, baseline_path: Path | None, repeat: int | None,
        **_: Any) -> None:
    """Run the workload and write its result in a new directory under --results-dir (dbio-results/DATE-TIME-LABEL):
    result.json (every figure, for dbio report and dbio compare), report.txt (AWR style), report.html (the same
    with charts, for a browser) and samples.jsonl (every interval's readings)."""
    from dbio import metrics
    from dbio.commands import baseline as baselines
    from dbio.commands import repeat as repeats
    from dbio.commands import run as run_command

    repeat = _repeat_checked(config, repeat)
    request = baselines.request(baseline_path) if baseline or baseline_path is not None else None
    with metrics.serving(config.run.metrics_port, config.run.metrics_address, _ui(ctx)):
        if repeat > 1:
            repeated = repeats.run(config, _ui(ctx), repeat, baseline=request)
        else:
            result = run_command.run(config, _ui(ctx), baseline=request)
    if repeat > 1:
        _finish_run(ctx, repeated, repeats.summary_lines(repeated))
        return
    _finish_run(ctx, result, run_command.summary_lines(result))


@cli.command("baseline")
@click.option("--baseline-path", "baseline_path", type=click.Path(path_type=Path), default=None,
              help=BASELINE_PATH_HELP)
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Also write the baseline's record "
                                                                           "(JSON) here.")
@with_config("baseline")
@click.pass_context
def baseline_command(ctx: click.Context, config: Config, baseline_path: Path | None, out: Path | None,
                     **_: Any) -> None:
    """fio alone on the storage under test: 8 KiB O_DIRECT random reads of the instance's own data files, one
    synchronous job per session, then a deep asynchronous queue for the device's ceiling (needs fio)."""
    from dbio.commands import baseline as baselines

    baselines.baseline(config, _ui(ctx), baseline_path, out)


@cli.command("ops")
@click.argument("operation", type=click.Choice(["load", "index", "backup", "recovery", "checkpoint"]))
@click.option("--target", type=click.Path(path_type=Path), default=None,
              help="backup: an empty or new directory for the base backup (checked before anything starts).")
@click.option("--wal", default=None, metavar="SIZE", help="recovery: WAL to accumulate before the crash "
                                                          "[default: 256MB].")
@click.option("--changes-per-block", "changes", type=click.IntRange(1, 64), default=None, metavar="N",
              help="recovery: change each block N times after the checkpoint, over a span of blocks four times "
                   "the buffer cache or more, so that redo reads back the blocks it evicted (random reads, as the "
                   "white paper's recovery test) [default: 1: each block once, redo replays full-page images and "
                   "reads only WAL].")
@click.option("--dirty", default=None, metavar="SIZE", help="checkpoint: data to dirty before the timed checkpoint, "
                                                            "at most 90% of shared_buffers [default: 64MB].")
@click.option("--baseline", is_flag=True, help="backup: fio reads the data files sequentially first, and the backup's "
                                                "MB/s is given against that rate (needs fio).")
@click.option("--cold", is_flag=True, help="backup: stop the instance and copy its files (a cold backup) instead of "
                                            "pg_basebackup's online one.")
@with_config("ops", exclusive=False)  # it holds the server itself, once its request is checked
@click.pass_context
def ops_command(ctx: click.Context, config: Config, operation: str, target: Path | None, wal: str | None,
                dirty: str | None, baseline: bool, cold: bool, changes: int | None = None, **_: Any) -> None:
    """Time a maintenance operation on the loaded data set, with each device's figures and the host's CPU, and
    write a result: load (drops dbio's data set and loads it again), index (re-creates dbio's own index), backup
    (pg_basebackup to --target), recovery (WAL, crash, timed restart; the embedded instance only), checkpoint."""
    from dbio.commands import ops as ops_run

    document = ops_run.ops(config, _ui(ctx), ops_run.request(operation, target, wal, dirty, baseline, cold, changes))
    for line in ops_run.summary_lines(document):
        _ui(ctx).console.print(line, markup=False, highlight=False, soft_wrap=True)
    if document["status"] == "interrupted":
        ctx.exit(EXIT_TERMINATED if document.get("signal") == "SIGTERM" else EXIT_INTERRUPTED)
    if document["status"] != "complete" or document["unwritten"]:
        ctx.exit(1)


def _finish_run(ctx: click.Context, result: Any, lines: list[str]) -> None:
    ui = _ui(ctx)
    for line in lines:
        ui.console.print(line, markup=False, highlight=False, soft_wrap=True)
    if result.status == "interrupted" or result.signal:  # a signal may also stop the baseline after a whole run
        ctx.exit(EXIT_TERMINATED if result.signal == "SIGTERM" else EXIT_INTERRUPTED)
    if result.status != "complete" or result.unwritten:  # a report a full disk kept out: said above, with why
        ctx.exit(1)


def capacity_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--target-iops, --latency-slo, --price: a sweep's capacity statements and cost table."""
    for decorator in reversed((
            click.option("--target-iops", "target_iops", type=float, default=None, metavar="N",
                         help="Capacity: the I/O requests/s to reach; the report says from the measured steps "
                              "how many sessions reach it, or that it lies beyond them."),
            click.option("--latency-slo", "latency_slo", default=None, metavar="STAT<LIMIT",
                         help="Capacity: the latency objective the target must meet, as --objective's "
                              "(p99: SELECT)."),
            click.option("--price", "prices", multiple=True, metavar="NAME=AMOUNT/UNIT",
                         help="Cost (repeatable): instance=.../month, volume=.../GB-month, "
                              "iops=.../provisioned-IOPS-month; a [cost] table in dbio.toml gives them too."))):
        func = decorator(func)
    return func


@cli.command()
@click.option("--vary", "vary", multiple=True, metavar="KEY=V1,V2,...",
              help="A knob and its values (repeatable): any run knob, or "
                   f"{', '.join(RESTART_KNOBS)} (these restart the embedded instance), or "
                   f"{', '.join(LAYOUT_KNOBS)} (layouts: places joined with ':', 'none' for the data directory; "
                   "each layout moves the WAL or reloads the tables).")
@click.option("--sessions", "sessions", metavar="N1,N2,...", help="Total sessions per step (sessions = schemas x "
                                                                   "threads_per_schema).")
@click.option("--until-peak", is_flag=True, help="Double the sessions until reads/s stop growing.")
@click.option("--objective", "objective", default=None, metavar="STAT<LIMIT",
              help="Search the sessions for the most reads/s within it: 'read_p99<2ms', 'avg_read<1ms'...")
@click.option("--max-sessions", "max_sessions", type=int, default=None, metavar="N",
              help="--objective's most sessions [default: 4096].")
@click.option("--peak-gain", type=float, default=0.05, show_default=True,
              help="--until-peak stops when doubling adds less than this share of reads/s.")
@click.option("--knee-gain", type=float, default=0.10, show_default=True,
              help="The knee is where more sessions add less than this share of reads/s while latency rises.")
@click.option("--resume", "resume_dir", type=click.Path(path_type=Path), default=None,
              help="Finish an interrupted sweep (its directory).")
@click.option("--baseline", is_flag=True, help="Run fio on the same data files right before each step, at the "
                                                "step's sessions: the raw curve beside the database's (needs fio).")
@click.option("--baseline-path", "baseline_path", type=click.Path(path_type=Path), default=None,
              help=BASELINE_PATH_HELP)
@click.option("--op", "op", default=None, metavar="OPERATION[=SIZE]",
              help="Each step is a maintenance operation instead of a run (see dbio ops): index, recovery=WAL "
                   "(e.g. recovery=256MB) or checkpoint=DIRTY (e.g. checkpoint=64MB).")
@click.option("--repeat", "repeat", type=int, default=None, metavar="N",
              help="Run each step N times, interleaved (round 1 of every step, then round 2, ...): each step's median "
                   "and spread in the report [default: 1].")
@capacity_options
@functools.partial(config_options, command="sweep")
@click.pass_context
def sweep(ctx: click.Context, vary: tuple[str, ...], sessions: str | None, until_peak: bool, peak_gain: float,
          knee_gain: float, resume_dir: Path | None, baseline: bool, baseline_path: Path | None, op: str | None,
          target_iops: float | None, latency_slo: str | None, prices: tuple[str, ...], repeat: int | None = None,
          objective: str | None = None, max_sessions: int | None = None, **params: Any) -> None:
    """Run a step per combination of knob values, each a normal result, and report them together."""
    from dbio.commands import baseline as baselines
    from dbio.commands import capacity
    from dbio.commands import sweep as sweep_command
    from dbio.sweep import plan as sweep_plan

    if resume_dir is not None:
        given = [k for k, v in params.items() if v not in (None, ())] + (["--vary"] if vary else [])
        given += ["--baseline"] if baseline or baseline_path is not None else []
        given += ["--target-iops/--latency-slo/--price"] if target_iops or latency_slo or prices else []
        given += ["--op"] if op else []
        given += ["--repeat"] if repeat is not None else []
        given += ["--objective/--max-sessions"] if objective is not None or max_sessions is not None else []
        if given:
            raise UsageError(f"--resume takes no other options (got {', '.join(given)})",
                             "a resumed sweep runs with the settings it was started with")
        sweep_command.resume(resume_dir, _ui(ctx), Path.cwd())
        return
    checked: dict[str, Any] = {}

    def request_checked(located: Config) -> None:  # before any server is reached (a stopped one is not started)
        if located.run.start_at is not None:
            raise UsageError("--start-at opens one run's window at an agreed instant; a sweep runs many windows",
                             "use --start-at with dbio run")
        if repeat is not None and repeat < 1:
            raise UsageError(f"--repeat {repeat}: each step runs at least once", "give --repeat 1 or more (e.g. 3)")
        if len(located.connection.dsns) > 1:
            raise UsageError("a sweep runs on one server (several --dsn are for dbio run)", "give one --dsn")
        checked["asked"] = capacity.request(target_iops, latency_slo, prices, capacity.cost_table(located.files))
        checked["varies"] = [sweep_plan.parse_vary(v) for v in vary]
        sweep_command.search_request(objective, max_sessions, until_peak=until_peak, op=op is not None,
                                     repeat=repeat or 1, sessions=sessions, varies=checked["varies"])
        sweep_command.grid_checked(checked["varies"], sessions)

    base = build_config(params, None, _ui(ctx), "sweep", request_checked)
    asked, varies = checked["asked"], checked["varies"]
    request = baselines.request(baseline_path) if baseline or baseline_path is not None else None
    from dbio import metrics
    from dbio.commands import ops as ops_command

    with metrics.serving(base.run.metrics_port, base.run.metrics_address, _ui(ctx)):
        sweep_command.start(base, varies, _ui(ctx), until_peak=until_peak, knee_gain=knee_gain,
                            peak_gain=peak_gain, sessions=sessions, baseline=request, capacity=asked,
                            op=ops_command.sweep_op(op) if op else None, repeat=repeat or 1, objective=objective,
                            max_sessions=max_sessions)


FORMATS = ["text", "md", "html", "json"]
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".json": "json"}
FORMAT_DEFAULT = "[default: the --out file's suffix (.html, .md, .json), text otherwise]"


def format_of(out: Path | None) -> str:
    """The format a report written to out is read in: its suffix's, text otherwise (a file named .html
    holds HTML)."""
    return SUFFIX_FORMATS.get(out.suffix.lower(), "text") if out is not None else "text"


@cli.command()
@click.argument("result", type=click.Path(path_type=Path))
@click.option("--format", "form", type=click.Choice(FORMATS), default=None,
              help="text (AWR style), md (Markdown), html (self-contained, with charts), json (the report's "
                   f"figures, unformatted).  {FORMAT_DEFAULT}")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Write the report here instead of stdout.")
@capacity_options
@click.pass_context
def report(ctx: click.Context, result: Path, form: str, out: Path | None, target_iops: float | None,
           latency_slo: str | None, prices: tuple[str, ...]) -> None:
    """Render a result (a run directory or its result.json) again, as text, Markdown, HTML or JSON; for a sweep's
    directory, --target-iops, --latency-slo and --price add capacity and cost from its measured steps."""
    from dbio.commands import admin, capacity

    asked = capacity.request(target_iops, latency_slo, prices)
    admin.report(result, out, form or format_of(out), _ui(ctx), capacity=asked)


@cli.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--names", default=None, help="Names for the inputs, comma-separated (default: their labels).")
@click.option("--format", "form", type=click.Choice(FORMATS), default=None,
              help=f"Output format.  {FORMAT_DEFAULT}")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Write here instead of stdout.")
@click.pass_context
def compare(ctx: click.Context, inputs: tuple[Path, ...], names: str | None, form: str, out: Path | None) -> None:
    """Results (or sweeps) side by side: what differs, deltas against the first, noise or real."""
    from dbio.commands import compare as compare_command

    compare_command.compare(list(inputs), names.split(",") if names else None, form or format_of(out), out, _ui(ctx))


@cli.command()
@click.argument("directories", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "form", type=click.Choice(FORMATS), default=None,
              help=f"Output format (html: the trend page, with its chart).  {FORMAT_DEFAULT}")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Write here instead of stdout.")
@click.pass_context
def history(ctx: click.Context, directories: tuple[Path, ...], form: str, out: Path | None) -> None:
    """Every run and sweep under the results directories (default: ./dbio-results) in time order: what changed
    since the run before, each configuration's changes judged against its runs' own noise, and a trend page
    (--out trend.html). Reads the results as they are; no server is needed."""
    from dbio.commands import history as history_command

    history_command.history_of(list(directories) or [Path("dbio-results")], form or format_of(out), out, _ui(ctx))


@cli.command()
@click.option("--image", required=True, help="Container image that has dbio in it (each pod runs `dbio run`).")
@click.option("--pods", type=int, default=1, show_default=True, help="Pods per target (each --dsn is a target).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("dbio-kubernetes"), show_default=True,
              help="A new directory for the manifests.")
@click.option("--name", "job_name", default="dbio", show_default=True, help="Prefix of every object's name.")
@click.option("--namespace", default=None, help="Namespace of every object (default: kubectl's).")
@click.option("--password-secret", default=None,
              help="A Secret whose key 'password' becomes the pods' " + " or ".join(
                  f"{registry.entry(name).password_env} (--engine {name})" for name in registry.names()) + ".")
@click.option("--results-size", default="1Gi", show_default=True, help="Size of the shared results volume.")
@click.option("--storage-class", default=None, help="Storage class of the results volume (ReadWriteMany).")
@click.option("--pod-cpu", default="1", show_default=True, help="CPU each pod requests.")
@click.option("--pod-memory", default="512Mi", show_default=True, help="Memory each pod requests (and its limit).")
@with_config("kubernetes", exclusive=False)
@click.pass_context
def kubernetes(ctx: click.Context, config: Config, image: str, pods: int, out: Path, job_name: str,
               namespace: str | None, password_secret: str | None, results_size: str, storage_class: str | None,
               pod_cpu: str, pod_memory: str, **_: Any) -> None:
    """Write manifests for many pods, the parts of one run (`dbio run --part`) at one --start-at against the
    given --dsn targets, and the Job that waits for their results and merges them (plain YAML for kubectl;
    dbio never talks to the cluster)."""
    from dbio.commands import kubernetes as k8s_command

    k8s_command.write(config, _ui(ctx), image=image, pods=pods, out=out, name=job_name, namespace=namespace,
                      password_secret=password_secret, results_size=results_size, storage_class=storage_class,
                      cpu=pod_cpu, memory=pod_memory)


@cli.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="A new directory for the merged result.")
@click.option("--names", default=None, help="Names for the inputs, comma-separated (default: their labels).")
@click.option("--label", default=None, help="The merged result's label.")
@click.pass_context
def merge(ctx: click.Context, inputs: tuple[Path, ...], out: Path, names: str | None, label: str | None) -> None:
    """Runs of several hosts that measured the same seconds (--start-at) as one result: each a node, and the total."""
    from dbio.commands import merge as merge_command

    merge_command.merge(list(inputs), names.split(",") if names else None, out, label, _ui(ctx))


def _confirm(question: str) -> bool:
    """y at a terminal's prompt; without a terminal, no (the refusal says to pass --yes)."""
    return sys.stdin.isatty() and click.confirm(question, default=False)


@cli.command()
@click.option("--yes", is_flag=True, help="Do not ask before dropping a loaded data set (scripts must pass it).")
@with_config("teardown")
@click.pass_context
def teardown(ctx: click.Context, config: Config, yes: bool, **_: Any) -> None:
    """Drop everything dbio created in the database, and nothing else (asks first, on a terminal, when a data set
    is loaded)."""
    from dbio.commands import admin
    from dbio.config import each_node

    for node in each_node(config):
        admin.teardown(node, _ui(ctx), yes=yes, confirm=_confirm)


@cli.group()
def instance() -> None:
    """dbio's own instance: the embedded PostgreSQL, or with --engine mysql the managed MariaDB/MySQL: init,
    start, stop, status, destroy."""


def _instance_command(name: str, doc: str, *, exclusive: bool = True) -> None:
    @instance.command(name, help=doc)
    @with_config(f"instance {name}", exclusive=exclusive)
    @click.pass_context
    def command(ctx: click.Context, config: Config, **_: Any) -> None:
        from dbio.commands import admin

        code = getattr(admin, f"instance_{name}")(config, _ui(ctx))
        if isinstance(code, int) and code:
            ctx.exit(code)


_instance_command("init", "Create the instance (PostgreSQL's initdb, or MariaDB's or MySQL's own with --engine "
                          "mysql; dbio's configuration) and start it.")
_instance_command("start", "Start the instance with the configured settings.")
_instance_command("stop", "Stop the instance (fast shutdown).")
_instance_command("status", "Show whether the instance runs, where, and with which settings (exit 3 when stopped "
                            "or absent).",
                  exclusive=False)


@instance.command("destroy")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (scripts must pass it).")
@with_config("instance destroy")
@click.pass_context
def instance_destroy(ctx: click.Context, config: Config, yes: bool, **_: Any) -> None:
    """Stop the instance and remove what dbio created in its directory (asks first on a terminal)."""
    from dbio.commands import admin

    admin.instance_destroy(config, _ui(ctx), yes=yes, confirm=_confirm)


@cli.command()
@click.argument("name", required=False)
@click.option("--engine", default=None, metavar="|".join(registry.names()),
              help=f"The engine whose SQL to list or print ({engine_titles()}).  [default: {registry.DEFAULT}]")
def sql(name: str | None, engine: str | None) -> None:
    """List the built-in SQL scripts, or print one."""
    from dbio.engines import builtin_scripts

    chosen = (engine or registry.DEFAULT).strip().lower()
    registry.entry(chosen)  # an unknown engine: one line naming the known ones
    scripts = builtin_scripts(chosen)
    if name is None:
        for entry in scripts:
            click.echo(entry)
        return
    if name not in scripts and f"{name}.sql" in scripts:
        name += ".sql"
    if name not in scripts:
        listing = "dbio sql" + (f" --engine {chosen}" if chosen != registry.DEFAULT else "")
        raise UsageError(f"no built-in script {name!r} for the {chosen} engine", f"run {listing} to list them")
    click.echo(scripts[name], nl=False)


@cli.command("options")
@click.argument("command", nargs=-1)
def options_command(command: tuple[str, ...]) -> None:
    """Every option: TOML key, command-line flag, environment variable, slob.conf name, default, the
    commands that take its flag, and the engine it belongs to when only one engine has it; with a command
    (dbio options run, dbio options instance init), the options it takes."""
    name = " ".join(command)
    if name and name not in command_options.COMMANDS:
        raise UsageError(f"dbio options {name}: no command of that name takes options",
                         f"name one of: {', '.join(command_options.COMMANDS)}")
    for entry in command_options.entries(name):
        option = entry.option
        names = [f"[{option.section}] {option.key}", *([entry.flag] if entry.flag else []),
                 *([entry.env] if entry.env else [])]
        slob = f" slob.conf {', '.join(option.slob)}" if option.slob else ""
        only = f"  ({option.engine} only)" if option.engine else ""
        where = f"  ({entry.where})" if entry.where else ""
        click.echo("  ".join(names) + slob + only + where)
        click.echo(f"    {entry.help}")
        if entry.flag:
            click.echo(f"    flag accepted by: {', '.join(f'dbio {c}' for c in entry.commands)}")
        else:
            click.echo("    no flag: set it in dbio.toml or the environment")


def _command_path(argv: list[str]) -> str:
    """The command the words name ('dbio sweep'), for an error click raised without its context."""
    command: click.Command = cli
    path = ["dbio"]
    for word in argv:
        if not isinstance(command, click.Group):
            break
        if word in command.commands:
            command = command.commands[word]
            path.append(word)
    return " ".join(path)


def _error(message: str) -> None:
    """One line on stderr: a control character in it (a label's, a path's, a server's) is shown, not sent."""
    print(f"dbio: {controls.visible(message)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        code = cli.main(args=argv, prog_name="dbio", standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _error("interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except click.exceptions.NoArgsIsHelpError as exc:  # `dbio instance` alone: its help is the answer
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.UsageError as exc:  # one line, as dbio's own refusals: what is wrong, where the help is
        where = exc.ctx.command_path if exc.ctx is not None else _command_path(sys.argv[1:] if argv is None else argv)
        _error(f"{exc.format_message().rstrip('.')}; see {where} --help")
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        _error(exc.format_message())
        sys.exit(exc.exit_code)
    except ConfigErrors as exc:
        from dbio.engines import scrub

        for error in exc.errors:  # scrubbed again: no message may carry a password, whoever wrote it
            _error(scrub(str(error)))
        sys.exit(exc.exit_code)
    except DbioError as exc:
        from dbio.engines import scrub

        _error(scrub(str(exc)))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _error("interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        from dbio.engines import scrub, server_error_text

        first = server_error_text(exc)
        if first is not None:
            _error(f"the server reported an error: {first}")
            if debug:
                traceback.print_exc()
            sys.exit(1)
        if debug or os.environ.get("DBIO_DEBUG"):
            traceback.print_exc()
        _error(f"internal error: {scrub(str(exc)) or type(exc).__name__} (run with --debug for details)")
        sys.exit(1)

