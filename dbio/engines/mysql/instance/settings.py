"""The managed server's settings, as command-line options (pure): no option file is read, so
nothing on the machine (/etc/mysql, ~/.my.cnf) changes what dbio measures."""

from __future__ import annotations

from dbio.engines.mysql.instance.layout import Layout
from dbio.engines.mysql.engine_options import InstanceConfig

EXTRA_CONNECTIONS = 20  # the control, monitor, cancel and lock connections, and a few to spare
MIN_CONNECTIONS = 151  # the server's default: fewer sessions never restart it for a lower limit


def profile(cfg: InstanceConfig, page_size: int, *, sessions: int) -> dict[str, str]:
    """Every setting that matters for the method, by the server's own variable names (the record
    and the result show them)."""
    return {
        "innodb_buffer_pool_size": str(cfg.buffer_pool),
        "innodb_page_size": str(page_size),  # fixed when the instance was created
        "innodb_flush_method": "O_DIRECT",  # a buffer-pool miss is a device read, never the page cache's
        "innodb_read_ahead_threshold": "0",  # no linear read-ahead...
        "innodb_random_read_ahead": "OFF",  # ...nor random: every read is one a session asked for
        "innodb_buffer_pool_load_at_startup": "OFF",  # a restart starts cold, as PostgreSQL's does
        "innodb_buffer_pool_dump_at_shutdown": "OFF",
        # its upkeep on each page evicted costs CPU per read (bench_mysql_cpu.py); MariaDB's default, not MySQL 8.0's
        "innodb_adaptive_hash_index": "OFF",
        "innodb_file_per_table": "ON",  # each table its own file: the baseline reads the tables' files
        "innodb_stats_persistent": "ON",  # --verify reads leaf pages from the persistent statistics
        "performance_schema": "ON",
        "performance_schema_consumer_events_waits_current": "ON",  # wait samples name what a session waits on
        "skip_networking": "ON",  # no TCP listener: only the private socket
        "skip_name_resolve": "ON",
        "max_connections": str(max(MIN_CONNECTIONS, sessions + EXTRA_CONNECTIONS)),
        "character_set_server": "utf8mb4",
    }


def arguments(settings: dict[str, str], layout: Layout) -> list[str]:
    """The server's options: no option file, the instance's own directories, then the profile."""
    fixed = [f"--datadir={layout.datadir}", f"--socket={layout.socket}", f"--pid-file={layout.pid_file}",
             f"--log-error={layout.log_file}", "--port=0"]
    return ["--no-defaults", *fixed, *(argument(name, value) for name, value in settings.items())]


def argument(name: str, value: str) -> str:
    """One server option from a setting (pure). 'option:key' is an option given once per key
    (performance_schema_instrument:stage/% = OFF -> --performance-schema-instrument=stage/%=OFF)."""
    option, _, key = name.partition(":")
    flag = "--" + option.replace("_", "-")
    return f"{flag}={key}={value}" if key else f"{flag}={value}"


def restart_needed(running: dict[str, str], wanted: dict[str, str]) -> list[str]:
    """The settings for which the running server must restart to give the wanted profile (pure): any
    that differs, but a connection limit only when it is too low."""
    def enough(name: str) -> bool:
        if name == "max_connections" and str(running.get(name, "")).isdigit():
            return int(running[name]) >= int(wanted[name])
        return running.get(name) == wanted[name]

    return sorted(name for name in wanted if not enough(name))


def describe(settings: dict[str, str]) -> str:
    """The settings that matter most, in one line."""
    from dbio.units import format_bytes

    pool = settings.get("innodb_buffer_pool_size")
    page = settings.get("innodb_page_size")
    return (f"buffer pool {format_bytes(int(pool)) if pool and pool.isdigit() else pool}, "
            f"page {int(page) // 1024 if page and page.isdigit() else page} KiB, "
            f"flush {settings.get('innodb_flush_method')}, read-ahead off, performance_schema "
            f"{settings.get('performance_schema')}, max_connections {settings.get('max_connections')}")
