"""A sweep's configuration of one step: sweep.json's stored base values, the step's own, and the
connection string this process runs with (a resumed sweep's: `live_dsn`)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from dbio.config import Config, Sources, load_config
from dbio.engines import registry
from dbio.errors import ConfigErrors, UsageError
from dbio.option_table import BY_KEY
from dbio.sweep import plan


def step_config(base_values: dict[str, Any], values: dict[str, str], cwd: Path, dsn: str | None) -> Config:
    """A step's configuration: the stored base values, the step's own, and the live DSN, which
    enters as DBIO_DSN would (a password there is accepted, as `run` accepts it). The base's
    instance options enter as defaults: with --dsn they are the unused defaults, which would be
    refused as set (config_checks.instance_option_errors, dsn_dbname_errors); a step that varies one sets it."""
    try:
        typed = {key: plan.option_value(key, value) for key, value in values.items()}
        instance = {key: value for key, value in base_values.items()  # dbname: the embedded instance's database
                    if BY_KEY[key].section == "instance" or key == "dbname"}
        given = {key: value for key, value in base_values.items() if key not in instance}
        config = load_config(Sources(cli={**given, **typed, "dsn": None}, env={"DBIO_DSN": dsn} if dsn else {},
                                     preset=instance, cwd=cwd, discover=False))
        return replace(config, given={})  # a step's values are the sweep's: the instance remembers none of them
    except ConfigErrors as exc:
        shown = ", ".join(f"{k}={v}" for k, v in values.items()) or "the base configuration"
        raise UsageError(f"sweep step {shown}: {exc.errors[0]}") from None


def live_dsn(stored: str | None, engine: str = registry.DEFAULT) -> str | None:
    """The DSN a resumed sweep runs with: DBIO_DSN again when it names the same server as the stored
    (password-free) one, so its password is used; otherwise the stored one (libpq then finds the
    password in PGPASSWORD or ~/.pgpass)."""
    given = os.environ.get("DBIO_DSN")
    if stored is None or not given:
        return stored
    return given if registry.entry(engine).same_server(given, stored) else stored

