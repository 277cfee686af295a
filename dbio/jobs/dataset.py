"""The loaded data set: its setup record, read from the configured server, and how it is told.
Commands that work on it take its shape from that record where the user gives none (config_resolver.py)."""

from __future__ import annotations

from typing import Callable

from dbio import target as targets
from dbio.config import Config
from dbio.engines.base import SetupRecord, Teardown
from dbio.errors import NoDatabase
from dbio.ui import UI
from dbio.units import BLOCK_SIZE, format_bytes

# The workload options that describe what is loaded (the SetupSpec), in the user's terms.
SHAPE = ("scale", "schemas", "scan_table_size", "key_order")


def given(config: Config, key: str) -> bool:
    """Whether the user set the option anywhere (a file, the environment, a flag)."""
    return config.origins.get(key, "default") != "default"


def loaded_record(config: Config, notify: Callable[[str], None]) -> SetupRecord | None:
    """The setup record of the configured server (dbio's own instance, when it exists), None when nothing is
    loaded there. A look: on dbio's own instance, a database not there is not made."""
    try:
        target = targets.resolve(config, purpose="look", sessions=1, notify=notify)
    except NoDatabase:
        return None
    conn = target.connect("dbio:setup-record")
    try:
        target.engine.probe(conn)
        return target.engine.read_setup(conn)
    finally:
        target.engine.close(conn)


def unfinished(record: SetupRecord | None) -> bool:
    """A load that was interrupted: no data set to use, only one to finish."""
    return record is not None and record.status != "ready"


def describe(scale: int, schemas: int) -> str:
    return (f"scale {scale:,} rows ({format_bytes(scale * BLOCK_SIZE)}) x {schemas} "
            f"schema{'s' if schemas != 1 else ''}")


def report_teardown(ui: UI, done: Teardown) -> None:
    """What a teardown took with dbio's tables and what it left: the user's own objects."""
    for item in done.with_it:
        ui.warn(f"dropped {item}")
    for item in done.kept:
        ui.warn(f"left in place: {item}")
