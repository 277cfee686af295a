"""dbio's own instance remembers how it was last configured: the settings options (its engine's
REMEMBERED: shared_buffers, io_method, a buffer pool...) of the last command that configured it are
kept in its record, and a later command takes them where the user gives none, saying so in one
line. `dbio instance init --shared-buffers 16MiB` then need not be repeated on every command, and a
run never restarts the instance at a default the user did not ask for.

They sit between the defaults (and a command's own, quickstart's) and what the user sets in a file,
the environment or a flag; with --dsn there is no instance of dbio's to remember anything. What the
record keeps, and keeping it, live in target.py (options_of, remember), which target.resolve calls."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from dbio import target as targets
from dbio.config import Sources, load_config
from dbio.config_checks import show_value
from dbio.engines import registry
from dbio.errors import ConfigErrors
from dbio.options import BY_KEY


def remembered(sources: Sources, notify: Callable[[str], None]) -> Sources:
    """The sources with the instance's remembered options as defaults, where the user set none; the
    sources as they are when there is no instance of dbio's (yet), or the configuration does not read
    (its own errors are reported when it is loaded again)."""
    try:
        first = load_config(sources, check=False)
    except ConfigErrors:
        return sources
    if not first.connection.embedded:
        return sources
    instance = targets.instance_for(first, lambda _: None)
    try:
        if not instance.exists():
            return sources
    except OSError:  # a directory that cannot be looked into: the configuration's checks say so in one line
        return sources
    kept = instance.meta().options or {}
    taken = {key: kept[key] for key in registry.entry(first.connection.engine).remembered  # in the options' order
             if key in kept and _takes(key, first.origins.get(key, "default"))}
    if not taken:
        return sources
    adopted = replace(sources, preset={**sources.preset, **taken})
    try:
        again = load_config(adopted, check=False)
    except ConfigErrors:  # a record's value this dbio cannot read (another version's): the defaults stand
        return sources
    shown = {key: _taken(key, getattr(first.instance, key), getattr(again.instance, key)) for key in taken}
    shown = {key: text for key, text in shown.items() if text}
    if shown:
        flags = ", ".join(BY_KEY[key].flag + (" NAME=VALUE (NAME= drops one)" if BY_KEY[key].kind == "settings" else "")
                          for key in shown)
        notify(f"using the instance's {', '.join(f'{key} {text}' for key, text in shown.items())}, as it was last "
               f"configured; give {flags} to change {'them' if len(shown) > 1 else 'it'}")
    return adopted


def _takes(key: str, origin: str) -> bool:
    """Whether the remembered value is taken: where the user set none, and for settings (--pg-setting) under
    those given on the command line, which add to them name by name, as they add to a file's."""
    return origin == "default" or (BY_KEY[key].kind == "settings" and origin.startswith("--"))


def _taken(key: str, before: Any, after: Any) -> str:
    """What the remembered value changed, in the user's units ('' when nothing): of settings, those added."""
    option = BY_KEY[key]
    if option.kind == "settings":
        given = {name for name, _ in before}
        return show_value(option, tuple(pair for pair in after if pair[0] not in given)) if set(after) - set(before) \
            else ""
    return show_value(option, after) if after != before else ""
