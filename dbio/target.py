"""Which server a command works on: the engine's embedded instance (default) or an existing one (--dsn).

Engine-neutral: the configured engine's entry (engines/registry.py) decides how; PostgreSQL's is
engines/postgres/target.py."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, cast

from dbio.config import Config, each_node
from dbio.engines.base import Engine
from dbio.engines.instance import ManagedInstance, WithStandbys
from dbio.errors import NoDatabase, UsageError
from dbio.option_table import BY_KEY


@dataclass
class Target:
    engine: Engine
    conninfo: str
    instance: ManagedInstance | None  # the engine's managed instance; None: no managed instance (--dsn)
    notify: Callable[[str], None] = field(default=lambda _: None)
    name: str | None = None  # a member of the embedded instance (primary, standby1, ...) when it has several
    role: str = "primary"  # primary | standby (read-only)

    def connect(self, application_name: str) -> Any:
        return self.engine.connect(self.conninfo, application_name=application_name, notify=self.notify)

    @property
    def embedded(self) -> bool:
        return self.instance is not None


def instance_for(config: Config, notify: Callable[[str], None]) -> ManagedInstance:
    """The configured engine's managed instance, created or not."""
    return config.spec.instance_for(config, notify)


def with_standbys(config: Config, instance: ManagedInstance | None) -> WithStandbys | None:
    """The instance as one with standbys, when its engine declares them (Features.standbys); else None."""
    if instance is None or not config.spec.features.standbys:
        return None
    return cast(WithStandbys, instance)


def options_of(config: Config) -> dict[str, Any]:
    """The remembered options the user set, as given (io_method auto, not what it resolved to), as the
    record keeps them (JSON: settings as a table); config_resolver.py reads them back."""
    out: dict[str, Any] = {}
    for key in config.spec.remembered:
        if key not in config.given:
            continue
        value = config.given[key]
        out[key] = dict(value) if BY_KEY[key].kind == "settings" else str(value) if isinstance(value, Path) else value
    return out


def remember(config: Config, instance: ManagedInstance | None) -> None:
    """Keep what the user set of the remembered options in the record of the instance it configured,
    beside what earlier commands set (a sweep's steps set none: sweep/step_config.py)."""
    if instance is None or not instance.exists():
        return
    given = options_of(config)
    if given:
        instance.remember({**(instance.meta().options or {}), **given})


def resolve(config: Config, *, purpose: str, sessions: int, notify: Callable[[str], None]) -> Target:
    """purpose: 'load' (fast buffered load), 'run' (as configured), 'any' (as it is, started if needed) or
    'look' (as 'any', creating nothing: NoDatabase when dbio's own instance has no such database)."""
    engine, conninfo, instance = config.spec.resolve(
        config, purpose=purpose, sessions=sessions, notify=notify)
    if purpose in ("load", "run"):  # configured as asked: later commands take its settings where none is given
        remember(config, instance)
    return Target(engine, conninfo, instance, notify)


def resolve_existing(config: Config, notify: Callable[[str], None], fix: str) -> Target:
    """The server as it is, for a command that works on what is there (teardown, baseline, an operation
    on the data set): on dbio's own instance nothing is made first, and an instance or database not there
    is refused in one line (fix: what to run instead)."""
    try:
        return resolve(config, purpose="look", sessions=1, notify=notify)
    except NoDatabase as exc:
        raise UsageError(str(exc), fix) from None


def resolve_nodes(config: Config, *, purpose: str, sessions: int, notify: Callable[[str], None]) -> list[Target]:
    """Every node's target: one per --dsn, or the embedded instance's members (all, or those --nodes names)."""
    found = [resolve(node, purpose=purpose, sessions=sessions, notify=notify) for node in each_node(config)]
    return members(found[0], config) if config.connection.embedded else found


def check_members(config: Config, instance: ManagedInstance | None) -> None:
    """--nodes names members the embedded instance has (refused before anything starts)."""
    if config.run.nodes is None:
        return
    cluster = with_standbys(config, instance)
    if cluster is None:
        raise UsageError(f"--nodes {config.run.nodes}: the {config.connection.engine} engine's embedded instance has "
                         "no standbys", "remove --nodes")
    cluster.nodes(config.connection.dbname, config.run.nodes)


def members(primary: Target, config: Config) -> list[Target]:
    """The embedded instance as the run's nodes: its primary and each standby (or those --nodes names)."""
    check_members(config, primary.instance)
    instance = with_standbys(config, primary.instance)
    if instance is None or not instance.standby_count():
        return [primary]
    entry = config.spec
    # each member a server of its own, with its engine object (a multi-writer cluster has several primaries)
    return [Target(primary.engine if k == 0 else entry.create_engine(), conninfo, instance, primary.notify, name, role)
            for k, (name, role, conninfo) in enumerate(instance.nodes(config.connection.dbname, config.run.nodes))]


@contextmanager
def exclusive(config: Config, command: str, notify: Callable[[str], None]) -> Iterator[None]:
    """Hold every node alone for a command that changes or measures it (the engine says how)."""
    with ExitStack() as held:
        for node in each_node(config):
            held.enter_context(node.spec.exclusive(node, command, notify))
        yield
