"""dbio's commands as a click group: the global options every command takes as well (-q and --debug, before
or after its name), the UI they choose, each command's help examples, the exit codes besides 0 and 1, and
the one rule of every command's line: an option is given once, a repeatable one's items each once."""

from __future__ import annotations

from typing import Any, Callable

import click

from dbio import command_help, command_options
from dbio.ui import UI

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process SIGTERM ended


def _global_after(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--debug or -q after the command's name (dbio run -q): as given before it."""
    if value:
        root = ctx.find_root()
        root.ensure_object(dict)
        if param.name == "debug":
            root.obj["debug"] = True
        else:
            root.obj["ui"] = UI(quiet=True)


# the root's own flags (command_options.py), taken after a command's name as well
GLOBAL_OPTIONS = tuple(click.Option([option.flag, *option.aliases], is_flag=True, expose_value=False,
                                    callback=_global_after, help=option.help)
                       for option in command_options.of(command_options.ROOT))


class Repeatable(click.Option):
    """A flag given once per item (--pg-setting NAME=VALUE, --dsn), and how its items combine, which each
    declares: item_key names what an item sets (two items of one key are refused: the second would silently
    replace the first), or adds_up: each item is one more (a node, a directory), kept in order."""

    def __init__(self, *args: Any, item_key: Callable[[str], str] | None = None, adds_up: bool = False,
                 **kwargs: Any):
        if (item_key is None) == (not adds_up):
            raise AssertionError(f"{args}: a repeatable flag has an item_key or adds up, one of them")
        kwargs["multiple"] = True
        super().__init__(*args, **kwargs)
        self.item_key = item_key


def _refuse_repeats(ctx: click.Context, order: list[click.Parameter], opts: dict[str, Any]) -> None:
    """An option given twice on one command's line, or two items of one key of a repeatable one: refused in one
    line (click would take the last), before anything runs. A positional argument's count is click's to judge."""
    seen: set[str] = set()
    for param in order:
        if not isinstance(param, click.Option) or param.multiple or param.name is None:
            continue
        if param.name in seen:
            raise click.UsageError(f"{'/'.join(param.opts + param.secondary_opts)} is given twice; give it once",
                                   ctx)
        seen.add(param.name)
    keyed = {p.name: (p, p.item_key) for p in order if isinstance(p, Repeatable) and p.item_key is not None}
    for name, (param, key_of) in keyed.items():
        keys: set[str] = set()
        for item in opts.get(name or "") or ():
            key = key_of(str(item))
            if key in keys:
                what = (param.metavar or "NAME").split("=")[0]
                raise click.UsageError(f"{param.opts[0]} {key} is given twice; give each {what} once", ctx)
            keys.add(key)


class OneEach(click.Command):
    """A dbio command: an option on its line is given once (_refuse_repeats); every dbio command is one
    (Commands.add_command refuses another)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:  # parsed once more to see what was given, as given, before any value is taken
            opts, _, order = self.make_parser(ctx).parse_args(args=list(args))
            _refuse_repeats(ctx, order, opts)
        return super().parse_args(ctx, args)


def command(name: str | None = None, **attrs: Any) -> Callable[[Callable[..., Any]], click.Command]:
    """click.command, as a dbio command (OneEach)."""
    return click.command(name, cls=OneEach, **attrs)


def _checked(cmd: click.Command) -> None:
    """A command joins dbio's only when its line is checked, and each of its repeatable flags says how its items
    combine: a flag added later (hand-written or from the option table) cannot take the last value silently."""
    if not isinstance(cmd, OneEach):
        raise AssertionError(f"{cmd.name}: a dbio command is made with cli_group.command (each option once)")
    loose = [param.opts[0] for param in cmd.params
             if isinstance(param, click.Option) and param.multiple and not isinstance(param, Repeatable)]
    if loose:
        raise AssertionError(f"{cmd.name}: {', '.join(loose)} repeat without saying how (cli_group.Repeatable)")


class Commands(OneEach, click.Group):
    """dbio's commands, each taking the global options too: `dbio run -q` as `dbio -q run`."""

    group_class = type  # a group made with @cli.group() is one of these: its commands take them as well
    prefix = ""  # the words before its commands' names: "instance " in the instance group

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _checked(cmd)
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

