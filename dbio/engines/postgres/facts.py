"""What PostgreSQL declares in its Capabilities for reports and verdicts to word themselves with.

Pure: computed from the server's settings (as probed, or as an older result recorded them), so
that a result written before these facts existed gets the same ones (see legacy.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbio.engines.spec import Features

# its optional groups (engines/spec.Features): the entry's spec and the engine both say these
FEATURES = Features(read_probe=True, operations=True, standbys=True)
CACHE_NAME = "shared_buffers"
SETTINGS_SHOWN = ("shared_buffers", "debug_io_direct", "io_method", "wal_level", "data_checksums", "track_io_timing",
                  "synchronous_commit", "full_page_writes", "checkpoint_timeout", "max_wal_size")
MAINTENANCE_PROCESS = "autovacuum worker"  # its backend_type in pg_stat_io
MAINTENANCE_NAME = "autovacuum"
WAL_DIRECTORY = "pg_wal"  # inside the data directory


def capability_facts(settings: dict[str, Any], *, data_directory: str | None, local: bool) -> dict[str, Any]:
    """The Capabilities fields reports consult, from the server's settings ({name: {"setting": ...}})."""
    return {
        "times_data_io": _on(settings, "track_io_timing"),
        "times_redo_io": _on(settings, "track_wal_io_timing"),
        "cache_name": CACHE_NAME,
        "redo_directory": str(Path(data_directory) / WAL_DIRECTORY) if local and data_directory else None,
        "settings_shown": SETTINGS_SHOWN,
        "maintenance_process": MAINTENANCE_PROCESS,
        "maintenance_name": MAINTENANCE_NAME,
        **growth_step(settings),
    }


def growth_step(settings: dict[str, Any]) -> dict[str, Any]:
    """The most PostgreSQL adds to one file at once while an update run writes (pure): a new WAL segment."""
    entry = settings.get("wal_segment_size")
    size = entry.get("setting") if isinstance(entry, dict) else None
    step = int(size) if isinstance(size, (int, str)) and str(size).isdigit() else 16 << 20  # 16 MB unless changed
    return {"growth_step_bytes": step, "growth_step_setting": "wal_segment_size"}


def _on(settings: dict[str, Any], name: str) -> bool:
    entry = settings.get(name)
    return isinstance(entry, dict) and entry.get("setting") == "on"
