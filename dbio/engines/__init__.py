"""Database engines behind one small interface (see base.py).

What the rest of dbio needs to know about the engines without naming one lives here."""

from __future__ import annotations


def server_error_text(exc: BaseException) -> str | None:
    """The first line of an error a database server (through its driver) raised, secrets removed;
    None when exc is not such an error."""
    from dbio.engines.postgres.errors import server_error_text as postgres

    return postgres(exc)


def scrub(text: str) -> str:
    """text with anything that looks like a secret of a connection string removed."""
    from dbio.engines.postgres.dsn import scrub as postgres

    return postgres(text)


def builtin_scripts() -> dict[str, str]:
    """The SQL an engine runs, by name (dbio sql lists and prints them)."""
    from dbio.engines.postgres import sqlfiles

    return {name: sqlfiles.text(name) for name in sqlfiles.names()}
