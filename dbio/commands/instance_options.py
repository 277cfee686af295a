"""dbio's own instance remembers how it was last configured: the settings options (its engine's
REMEMBERED: shared_buffers, io_method, a buffer pool...) of the last command that configured it are
kept in its record, and a later command takes them where the user gives none, saying so in one
line. `dbio instance init --shared-buffers 16MiB` then need not be repeated on every command, and a
run never restarts the instance at a default the user did not ask for.

They sit between the defaults (and a command's own, quickstart's) and what the user sets in a file,
the environment or a flag; with --dsn there is no instance of dbio's to remember anything."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from dbio import target as targets
from dbio.config import Sources, load_config
from dbio.config_checks import show_value
from dbio.engines import registry
from dbio.errors import ConfigErrors
from dbio.options import BY_KEY


# what the record keeps, and keeping it, live in target (below the commands: target.resolve keeps them)
options_of, remember = targets.options_of, targets.remember


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
    if not instance.exists():
        return sources
    kept = instance.meta().options or {}
    taken = {key: kept[key] for key in registry.entry(first.connection.engine).REMEMBERED  # in the options' order
             if key in kept and first.origins.get(key, "default") == "default"}
    if not taken:
        return sources
    adopted = replace(sources, preset={**sources.preset, **taken})
    try:
        again = load_config(adopted, check=False)
    except ConfigErrors:  # a record's value this dbio cannot read (another version's): the defaults stand
        return sources
    changed = [key for key in taken if getattr(again.instance, key) != getattr(first.instance, key)]
    if changed:
        shown = ", ".join(f"{key} {show_value(BY_KEY[key], getattr(again.instance, key))}" for key in changed)
        flags = ", ".join(BY_KEY[key].flag for key in changed)
        notify(f"using the instance's {shown}, as it was last configured; give {flags} to change "
               f"{'them' if len(changed) > 1 else 'it'}")
    return adopted
