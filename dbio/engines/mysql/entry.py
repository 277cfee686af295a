"""The MySQL / MariaDB engine as the registry sees it (registry.EngineEntry).

Imported whichever engine runs (its options are part of the option table), so it imports
PyMySQL, and anything that does, only inside the functions that need it."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from dbio.engines.mysql import dsn as dsns
from dbio.engines.mysql.instance.layout import RECORD_NAME
from dbio.engines.mysql.options import LAYOUT_KNOBS, OPTIONS, REMEMBERED, RESTART_KNOBS, InstanceConfig

if TYPE_CHECKING:
    from dbio.config import Config
    from dbio.errors import ConfigError

__all__ = ["DSN_SCHEMES", "INSTANCE_RECORD", "PASSWORD_ENV", "LAYOUT_KNOBS", "OPTIONS", "REMEMBERED", "RESTART_KNOBS",
           "builtin_scripts", "check", "complete_manifest", "complete_result",
           "create_engine", "default_data_dir", "exclusive", "has_password", "instance_config", "instance_for",
           "redact_dsn", "relayout", "resolve", "same_server", "scrub", "server_error_text"]

DSN_SCHEMES = dsns.SCHEMES
PASSWORD_ENV = "MYSQL_PWD"  # what dsn.password() reads, as the mysql client does
INSTANCE_RECORD = RECORD_NAME


def check(config: Config) -> list[ConfigError]:
    from dbio.engines.mysql.checks import check as mysql_check

    return mysql_check(config)


def create_engine() -> Any:
    from dbio.engines.mysql.engine import MysqlEngine

    return MysqlEngine()


def default_data_dir() -> Path:
    from dbio.engines.mysql.instance.layout import default_data_dir as instance_dir

    return instance_dir()


def instance_config(values: dict[str, Any], workload: dict[str, Any]) -> InstanceConfig:
    return InstanceConfig(**values)


def resolve(config: Config, *, purpose: str, sessions: int, notify: Callable[[str], None]) -> tuple[Any, str, Any]:
    from dbio.engines.mysql import target

    return target.resolve(config, purpose=purpose, sessions=sessions, notify=notify)


def relayout(config: Config, notify: Callable[[str], None], *, check_only: bool = False) -> None:
    """No layout options yet: nothing to move."""


def instance_for(config: Config, notify: Callable[[str], None]) -> Any:
    from dbio.engines.mysql import target

    return target.instance_for(config, notify)


def exclusive(config: Config, command: str, notify: Callable[[str], None]) -> AbstractContextManager[None]:
    from dbio.engines.mysql import target

    return target.exclusive(config, command, notify)


def redact_dsn(dsn: str) -> str:
    return dsns.redact(dsn)


def has_password(dsn: str) -> bool:
    return dsns.has_password(dsn)


def same_server(dsn: str, redacted: str) -> bool:
    return dsns.same_server(dsn, redacted)


def scrub(text: str) -> str:
    return dsns.scrub(text)


def server_error_text(exc: BaseException) -> str | None:
    if "pymysql" not in sys.modules:
        return None  # PyMySQL never loaded: it cannot have raised
    from dbio.engines.mysql.connection import server_error_text as mysql

    return mysql(exc)


def builtin_scripts() -> dict[str, str]:
    from dbio.engines.mysql import sqlfiles

    return {name: sqlfiles.text(name) for name in sqlfiles.names()}


def complete_result(document: dict[str, Any]) -> dict[str, Any]:
    """A result written before the engine declared its words and page size, with them (as probe()
    would declare them from the recorded settings)."""
    out = dict(document)
    server = (out.get("environment") or {}).get("server") if isinstance(out.get("environment"), dict) else None
    out["capabilities"] = _words(out.get("capabilities"), server)
    if isinstance(out.get("nodes"), list):
        out["nodes"] = [{**n, "capabilities": _words(n.get("capabilities"), n.get("server"))} if isinstance(n, dict)
                        else n for n in out["nodes"]]
    return out


def complete_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    out = dict(manifest)
    out["capabilities"] = _words(out.get("capabilities"), out.get("server"))
    if isinstance(out.get("nodes"), list):
        out["nodes"] = [{**n, "capabilities": _words(n.get("capabilities"), n.get("server"))} if isinstance(n, dict)
                        else n for n in out["nodes"]]
    return out


def _words(caps: Any, server: Any) -> Any:
    from dbio.engines.mysql import facts

    if not isinstance(caps, dict):
        return caps
    caps = {"own_instance": facts.OWN_INSTANCE, **caps}  # written before it was declared: "(embedded)" in reports
    if "page_bytes" in caps:
        return caps

    settings = server.get("settings") if isinstance(server, dict) else None
    known = facts.capability_facts(settings if isinstance(settings, dict) else {}, local=False)
    return {**caps, **{k: known[k] for k in ("redo_name", "block_name", "page_bytes")}}
