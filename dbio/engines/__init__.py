"""Database engines behind one small interface (see base.py), each reached by name through
registry.py.

What the rest of dbio needs to know about the engines without naming one lives here."""

from __future__ import annotations

from dbio.engines import registry


def server_error_text(exc: BaseException) -> str | None:
    """The first line of an error a database server (through its driver) raised, secrets removed;
    None when exc is not such an error."""
    for name in registry.names():
        text = registry.entry(name).server_error_text(exc)
        if text is not None:
            return text
    return None


def scrub(text: str) -> str:
    """text with anything that looks like a secret of a connection string (of any engine) removed."""
    for name in registry.names():
        text = registry.entry(name).scrub(text)
    return text


def builtin_scripts(engine: str = registry.DEFAULT) -> dict[str, str]:
    """The SQL an engine runs, by name (dbio sql lists and prints them)."""
    return registry.entry(engine).builtin_scripts()
