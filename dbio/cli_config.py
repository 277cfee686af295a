"""A command's flags, made from the option table (and the configuration files, the engines' own flags, the
capacity options), and its one Config, built from them before the command's body runs (`with_config`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

import click

from dbio import command_flags, command_help, command_options
from dbio.cli_group import Repeatable, ui_of
from dbio.config import Config
from dbio.engines import registry
from dbio.option import Option, item_name
from dbio.option_table import BY_KEY, OPTIONS
from dbio.ui import UI

SECTION_TITLES = {"workload": "workload", "instance": "embedded instance", "run": "results", "connection": "server"}



def config_options(func: Callable[..., Any], preset: dict[str, Any] | None = None,
                   command: str = "run") -> Callable[..., Any]:
    """The command's flags, each from its row: its own (command_options.py), the configuration's (its files,
    each engine's repeatable flags, --password, --sessions) and the table's options it takes;
    preset: the command's own defaults, shown in its help."""
    used = [option for option in OPTIONS if command_flags.takes(command, option)]

    def hidden(name: str) -> bool:  # listed in the command's help, or only in dbio options (command_help)
        return command in command_help.KEY_OPTIONS and not command_help.shown(command, name)

    own = command_options.of(command)
    configuration = command_options.FILES + command_options.AFTER_ENGINE_FLAGS
    in_turn = ([o for o in own if o.name not in configuration], [o for o in own if o.name in command_options.FILES])
    # a command's own flags are always listed; the configuration's only where command_help lists them
    decorators = [_own_flag(option) for option in in_turn[0]] + [_own_flag(o, hidden(o.flag)) for o in in_turn[1]]
    decorators += [click.option(option.flag, option.key, cls=Repeatable, item_key=item_name, help=text,
                                metavar="NAME=VALUE" if option.kind == "settings" else "NAME", default=None,
                                hidden=hidden(option.flag))
                   for option, text in engine_flags() if command_flags.takes(command, option)]
    decorators += [_own_flag(option, hidden(option.flag)) for option in own
                   if option.name in command_options.AFTER_ENGINE_FLAGS]
    for option in used:
        names = command_flags.flags_of(option)
        if not names or option.kind in ("settings", "names"):
            continue
        title = SECTION_TITLES[option.section]
        text = f"({title}) {command_flags.help_text(option, preset)}"
        if option.kind == "bool":
            flag = f"{option.flag}/--no-{option.flag[2:]}"
            decorators.append(click.option(flag, option.key, default=None, help=text, hidden=hidden(option.key)))
        else:
            metavar = {"blocks": "BLOCKS|SIZE", "size": "SIZE", "duration": "DURATION", "int": "N", "pct": "PCT",
                       "choice": "|".join(option.choices), "path": "PATH"}.get(option.kind, "TEXT")
            # a list (--dsn, --data-dirs): each flag one more item, in order; its own checks judge the whole
            repeats: dict[str, Any] = dict(cls=Repeatable, adds_up=True) if option.kind == "strs" else {}
            decorators.append(click.option(*names, option.key, default=None, metavar=metavar, hidden=hidden(option.key),
                                           help=text, **repeats))
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def own_flags(command: str) -> list[Callable[[Callable[..., Any]], Any]]:
    """The command's own flags (command_options.py), each made from its row, in the rows' order."""
    return [_own_flag(option) for option in command_options.of(command)]


def _own_flag(option: Option, hidden: bool = False) -> Callable[[Callable[..., Any]], Any]:
    return click.option(option.flag, *option.aliases, option.name, hidden=hidden, **own_spec(option))


def own_spec(option: Option) -> dict[str, Any]:
    """click's arguments for a command's own flag: its type, default, help and how it repeats, from its row."""
    text = command_flags.own_help(option)
    spec: dict[str, Any] = {}
    if option.default is not None and option.kind != "bool" and not option.unset:
        spec.update(default=option.default, show_default=True)
    if option.kind == "bool":
        spec["is_flag"] = True
        if option.unset:  # None, not False, when not given (sweep --resume refuses any flag given)
            spec["default"] = None
    elif option.kind == "path":
        spec["type"] = click.Path(path_type=Path)
    elif option.kind == "int":
        ranged = (option.min, option.max) != (None, None)
        spec["type"] = click.IntRange(_whole(option.min), _whole(option.max)) if ranged else int
    elif option.kind == "float":
        spec["type"] = float
    elif option.kind == "choice":
        spec["type"] = click.Choice(list(option.choices))
    if option.kind == "strs":
        item_keys = {"per_name": item_name, "per_key": _key_of}
        spec.update(cls=Repeatable, **({"adds_up": True} if option.repeat == "adds_up"
                                       else {"item_key": item_keys[option.repeat]}))
    if option.metavar:
        spec["metavar"] = option.metavar
    if option.required:
        spec["required"] = True
    return {**spec, "help": text}


def _whole(bound: float | None) -> int | None:
    return None if bound is None else int(bound)


def _key_of(item: str) -> str:
    """KEY of an item KEY=VALUE, exactly as given (a Kubernetes label's key is case-sensitive)."""
    return item.split("=", 1)[0]


def own_options(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator: the command's own flags, for a command that reads no configuration (report, compare, ...)."""
    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(own_flags(command)):
            func = decorator(func)
        return func
    return wrap


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
            config = build_config(params, preset, ui_of(click.get_current_context()), command,
                                  (lambda located: check(located, params)) if check is not None else None)
            if not exclusive:
                return func(*args, config=config, **params)
            from dbio import target

            with target.exclusive(config, command, ui_of(click.get_current_context()).note):
                return func(*args, config=config, **params)

        return config_options(inner, preset, command)
    return wrap
