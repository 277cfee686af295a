"""The PostgreSQL engine as the registry sees it: its spec (engines/spec.EngineSpec).

Imported whichever engine runs (its options are part of the option table), so it imports
psycopg, and anything that does, only inside the functions that need it: the spec's factories
are lazy, each imported at its first call."""

from __future__ import annotations

import sys
from typing import Any

from dbio.engines.postgres.facts import FEATURES
from dbio.engines.postgres.instance.paths import RECORD_NAME
from dbio.engines.postgres.engine_options import LAYOUT_KNOBS, OPTIONS, REMEMBERED, RESTART_KNOBS, io_method_for
from dbio.engines.postgres.redact import scrub
from dbio.engines.spec import PROTOCOL_VERSION, EngineSpec, lazy


def instance_config(values: dict[str, Any], workload: dict[str, Any]) -> Any:
    from pathlib import Path

    from dbio.engines.postgres.engine_options import InstanceConfig

    values["io_method"] = io_method_for(values["io_method"], workload["access_path"])
    # the layout's directories, absolute as the data directory is (relative to where dbio runs)
    wal_dir, data_dirs = values.pop("wal_dir", None), values.pop("data_dirs", None) or ()
    standby_dirs = values.pop("standby_data_dir", None) or ()
    return InstanceConfig(**values, wal_dir=Path(wal_dir).expanduser().resolve() if wal_dir else None,
                          data_dirs=tuple(Path(d).expanduser().resolve() for d in data_dirs),
                          standby_data_dir=tuple(Path(d).expanduser().resolve() for d in standby_dirs))


def server_error_text(exc: BaseException) -> str | None:
    if "psycopg" not in sys.modules:
        return None  # psycopg never loaded: it cannot have raised
    from dbio.engines.postgres.errors import server_error_text as postgres

    return postgres(exc)


def builtin_scripts() -> dict[str, str]:
    from dbio.engines.postgres import sqlfiles

    return {name: sqlfiles.text(name) for name in sqlfiles.names()}


SPEC = EngineSpec(
    name="postgresql", title="PostgreSQL", protocol=PROTOCOL_VERSION, features=FEATURES, options=OPTIONS,
    dsn_schemes=("postgresql", "postgres"),  # libpq's URIs
    password_env="PGPASSWORD",  # libpq's
    instance_record=RECORD_NAME, restart_knobs=RESTART_KNOBS, layout_knobs=LAYOUT_KNOBS, remembered=REMEMBERED,
    create_engine=lazy("dbio.engines.postgres.engine:PostgresEngine"),
    check=lazy("dbio.engines.postgres.checks:check"),
    instance_config=instance_config,
    default_data_dir=lazy("dbio.engines.postgres.instance.paths:default_data_dir"),
    resolve=lazy("dbio.engines.postgres.target:resolve"),
    instance_for=lazy("dbio.engines.postgres.target:instance_for"),
    exclusive=lazy("dbio.engines.postgres.target:exclusive"),
    relayout=lazy("dbio.engines.postgres.target:relayout"),
    redact_dsn=lazy("dbio.engines.postgres.dsn:redact_dsn"),
    has_password=lazy("dbio.engines.postgres.dsn:dsn_has_password"),
    same_server=lazy("dbio.engines.postgres.dsn:same_server"),
    scrub=scrub,
    server_error_text=server_error_text,
    builtin_scripts=builtin_scripts,
    complete_result=lazy("dbio.engines.postgres.legacy:complete_result"),
    complete_manifest=lazy("dbio.engines.postgres.legacy:complete_manifest"),
    flags={"pg_settings": "Extra postgresql.conf setting for the embedded instance (repeatable).",
           "allow_settings": "Allow a --pg-setting (or [instance.pg_settings]) that runs a program or loads code, "
                             "such as archive_command or shared_preload_libraries (repeatable; command line only)."},
)
