"""The engine's SQL, kept in sql/*.sql; Python only binds parameters and quotes identifiers."""

from __future__ import annotations

from functools import cache
from importlib import resources

from psycopg import sql


@cache
def text(name: str) -> str:
    return resources.files("dbio.engines.postgres").joinpath("sql", name).read_text()


def composed(name: str, **parts: sql.Composable) -> sql.Composed:
    """A script with {placeholders} filled by safely quoted identifiers and literals."""
    return sql.SQL(text(name)).format(**parts)


def names() -> list[str]:
    root = resources.files("dbio.engines.postgres").joinpath("sql")
    found = []
    for entry in root.iterdir():
        if entry.is_dir():
            found += [f"{entry.name}/{child.name}" for child in entry.iterdir() if child.name.endswith(".sql")]
        elif entry.name.endswith(".sql"):
            found.append(entry.name)
    return sorted(found)
