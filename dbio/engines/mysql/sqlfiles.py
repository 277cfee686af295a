"""The engine's SQL, kept in sql/*.sql; Python only binds parameters and quotes identifiers."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def text(name: str) -> str:
    return resources.files("dbio.engines.mysql").joinpath("sql", name).read_text()


def statement(name: str) -> str:
    """A one-statement script without its comment lines (the driver sends it as it is)."""
    return "\n".join(line for line in text(name).splitlines() if not line.lstrip().startswith("--")).strip()


def statements(name: str) -> list[str]:
    """The statements of a script of several, each ending with ';' at the end of a line."""
    parts = "\n".join(line for line in text(name).splitlines() if not line.lstrip().startswith("--")).split(";\n")
    return [part.strip().rstrip(";") for part in parts if part.strip()]


def names() -> list[str]:
    root = resources.files("dbio.engines.mysql").joinpath("sql")
    return sorted(entry.name for entry in root.iterdir() if entry.name.endswith(".sql"))


def ident(name: str) -> str:
    """A quoted identifier."""
    return "`" + name.replace("`", "``") + "`"
