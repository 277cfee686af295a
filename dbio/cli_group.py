"""dbio's commands as a click group: the global options every command takes as well (-q and --debug, before
or after its name), the UI they choose, each command's help examples, and the exit codes besides 0 and 1."""

from __future__ import annotations

import click

from dbio import command_help
from dbio.ui import UI

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process SIGTERM ended

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


def ui_of(ctx: click.Context) -> UI:
    """The command's UI: quiet when -q was given, before or after its name."""
    return ctx.obj["ui"]

