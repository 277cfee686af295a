"""Which PostgreSQL server a command works on (the embedded instance, or --dsn), and holding it alone.

dbio/target.py reaches these through the registry and wraps them in its engine-neutral Target."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

from dbio import parts
from dbio.config import Config
from dbio.engines.postgres.engine import PostgresEngine
from dbio.engines.postgres.instance.embedded import EmbeddedInstance


def instance_for(config: Config, notify: Callable[[str], None]) -> EmbeddedInstance:
    return EmbeddedInstance(config.instance.data_dir, notify=notify)


def resolve(config: Config, *, purpose: str, sessions: int,
            notify: Callable[[str], None]) -> tuple[PostgresEngine, str, EmbeddedInstance | None]:
    """purpose: 'load' (fast buffered load), 'run' (as configured), 'any' or 'look' (dbio.target.resolve)."""
    engine = PostgresEngine()
    if not config.connection.embedded:
        return engine, config.connection.dsn or "", None
    instance = instance_for(config, notify)
    if instance.exists() and instance.is_running():
        # after a backend dies the server ends all of them and recovers, refusing connections until done
        engine.wait_while_recovering(instance.conninfo("postgres"), notify)
    w = config.workload
    workers = sessions * w.scan_workers if w.scan_pct else 0  # the run's scans' parallel workers, all at once
    conninfo = instance.ensure(config.instance, sessions=sessions, purpose=purpose, dbname=config.connection.dbname,
                               parallel_workers=workers)
    if config.instance.data_dirs and purpose != "look":
        instance.tablespace_dirs(config.instance)  # the server's directory in each, made before the load
    return engine, conninfo, instance


def relayout(config: Config, notify: Callable[[str], None], *, check_only: bool = False) -> None:
    """A sweep step's layout, where it needs no load: the embedded instance's WAL moved to wal_dir
    (check_only: refuse a layout it could not make, before anything moves)."""
    if not config.connection.embedded:
        return
    instance = instance_for(config, notify)
    if check_only:
        instance.check_layout(config.instance)
    elif instance.exists():
        instance.move_wal(config.instance)


@contextmanager
def exclusive(config: Config, command: str, notify: Callable[[str], None]) -> Iterator[None]:
    """Hold the target alone for a command that changes or measures it (see dbio/managed/lock.py)."""
    from dbio.managed.lock import exclusive as instance_exclusive

    if config.connection.embedded:
        with instance_exclusive(config.instance.data_dir, command):
            yield
        return
    from dbio.engines.postgres.dsn import socket_directories
    from dbio.engines.postgres.exclusive import exclusive as database_exclusive
    from dbio.engines.postgres.instance.paths import Layout

    dsn = config.connection.dsn or ""
    part = parts.of_config(config.run.part, config.run.run_id, config.run.start_at, config.to_dict()["workload"])
    with ExitStack() as held:
        # --dsn through an embedded instance's socket: that instance is held too, as its own
        # commands hold it, so a run of its own and one through --dsn never share it (a run's parts
        # share it: which run they are is the database's lock's to decide)
        for directory in socket_directories(dsn):
            instance_dir = Path(directory).resolve().parent
            if Layout(instance_dir).meta_file.exists():
                held.enter_context(instance_exclusive(instance_dir, command, shared=part is not None))
        held.enter_context(database_exclusive(dsn, command, notify, part))
        yield
