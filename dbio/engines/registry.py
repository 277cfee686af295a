"""The engines dbio knows, by name, and the one door to each: its spec (engines/spec.EngineSpec), the
SPEC of its entry module.

An entry module is imported only when asked for, and imports no database driver at module level, so
choosing PostgreSQL never loads another engine's driver (nor the other way round). The names and
packages are the foundation's table (dbio/engine_table.py), which the option table reads too;
register() adds an engine from elsewhere (a test's) by its spec.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from dbio import engine_table
from dbio.engines.spec import PROTOCOL_VERSION, EngineSpec
from dbio.errors import UsageError

DEFAULT = engine_table.DEFAULT


# engines registered at run time (a test's engine), beside the table's: name -> spec
_REGISTERED: dict[str, EngineSpec] = {}


def register(spec: EngineSpec) -> None:
    """Make an engine known by its name, as the table's are (tests/unit/test_engine_spec.py registers one).
    ValueError: its name is taken, or it implements another protocol version."""
    if spec.name in engine_table.PACKAGES or spec.name in _REGISTERED:
        raise ValueError(f"engine {spec.name!r} is registered already")
    _check(spec)
    _REGISTERED[spec.name] = spec


def unregister(name: str) -> None:
    """Forget an engine register() made known (the table's stay)."""
    _REGISTERED.pop(name, None)


def _check(spec: EngineSpec) -> EngineSpec:
    if spec.protocol != PROTOCOL_VERSION:
        raise ValueError(f"engine {spec.name!r} implements engine protocol {spec.protocol}; "
                         f"this dbio implements {PROTOCOL_VERSION}")
    return spec


def names() -> tuple[str, ...]:
    return engine_table.names() + tuple(_REGISTERED)


def owner_of_dsn(dsn: str) -> str | None:
    """The engine whose URI scheme a connection string begins with; None for key=value strings and
    schemes no engine reads."""
    scheme, sep, _ = dsn.strip().partition("://")
    if not sep:
        return None
    return next((name for name in names() if scheme.lower() in entry(name).dsn_schemes), None)


def owners_of_instance(data_dir: Path) -> tuple[str, ...]:
    """The engines whose managed instance's record lies in data_dir. OSError: it cannot be looked into (a parent
    the user may not enter, a name too long)."""
    return tuple(name for name in names() if (data_dir / entry(name).instance_record).is_file())


def find(name: Any) -> EngineSpec | None:
    """The spec of an engine named in a document; None for a name dbio does not know."""
    return entry(name) if isinstance(name, str) and name in names() else None


def entry(name: str) -> EngineSpec:
    """An engine's spec (its entry module's SPEC, imported now if it is not yet)."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in engine_table.PACKAGES:
        raise UsageError(f"unknown engine {name!r}", f"use one of {', '.join(names())}")
    spec = importlib.import_module(engine_table.entry_module(name)).SPEC
    if not isinstance(spec, EngineSpec) or spec.name != name:
        raise TypeError(f"{engine_table.entry_module(name)}.SPEC is not the EngineSpec of {name!r}")
    return _check(spec)
