"""The PostgreSQL engine as the registry sees it (registry.EngineEntry).

Imported whichever engine runs (its options are part of the option table), so it imports
psycopg, and anything that does, only inside the functions that need it."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from dbio.engines.postgres.instance.paths import RECORD_NAME
from dbio.engines.postgres.options import LAYOUT_KNOBS, OPTIONS, REMEMBERED, RESTART_KNOBS, InstanceConfig
from dbio.engines.postgres.redact import scrub

if TYPE_CHECKING:
    from dbio.config import Config
    from dbio.errors import ConfigError

__all__ = ["DSN_SCHEMES", "INSTANCE_RECORD", "PASSWORD_ENV", "LAYOUT_KNOBS", "OPTIONS", "REMEMBERED", "RESTART_KNOBS",
           "builtin_scripts", "check", "complete_manifest", "complete_result",
           "create_engine", "default_data_dir", "exclusive", "has_password", "instance_config", "instance_for",
           "redact_dsn", "relayout", "resolve", "same_server", "scrub", "server_error_text"]

DSN_SCHEMES = ("postgresql", "postgres")  # libpq's URIs
PASSWORD_ENV = "PGPASSWORD"  # libpq's
INSTANCE_RECORD = RECORD_NAME


def check(config: Config) -> list[ConfigError]:
    from dbio.engines.postgres.checks import check as postgres_check

    return postgres_check(config)


def create_engine() -> Any:
    from dbio.engines.postgres.engine import PostgresEngine

    return PostgresEngine()


def default_data_dir() -> Path:
    from dbio.engines.postgres.instance.paths import default_data_dir as instance_dir

    return instance_dir()


def instance_config(values: dict[str, Any], workload: dict[str, Any]) -> InstanceConfig:
    from dbio.engines.postgres.options import io_method_for

    values["io_method"] = io_method_for(values["io_method"], workload["access_path"])
    # the layout's directories, absolute as the data directory is (relative to where dbio runs)
    wal_dir, data_dirs = values.pop("wal_dir", None), values.pop("data_dirs", None) or ()
    standby_dirs = values.pop("standby_data_dir", None) or ()
    return InstanceConfig(**values, wal_dir=Path(wal_dir).expanduser().resolve() if wal_dir else None,
                          data_dirs=tuple(Path(d).expanduser().resolve() for d in data_dirs),
                          standby_data_dir=tuple(Path(d).expanduser().resolve() for d in standby_dirs))


def resolve(config: Config, *, purpose: str, sessions: int, notify: Callable[[str], None]) -> tuple[Any, str, Any]:
    from dbio.engines.postgres import target

    return target.resolve(config, purpose=purpose, sessions=sessions, notify=notify)


def relayout(config: Config, notify: Callable[[str], None], *, check_only: bool = False) -> None:
    from dbio.engines.postgres import target

    target.relayout(config, notify, check_only=check_only)


def instance_for(config: Config, notify: Callable[[str], None]) -> Any:
    from dbio.engines.postgres import target

    return target.instance_for(config, notify)


def exclusive(config: Config, command: str, notify: Callable[[str], None]) -> AbstractContextManager[None]:
    from dbio.engines.postgres import target

    return target.exclusive(config, command, notify)


def redact_dsn(dsn: str) -> str:
    from dbio.engines.postgres import dsn as dsns

    return dsns.redact_dsn(dsn)


def has_password(dsn: str) -> bool:
    from dbio.engines.postgres import dsn as dsns

    return dsns.dsn_has_password(dsn)


def same_server(dsn: str, redacted: str) -> bool:
    from dbio.engines.postgres import dsn as dsns

    return dsns.same_server(dsn, redacted)


def server_error_text(exc: BaseException) -> str | None:
    if "psycopg" not in sys.modules:
        return None  # psycopg never loaded: it cannot have raised
    from dbio.engines.postgres.errors import server_error_text as postgres

    return postgres(exc)


def builtin_scripts() -> dict[str, str]:
    from dbio.engines.postgres import sqlfiles

    return {name: sqlfiles.text(name) for name in sqlfiles.names()}


def complete_result(document: dict[str, Any]) -> dict[str, Any]:
    from dbio.engines.postgres import legacy

    return legacy.complete_result(document)


def complete_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    from dbio.engines.postgres import legacy

    return legacy.complete_manifest(manifest)
