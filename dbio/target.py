"""Which server a command works on: the embedded instance (default) or an existing one (--dsn)."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from dbio.config import Config
from dbio.engines.postgres.engine import PostgresEngine
from dbio.engines.postgres.instance.embedded import EmbeddedInstance
from dbio.engines.postgres.instance.paths import Layout


@dataclass
class Target:
    engine: PostgresEngine
    conninfo: str
    instance: EmbeddedInstance | None
    notify: Callable[[str], None] = field(default=lambda _: None)

    def connect(self, application_name: str) -> Any:
        return self.engine.connect(self.conninfo, application_name=application_name, notify=self.notify)

    @property
    def embedded(self) -> bool:
        return self.instance is not None


def instance_for(config: Config, notify: Callable[[str], None]) -> EmbeddedInstance:
    return EmbeddedInstance(config.instance.data_dir, notify=notify)


def resolve(config: Config, *, purpose: str, sessions: int, notify: Callable[[str], None]) -> Target:
    """purpose: 'load' (fast buffered load), 'run' (as configured) or 'any' (as it is, started if needed)."""
    engine = PostgresEngine()
    if not config.connection.embedded:
        return Target(engine, config.connection.dsn or "", None, notify)
    instance = instance_for(config, notify)
    if instance.exists() and instance.is_running():
        # after a backend dies the server ends all of them and recovers, refusing connections until done
        engine.wait_while_recovering(instance.conninfo("postgres"), notify)
    conninfo = instance.ensure(config.instance, sessions=sessions, purpose=purpose, dbname=config.connection.dbname)
    return Target(engine, conninfo, instance, notify)


@contextmanager
def exclusive(config: Config, command: str, notify: Callable[[str], None]) -> Iterator[None]:
    """Hold the target alone for a command that changes or measures it (see engines/postgres/instance/lock.py)."""
    if config.connection.embedded:
        from dbio.engines.postgres.instance.lock import exclusive as instance_exclusive

        with instance_exclusive(config.instance.data_dir, command):
            yield
    else:
        from dbio.engines.postgres.dsn import socket_directories
        from dbio.engines.postgres.exclusive import exclusive as database_exclusive
        from dbio.engines.postgres.instance.lock import exclusive as instance_exclusive

        dsn = config.connection.dsn or ""
        with ExitStack() as held:
            # --dsn through an embedded instance's socket: that instance is held too, as its own
            # commands hold it, so a run of its own and one through --dsn never share it
            for directory in socket_directories(dsn):
                instance_dir = Path(directory).resolve().parent
                if Layout(instance_dir).meta_file.exists():
                    held.enter_context(instance_exclusive(instance_dir, command))
            held.enter_context(database_exclusive(dsn, command, notify))
            yield
