"""The commands that reach no server: a result rendered again (report), set side by side (compare), over time
(history) or as one with others (merge); the manifests of many pods (kubernetes); and the listings of the
built-in SQL (sql) and of every option (options)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dbio import command_flags
from dbio.cli_config import capacity_options, engine_titles, with_config
from dbio.cli_group import Repeatable, command, ui_of
from dbio.config import Config
from dbio.engines import registry
from dbio.errors import UsageError

FORMATS = ["text", "md", "html", "json"]
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".json": "json"}
FORMAT_DEFAULT = "[default: the --out file's suffix (.html, .md, .json), text otherwise]"


def format_of(out: Path | None) -> str:
    """The format a report written to out is read in: its suffix's, text otherwise (a file named .html
    holds HTML)."""
    return SUFFIX_FORMATS.get(out.suffix.lower(), "text") if out is not None else "text"


@command()
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
    from dbio.commands import admin
    from dbio.jobs import capacity

    asked = capacity.request(target_iops, latency_slo, prices)
    admin.report(result, out, form or format_of(out), ui_of(ctx), capacity=asked)


@command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--names", default=None, help="Names for the inputs, comma-separated (default: their labels).")
@click.option("--format", "form", type=click.Choice(FORMATS), default=None,
              help=f"Output format.  {FORMAT_DEFAULT}")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Write here instead of stdout.")
@click.pass_context
def compare(ctx: click.Context, inputs: tuple[Path, ...], names: str | None, form: str, out: Path | None) -> None:
    """Results (or sweeps) side by side: what differs, deltas against the first, noise or real."""
    from dbio.commands import compare as compare_command

    compare_command.compare(list(inputs), names.split(",") if names else None, form or format_of(out), out, ui_of(ctx))


@command()
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

    history_command.history_of(list(directories) or [Path("dbio-results")], form or format_of(out), out, ui_of(ctx))


@command()
@click.option("--image", required=True,
              help="Container image that has dbio in it (each pod runs `dbio run`): build it from the repository's "
                   "Containerfile and push it where the cluster pulls from (docs/kubernetes.md).")
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
# where the pods run, as what, and how long their Jobs stay: the options of kubectl cnpg pgbench and its kind
@click.option("--node-selector", cls=Repeatable, item_key=lambda item: item.split("=", 1)[0], metavar="KEY=VALUE",
              help="A label every pod's node must have, e.g. disk=nvme (repeat it: all of them).")
@click.option("--tolerate", cls=Repeatable, adds_up=True, metavar="KEY[=VALUE][:EFFECT]",
              help="A taint the pods' nodes may have, as kubectl taint writes it, e.g. dedicated=storage:NoSchedule "
                   "(without =VALUE: any value; without :EFFECT: every effect; repeatable).")
@click.option("--ttl", default=None, metavar="DURATION",
              help="Delete each finished Job and its pods (their logs) this long after, e.g. 600s "
                   "(ttlSecondsAfterFinished); the results volume stays.  [default: kept]")
@click.option("--service-account", default=None,
              help="The pods' ServiceAccount (default: the namespace's); no API token is mounted in them.")
@click.option("--cnpg-cluster", default=None, metavar="NAME",
              help="The target: CloudNativePG cluster NAME, each pod reading host, port, username, password and "
                   "dbname from its Secret NAME-app (instead of --dsn and --password-secret).")
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
@click.option("--out", type=click.Path(path_type=Path), required=True, help="A new directory for the merged result.")
@click.option("--names", default=None, help="Names for the inputs, comma-separated (default: their labels).")
@click.option("--label", default=None, help="The merged result's label.")
@click.pass_context
def merge(ctx: click.Context, inputs: tuple[Path, ...], out: Path, names: str | None, label: str | None) -> None:
    """Runs of several hosts that measured the same seconds (--start-at) as one result: each a node, and the total."""
    from dbio.commands import merge as merge_command

    merge_command.merge(list(inputs), names.split(",") if names else None, out, label, ui_of(ctx))


@command()
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


@command("options")
@click.argument("command", nargs=-1)
def options_command(command: tuple[str, ...]) -> None:
    """Every option: TOML key, command-line flag, environment variable, slob.conf name, default, the
    commands that take its flag, and the engine it belongs to when only one engine has it; with a command
    (dbio options run, dbio options instance init), the options it takes."""
    name = " ".join(command)
    if name and name not in command_flags.COMMANDS:
        raise UsageError(f"dbio options {name}: no command of that name takes options",
                         f"name one of: {', '.join(command_flags.COMMANDS)}")
    for entry in command_flags.entries(name):
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



COMMANDS = (report, compare, history, kubernetes, merge, sql, options_command)
