"""What an engine declares to dbio, once: its spec (constants, optional groups, factories).

As fio's ioengine_ops and sysbench's drv_ops_t: one record per engine, read by name through the
registry (engines/registry.py). Its factories are imported when first called, so reading a spec
(for the option table, a DSN's owner, a password's variable) loads no database driver.
"""

from __future__ import annotations

import importlib
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from dbio.config import Config
    from dbio.engines.base import Engine
    from dbio.engines.instance import ManagedInstance
    from dbio.errors import ConfigError
    from dbio.option import Option

# The version of the interface an engine is written against (EngineSpec, engines/base.Engine and
# engines/instance.ManagedInstance): the registry refuses a spec written for another one.
PROTOCOL_VERSION = 1


@dataclass(frozen=True)
class Features:
    """The optional groups an engine implements, declared: code outside the engine asks these, never
    hasattr on the engine or its instance."""

    read_probe: bool = False  # engines/base.ReadProbing: one more connection timing single reads
    operations: bool = False  # engines/base.Maintenance: timed maintenance work (dbio ops)
    standbys: bool = False  # engines/instance.WithStandbys: its managed instance has streaming standbys


def lazy(target: str) -> Any:
    """A function named 'package.module:name', imported at its first call (the spec's factories)."""
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"lazy({target!r}): name a function as 'package.module:name'")

    def call(*args: Any, **kwargs: Any) -> Any:
        return vars(importlib.import_module(module))[name](*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{target}, imported when first called"
    return call


@dataclass(frozen=True)
class EngineSpec:
    """One engine, as dbio asks it by name (docs/internals.md, "Adding an engine")."""

    name: str  # what --engine takes; also Capabilities.engine in its results
    protocol: int  # the PROTOCOL_VERSION it implements
    features: Features
    options: tuple[Option, ...]  # the options only this engine has (its engine_options.py marks them with it)
    dsn_schemes: tuple[str, ...]  # the URI schemes its connection strings begin with (scheme://)
    password_env: str  # the environment variable its driver takes a password from (PGPASSWORD, MYSQL_PWD)
    instance_record: str  # the name of dbio's record in its managed instance's directory
    restart_knobs: dict[str, str]  # its options a sweep may vary by restarting its server -> short name
    layout_knobs: dict[str, str]  # its options placing files that a sweep may vary -> short name
    remembered: tuple[str, ...]  # its instance options the instance's record keeps for later commands
    # factories (lazy: each imported when first called)
    create_engine: Callable[[], Engine]
    # its cross-field configuration rules that need no server, one line each
    check: Callable[[Config], list[ConfigError]]
    # Config.instance: the [instance] options as its own typed record (has data_dir and to_dict());
    # workload: the [workload] options, for defaults that depend on them
    instance_config: Callable[[dict[str, Any], dict[str, Any]], Any]
    default_data_dir: Callable[[], Path]
    # (engine, connection string, its managed instance or None with --dsn) for a command (target.py)
    resolve: Callable[..., tuple[Engine, str, ManagedInstance | None]]
    # its managed instance for this configuration, created or not: (config, notify)
    instance_for: Callable[[Config, Callable[[str], None]], ManagedInstance]
    # hold the target server alone for a command: (config, command, notify); refuses at once when held
    exclusive: Callable[[Config, str, Callable[[str], None]], AbstractContextManager[None]]
    # bring the managed instance to the configuration's layout (a sweep step): (config, notify, check_only=)
    relayout: Callable[..., None]
    redact_dsn: Callable[[str], str]  # no secret left
    has_password: Callable[[str], bool]
    # whether a DSN names the server a redacted one (as stored) names: (dsn, redacted)
    same_server: Callable[[str, str], bool]
    scrub: Callable[[str], str]  # free text, secrets removed
    # the first line of an error its driver raised, secrets removed; None for any other error
    server_error_text: Callable[[BaseException], str | None]
    builtin_scripts: Callable[[], dict[str, str]]  # by name
    # a result (run.json) an older dbio wrote, with the facts this dbio reads filled in (pure)
    complete_result: Callable[[dict[str, Any]], dict[str, Any]]
    complete_manifest: Callable[[dict[str, Any]], dict[str, Any]]

    title: str = ""  # what its users call it ("MySQL and MariaDB"), in help texts
    # its own repeatable command-line flags: option key (kind settings or names) -> the flag's help
    flags: dict[str, str] = field(default_factory=dict)
