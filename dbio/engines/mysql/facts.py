"""What the MySQL engine declares in its Capabilities for reports and verdicts to word themselves with (pure)."""

from __future__ import annotations

import os
import re
from typing import Any

from dbio.engines.spec import Features

# its optional groups (engines/spec.Features): a read probe; members (a managed Galera cluster's nodes, each a
# writer: engines/mysql/instance/galera.py); no timed maintenance
FEATURES = Features(read_probe=True, standbys=True)
CACHE_NAME = "innodb_buffer_pool_size"
SETTINGS_SHOWN = ("innodb_buffer_pool_size", "innodb_flush_method", "innodb_page_size",
                  "innodb_flush_log_at_trx_commit",
                  "innodb_doublewrite", "innodb_log_file_size", "innodb_read_ahead_threshold",
                  "innodb_random_read_ahead", "innodb_io_capacity", "performance_schema", "skip_networking",
                  "innodb_buffer_pool_load_at_startup")
PFS_OFF = "performance_schema_instruments_off"  # not a server variable: setup_instruments' classes all off
SETTINGS_READ = SETTINGS_SHOWN + ("innodb_checksum_algorithm", "innodb_adaptive_hash_index", "innodb_lru_scan_depth",
                                  "thread_handling", "datadir", "innodb_log_group_home_dir", "innodb_data_home_dir",
                                  "max_connections", "extra_max_connections", "hostname", "port", "socket", "version",
                                  "version_comment", "innodb_stats_persistent", "innodb_file_per_table", "read_only",
                                  "super_read_only", "innodb_autoextend_increment", "innodb_data_file_path",
                                  "innodb_temp_data_file_path")
DIRECT_METHODS = ("O_DIRECT", "O_DIRECT_NO_FSYNC")


def setting(settings: dict[str, Any], name: str) -> str | None:
    entry = settings.get(name)
    return None if not isinstance(entry, dict) or entry.get("setting") is None else str(entry["setting"])


def redo_directory(settings: dict[str, Any], local: bool) -> str | None:
    """innodb_log_group_home_dir, relative to datadir when it is ('./' by default)."""
    datadir, home = setting(settings, "datadir"), setting(settings, "innodb_log_group_home_dir")
    if not local or not datadir:
        return None
    return os.path.normpath(os.path.join(datadir, home or "."))


OWN_INSTANCE = "managed"  # dbio's own MariaDB/MySQL: the machine's server programs, not an embedded build


def capability_facts(settings: dict[str, Any], *, local: bool, data_io_timed: bool = False,
                     redo_io_timed: bool = False) -> dict[str, Any]:
    return {
        "times_data_io": data_io_timed,  # performance_schema times data-file I/O
        "times_redo_io": redo_io_timed,
        "cache_name": CACHE_NAME,
        "redo_directory": redo_directory(settings, local),
        "settings_shown": SETTINGS_SHOWN,
        "maintenance_process": "page cleaner",  # counters' by_backend: its flushing of dirty pages
        "maintenance_name": "InnoDB's page cleaner (flushing dirty pages)",
        "redo_name": "redo log",
        "block_name": "page",
        "page_bytes": int(setting(settings, "innodb_page_size") or 16384),
        "own_instance": OWN_INSTANCE,
        **growth_step(settings),
    }


UNDO_STEP_MAX = 256 << 20  # MySQL 8.0.23+ doubles an undo tablespace's extension, from 16 MB, when they come fast


def growth_step(settings: dict[str, Any]) -> dict[str, Any]:
    """The most InnoDB adds to one file at once while an update run writes (pure): an autoextending system or
    temporary tablespace grows by innodb_autoextend_increment (MiB; seen: 64 MiB twice in 0.6 s on MariaDB);
    MySQL 8.0.23+'s undo tablespaces by up to 256 MB. A file-per-table tablespace's 4 extents are in the floor."""
    step, why = 0, None
    paths = [setting(settings, name) or "" for name in ("innodb_data_file_path", "innodb_temp_data_file_path")]
    increment = setting(settings, "innodb_autoextend_increment")
    if any("autoextend" in path for path in paths) and increment and increment.isdigit():
        step, why = int(increment) << 20, "innodb_autoextend_increment"
    version = setting(settings, "version") or ""
    numbers = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if "mariadb" not in version.lower() and numbers and tuple(map(int, numbers.groups())) >= (8, 0, 23) \
            and UNDO_STEP_MAX > step:
        step, why = UNDO_STEP_MAX, "MySQL's undo tablespace extension"
    return {"growth_step_bytes": step, "growth_step_setting": why}


def direct_io(settings: dict[str, Any]) -> bool:
    return (setting(settings, "innodb_flush_method") or "").upper() in DIRECT_METHODS
