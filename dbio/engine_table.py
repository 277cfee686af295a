"""The engines dbio knows, by name, and where each keeps its code: a table the foundation owns, as
strings, so that the option table and the registry read the same names without the foundation
importing an engine's code.

An engine's package holds `entry.py` (what the registry imports by name) and `engine_options.py` (its
options as declarations: standard library and dbio.option only, which tests/unit/test_layering.py
checks), which the option table (option_table.py) reads to list every engine's options.
"""

from __future__ import annotations

DEFAULT = "postgresql"

# engine name -> its package
PACKAGES = {
    "postgresql": "dbio.engines.postgres",
    "mysql": "dbio.engines.mysql",
}


def names() -> tuple[str, ...]:
    return tuple(PACKAGES)


def entry_module(name: str) -> str:
    return f"{PACKAGES[name]}.entry"


def engine_options_module(name: str) -> str:
    return f"{PACKAGES[name]}.engine_options"
