"""Which server a command works on: the engine's embedded instance (default) or an existing one (--dsn).

Engine-neutral: the configured engine's entry (engines/registry.py) decides how; PostgreSQL's is
engines/postgres/target.py."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from dbio.config import Config, each_node
from dbio.engines import registry
from dbio.engines.base import Engine


@dataclass
class Target:
    engine: Engine
    conninfo: str
    instance: Any | None  # the engine's embedded instance, None with --dsn
    notify: Callable[[str], None] = field(default=lambda _: None)
    name: str | None = None  # the node's own name, when its target has one (an embedded cluster's member)

    def connect(self, application_name: str) -> Any:
        return self.engine.connect(self.conninfo, application_name=application_name, notify=self.notify)

    @property
    def embedded(self) -> bool:
        return self.instance is not None


def instance_for(config: Config, notify: Callable[[str], None]) -> Any:
    """The configured engine's embedded instance, created or not."""
    return registry.entry(config.connection.engine).instance_for(config, notify)


def resolve(config: Config, *, purpose: str, sessions: int, notify: Callable[[str], None]) -> Target:
    """purpose: 'load' (fast buffered load), 'run' (as configured) or 'any' (as it is, started if needed)."""
    engine, conninfo, instance = registry.entry(config.connection.engine).resolve(
        config, purpose=purpose, sessions=sessions, notify=notify)
    return Target(engine, conninfo, instance, notify)


def resolve_nodes(config: Config, *, purpose: str, sessions: int, notify: Callable[[str], None]) -> list[Target]:
    """Every node's target: one per --dsn (or the embedded instance)."""
    return [resolve(node, purpose=purpose, sessions=sessions, notify=notify) for node in each_node(config)]


@contextmanager
def exclusive(config: Config, command: str, notify: Callable[[str], None]) -> Iterator[None]:
    """Hold every node alone for a command that changes or measures it (the engine says how)."""
    with ExitStack() as held:
        for node in each_node(config):
            held.enter_context(registry.entry(node.connection.engine).exclusive(node, command, notify))
        yield
