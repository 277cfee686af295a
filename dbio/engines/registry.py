"""The engines dbio knows, by name, and the one door to each: its entry module.

An entry module is imported only when asked for, and imports no database driver at module level, so
choosing PostgreSQL never loads another engine's driver (nor the other way round). The names and
packages are the foundation's table (dbio/engine_table.py), which the option table reads too.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Callable, Protocol, cast

from dbio import engine_table
from dbio.errors import UsageError

if TYPE_CHECKING:
    from dbio.config import Config
    from dbio.errors import ConfigError
    from dbio.option import Option

DEFAULT = engine_table.DEFAULT


class EngineEntry(Protocol):
    """What dbio asks of an engine by name. An entry module provides these as module-level names."""

    OPTIONS: tuple[Option, ...]  # the options only this engine has (options.py marks them with it)
    DSN_SCHEMES: tuple[str, ...]  # the URI schemes its connection strings begin with (scheme://)
    PASSWORD_ENV: str  # the environment variable its driver takes a password from (PGPASSWORD, MYSQL_PWD)
    INSTANCE_RECORD: str  # the name of dbio's record in its managed instance's directory
    RESTART_KNOBS: dict[str, str]  # its options a sweep may vary by restarting its server -> short name
    LAYOUT_KNOBS: dict[str, str]  # its options placing files that a sweep may vary -> short name
    REMEMBERED: tuple[str, ...]  # its instance options the instance's record keeps for later commands

    def relayout(self, config: Config, notify: Callable[[str], None], *, check_only: bool = False) -> None:
        """Bring its embedded instance to the configuration's layout where that needs no load (a sweep
        step): e.g. move the WAL; nothing for a server of the user's. check_only: refuse (UsageError)
        a layout it could not make, changing nothing."""

    def check(self, config: Config) -> list[ConfigError]:
        """Its cross-field configuration rules that need no server, one line each."""

    def create_engine(self) -> Any:
        """A new Engine (engines/base.py)."""

    def default_data_dir(self) -> Any:
        """Where its embedded instance lives when --data-dir is not given (a Path)."""

    def resolve(self, config: Config, *, purpose: str, sessions: int,
                notify: Callable[[str], None]) -> tuple[Any, str, Any]:
        """(engine, connection string, embedded instance or None) for a command (see target.py)."""

    def instance_config(self, values: dict[str, Any], workload: dict[str, Any]) -> Any:
        """Config.instance: its embedded instance's options ([instance]) as its own typed record,
        which has data_dir and to_dict(); workload: the [workload] options, for defaults that
        depend on them (PostgreSQL's io_method on the access path)."""

    def instance_for(self, config: Config, notify: Callable[[str], None]) -> Any:
        """Its embedded instance for this configuration, created or not."""

    def exclusive(self, config: Config, command: str, notify: Callable[[str], None]) -> AbstractContextManager[None]:
        """Hold the target server alone for a command; refuse at once when another dbio holds it."""

    def redact_dsn(self, dsn: str) -> str:
        """The connection string without any secret, safe to print and store."""

    def has_password(self, dsn: str) -> bool:
        """Whether the connection string holds a password (which must not be written anywhere)."""

    def same_server(self, dsn: str, redacted: str) -> bool:
        """Whether dsn names the server a redacted connection string (as stored) names."""

    def scrub(self, text: str) -> str:
        """Free text with anything that looks like a secret of a connection string removed."""

    def server_error_text(self, exc: BaseException) -> str | None:
        """The first line of an error its driver raised, secrets removed; None for any other error."""

    def builtin_scripts(self) -> dict[str, str]:
        """The SQL (or other scripts) it runs, by name."""

    def complete_result(self, document: dict[str, Any]) -> dict[str, Any]:
        """A result an older dbio wrote for this engine, with the facts (capabilities, neutral
        counters, figure names) this dbio reads filled in from what it recorded (pure; a complete
        result comes back as it is)."""

    def complete_manifest(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """The same for a run manifest (run.json) an older dbio left behind."""


def names() -> tuple[str, ...]:
    return engine_table.names()


def owner_of_dsn(dsn: str) -> str | None:
    """The engine whose URI scheme a connection string begins with; None for key=value strings and
    schemes no engine reads."""
    scheme, sep, _ = dsn.strip().partition("://")
    if not sep:
        return None
    return next((name for name in names() if scheme.lower() in entry(name).DSN_SCHEMES), None)


def owners_of_instance(data_dir: Path) -> tuple[str, ...]:
    """The engines whose managed instance's record lies in data_dir. OSError: it cannot be looked into (a parent
    the user may not enter, a name too long)."""
    return tuple(name for name in names() if (data_dir / entry(name).INSTANCE_RECORD).is_file())


def find(name: Any) -> EngineEntry | None:
    """The entry of an engine named in a document; None for a name dbio does not know (a test's engine)."""
    return entry(name) if isinstance(name, str) and name in engine_table.PACKAGES else None


def entry(name: str) -> EngineEntry:
    """The entry module of an engine, imported now if it is not yet."""
    if name not in engine_table.PACKAGES:
        raise UsageError(f"unknown engine {name!r}", f"use one of {', '.join(names())}")
    return cast(EngineEntry, importlib.import_module(engine_table.entry_module(name)))
