"""The commands that reach no server: a result rendered again (report), set side by side (compare), over time
(history) or as one with others (merge); the manifests of many pods (kubernetes); and the listings of the
built-in SQL (sql) and of every option (options)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dbio import command_flags, command_options
from dbio.cli_config import own_options, with_config
from dbio.cli_group import command, ui_of
from dbio.config import Config
from dbio.engines import registry
from dbio.errors import UsageError

FORMATS = ["text", "md", "html", "json"]
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".json": "json"}


def format_of(out: Path | None) -> str:
    """The format a report written to out is read in: its suffix's, text otherwise (a file named .html
    holds HTML)."""
    return SUFFIX_FORMATS.get(out.suffix.lower(), "text") if out is not None else "text"


@command()
@click.argument("result", type=click.Path(path_type=Path))
@own_options("report")
@click.pass_context
def report(ctx: click.Context, result: Path, form: str, out: Path | None, target_iops: float | None,
           latency_slo: str | None, prices: tuple[str, ...]) -> None:
    """Render a result (a run directory or its result.json) again, as text, Markdown, HTML or JSON; for a sweep's
    directory, --target-iops, --latency-slo and --price add capacity and cost from its measured steps."""
    from dbio.commands import admin
    from dbio.jobs import capacity

    asked = capacity.request(target_iops, latency_slo, prices)
    admin.report(result, out, form or format_of(out), ui_of(ctx), capacity=asked)


@command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@own_options("compare")
@click.pass_context
def compare(ctx: click.Context, inputs: tuple[Path, ...], names: str | None, form: str, out: Path | None) -> None:
    """Results (or sweeps) side by side: what differs, deltas against the first, noise or real."""
    from dbio.commands import compare as compare_command

    compare_command.compare(list(inputs), names.split(",") if names else None, form or format_of(out), out, ui_of(ctx))


@command()
@click.argument("directories", nargs=-1, type=click.Path(path_type=Path))
@own_options("history")
@click.pass_context
def history(ctx: click.Context, directories: tuple[Path, ...], form: str, out: Path | None) -> None:
    """Every run and sweep under the results directories (default: ./dbio-results) in time order: what changed
    since the run before, each configuration's changes judged against its runs' own noise, and a trend page
    (--out trend.html). Reads the results as they are; no server is needed."""
    from dbio.commands import history as history_command

    history_command.history_of(list(directories) or [Path("dbio-results")], form or format_of(out), out, ui_of(ctx))


@command()
@with_config("kubernetes", exclusive=False)
@click.pass_context
def kubernetes(ctx: click.Context, config: Config, image: str, pods: int, out: Path, job_name: str,
               namespace: str | None, password_secret: str | None, results_size: str, storage_class: str | None,
               pod_cpu: str, pod_memory: str, node_selector: tuple[str, ...], tolerate: tuple[str, ...],
               ttl: str | None, service_account: str | None, cnpg_cluster: str | None, **_: Any) -> None:
    """Write manifests for many pods, the parts of one run (`dbio run --part`) at one --start-at against the
    given --dsn targets, and the Job that waits for their results and merges them (plain YAML for kubectl;
    dbio never talks to the cluster)."""
    from dbio.commands import kubernetes as k8s_command

    k8s_command.write(config, ui_of(ctx), image=image, pods=pods, out=out, name=job_name, namespace=namespace,
                      password_secret=password_secret, results_size=results_size, storage_class=storage_class,
                      cpu=pod_cpu, memory=pod_memory, node_selector=node_selector, tolerate=tolerate, ttl=ttl,
                      service_account=service_account, cnpg_cluster=cnpg_cluster)


@command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@own_options("merge")
@click.pass_context
def merge(ctx: click.Context, inputs: tuple[Path, ...], out: Path, names: str | None, label: str | None) -> None:
    """Runs of several hosts that measured the same seconds (--start-at) as one result: each a node, and the total."""
    from dbio.commands import merge as merge_command

    merge_command.merge(list(inputs), names.split(",") if names else None, out, label, ui_of(ctx))


@command()
@click.argument("name", required=False)
@own_options("sql")
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


@command("options")
@click.argument("command", nargs=-1)
def options_command(command: tuple[str, ...]) -> None:
    """Every option: TOML key, command-line flag, environment variable, slob.conf name, default, the
    commands that take its flag, and the engine it belongs to when only one engine has it; with a command
    (dbio options run, dbio options instance init), the options it takes."""
    name = " ".join(command)
    known = [*command_flags.COMMANDS, *(c for c in command_options.commands() if c and c not in command_flags.COMMANDS)]
    if name and name not in known:
        raise UsageError(f"dbio options {name}: no command of that name takes options",
                         f"name one of: {', '.join(known)}")
    for entry in command_flags.entries(name) if not name or name in command_flags.COMMANDS else []:
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
    own = command_flags.own_entries(name or None)
    if own:  # each command's own: on its command line alone
        click.echo(f"dbio {name}'s own flags (command line only):" if name else
                   "Each command's own flags (command line only):")
    for entry in own:
        click.echo(f"  {entry.flag}")
        click.echo(f"    {entry.help}")
        click.echo(f"    flag accepted by: {', '.join(f'dbio {c}'.rstrip() for c in entry.commands)}")



COMMANDS = (report, compare, history, kubernetes, merge, sql, options_command)
