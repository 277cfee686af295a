"""The commands that remove what dbio made or manage its own instance: teardown, and the instance group's
init, start, stop, status and destroy (`INSTANCE_COMMANDS`, added to the group once it has its place)."""

from __future__ import annotations

import sys
from typing import Any

import click

from dbio.cli_config import with_config
from dbio.cli_group import Commands, command, ui_of
from dbio.config import Config


def _confirm(question: str) -> bool:
    """y at a terminal's prompt; without a terminal, no (the refusal says to pass --yes)."""
    return sys.stdin.isatty() and click.confirm(question, default=False)


@command()
@with_config("teardown")
@click.pass_context
def teardown(ctx: click.Context, config: Config, yes: bool, **_: Any) -> None:
    """Drop everything dbio created in the database, and nothing else (asks first, on a terminal, when a data set
    is loaded)."""
    from dbio.commands import admin
    from dbio.config import each_node

    for node in each_node(config):
        admin.teardown(node, ui_of(ctx), yes=yes, confirm=_confirm)


@click.group(cls=Commands)
def instance() -> None:
    """dbio's own instance: the embedded PostgreSQL, or with --engine mysql the managed MariaDB/MySQL: init,
    start, stop, status, destroy."""


def _instance_command(name: str, doc: str, *, exclusive: bool = True) -> click.Command:
    @command(name, help=doc)
    @with_config(f"instance {name}", exclusive=exclusive)
    @click.pass_context
    def instance_action(ctx: click.Context, config: Config, **_: Any) -> None:
        from dbio.commands import admin

        code = getattr(admin, f"instance_{name}")(config, ui_of(ctx))
        if isinstance(code, int) and code:
            ctx.exit(code)

    return instance_action


@command("destroy")
@with_config("instance destroy")
@click.pass_context
def instance_destroy(ctx: click.Context, config: Config, yes: bool, **_: Any) -> None:
    """Stop the instance and remove what dbio created in its directory (asks first on a terminal)."""
    from dbio.commands import admin

    admin.instance_destroy(config, ui_of(ctx), yes=yes, confirm=_confirm)


COMMANDS = (teardown, instance)
INSTANCE_COMMANDS = (
    _instance_command("init", "Create the instance (PostgreSQL's initdb, or MariaDB's or MySQL's own with --engine "
                              "mysql; dbio's configuration) and start it."),
    _instance_command("start", "Start the instance with the configured settings."),
    _instance_command("stop", "Stop the instance (fast shutdown)."),
    _instance_command("status", "Show whether the instance runs, where, and with which settings (exit 3 when "
                                "stopped or absent).",
                      exclusive=False),
    instance_destroy,
)
