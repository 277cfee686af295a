"""Database engines behind one small interface (see base.py), each reached by name through
registry.py.

What the rest of dbio needs to know about the engines without naming one lives here."""

from __future__ import annotations

from typing import Any

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


def complete_result(document: dict[str, Any]) -> dict[str, Any]:
    """A result as this dbio reads it: what an older dbio did not record, filled in by the engine
    that wrote it (capabilities.engine); unchanged when that engine is not one of dbio's."""
    entry = registry.find(_engine_of(document))
    return document if entry is None else entry.complete_result(document)


def complete_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The same for a run's manifest (run.json)."""
    entry = registry.find(_engine_of(manifest))
    return manifest if entry is None else entry.complete_manifest(manifest)


def _engine_of(document: Any) -> Any:
    caps = document.get("capabilities") if isinstance(document, dict) else None
    return caps.get("engine") if isinstance(caps, dict) else None
