"""The loaded data set, remembered: commands that work on it take its shape from the setup record
when the user did not give one, so that scale and schemas need not be repeated after setup."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from dbio import target as targets
from dbio.config import Config, spread_sessions
from dbio.config_checks import validate
from dbio.engines.base import SetupRecord, Teardown
from dbio.errors import ConfigErrors
from dbio.ui import UI
from dbio.units import BLOCK_SIZE, format_bytes

# The workload options that describe what is loaded (the SetupSpec), in the user's terms.
SHAPE = ("scale", "schemas", "scan_table_size", "key_order")
ORIGIN = "the setup record"


def given(config: Config, key: str) -> bool:
    """Whether the user set the option anywhere (a file, the environment, a flag)."""
    return config.origins.get(key, "default") != "default"


def loaded_record(config: Config, notify: Callable[[str], None]) -> SetupRecord | None:
    """The setup record of the configured server, or None when nothing (or no instance) is there."""
    if config.connection.embedded and not targets.instance_for(config, notify).exists():
        return None
    target = targets.resolve(config, purpose="any", sessions=1, notify=notify)
    conn = target.connect("dbio:setup-record")
    try:
        target.engine.probe(conn)
        return target.engine.read_setup(conn)
    finally:
        target.engine.close(conn)


def adopt(config: Config, record: SetupRecord | None, say: Callable[[str], None]) -> Config:
    """The configuration with the loaded data set's shape wherever the user gave none; says so in
    one line when that changes anything. Explicit values stay, to be checked against the load."""
    if record is None:
        return settled(config)
    spec = record.spec
    loaded = {"scale": spec.scale, "schemas": spec.schemas,
              "scan_table_size": spec.scan_table_blocks * BLOCK_SIZE, "key_order": spec.key_order}
    changes: dict[str, Any] = {key: value for key, value in loaded.items()
               if not given(config, key) and getattr(config.workload, key) != value}
    if not changes:
        return settled(config)
    origins = {**config.origins, **{key: ORIGIN for key in changes}}
    if "schemas" in changes and config.sessions_asked is not None:  # --sessions: over the loaded schemas
        changes["threads_per_schema"] = spread_sessions(config.sessions_asked, spec.schemas,
                                                        " (the loaded data set's)")
    adopted = replace(config, workload=replace(config.workload, **changes), origins=origins, shape_from_load=False)
    errors = validate(adopted)
    if errors:
        raise ConfigErrors(errors)
    if unfinished(record):
        say(f"the interrupted load's own shape: {describe(spec.scale, spec.schemas)}; "
            "give --reload with other options to load another")
    else:
        say(f"using the loaded data set (setup {record.setup_id}): {describe(spec.scale, spec.schemas)}; "
            "give --scale or --schemas to use a part of it")
    return adopted


def settled(config: Config) -> Config:
    """The configuration once its data set's shape is known (the load's, or the defaults when nothing is
    loaded): the rules that waited for it (Config.shape_pending) apply now, before any server changes."""
    if not config.shape_from_load:
        return config
    config = replace(config, shape_from_load=False)
    errors = validate(config)
    if errors:
        raise ConfigErrors(errors)
    return config


def unfinished(record: SetupRecord | None) -> bool:
    """A load that was interrupted: no data set to use, only one to finish."""
    return record is not None and record.status != "ready"


def describe(scale: int, schemas: int) -> str:
    return (f"scale {scale:,} rows ({format_bytes(scale * BLOCK_SIZE)}) x {schemas} "
            f"schema{'s' if schemas != 1 else ''}")


def remembered(config: Config, notify: Callable[[str], None], *, resume: bool = False) -> Config:
    """adopt() with the configured server's record; unchanged when every shape option was given.
    An interrupted load is no data set to use: its shape is taken only to finish it (setup's resume),
    and the other commands refuse it, naming dbio setup."""
    if all(given(config, key) for key in SHAPE):
        return settled(config)
    record = loaded_record(config, notify)
    if unfinished(record) and not resume:
        return config  # refused by the command (check_setup, the sweep's): finish the load first
    return adopt(config, record, notify)


def resumed(config: Config, notify: Callable[[str], None]) -> Config:
    """setup: the shape of an interrupted load where the user gave none, so that `dbio setup` again
    finishes it (as its interruption said); unchanged otherwise."""
    if all(given(config, key) for key in SHAPE):
        return config
    record = loaded_record(config, notify)
    return adopt(config, record, notify) if unfinished(record) else config


def report_teardown(ui: UI, done: Teardown) -> None:
    """What a teardown took with dbio's tables and what it left: the user's own objects."""
    for item in done.with_it:
        ui.warn(f"dropped {item}")
    for item in done.kept:
        ui.warn(f"left in place: {item}")
