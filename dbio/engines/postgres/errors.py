"""Errors PostgreSQL (through psycopg) raises, as one line a user can read."""

from __future__ import annotations

import psycopg

from dbio.engines.postgres.dsn import scrub


def server_error_text(exc: BaseException) -> str | None:
    if not isinstance(exc, psycopg.Error):
        return None
    text = scrub(str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__
