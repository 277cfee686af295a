"""Where dbio's loaded tables live on disk: the files a raw-device baseline reads (read-only)."""

from __future__ import annotations

from pathlib import Path

import psycopg

from dbio.engines.postgres import sqlfiles


def segment_paths(relative: str, size: int, segment_bytes: int) -> list[str]:
    """A relation of size bytes is its first file and then .1, .2, ... of segment_bytes each (pure)."""
    segments = max(1, -(-size // segment_bytes)) if segment_bytes > 0 else 1
    return [relative] + [f"{relative}.{i}" for i in range(1, segments)]


def data_files(conn: psycopg.Connection, data_directory: str | None) -> list[str]:
    """Absolute paths of the non-empty files of dbio's tables and indexes; empty without the data
    directory (the server did not say where it is, or it is on another host)."""
    if not data_directory:
        return []
    root = Path(data_directory)
    found = []
    for relative, size, segment_bytes in conn.execute(sqlfiles.text("data_files.sql")).fetchall():
        if not size:
            continue
        found += [str(root / p) for p in segment_paths(relative, int(size), int(segment_bytes))]
    return found
