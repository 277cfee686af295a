"""The embedded server's configuration, made for I/O testing (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbio.config import RESERVED_CONNECTIONS
from dbio.engines.postgres.engine_options import InstanceConfig
from dbio.units import format_bytes

# What each dbio-chosen setting is for; written into dbio.conf next to the value.
WHY = {
    "listen_addresses": "no TCP listener: clients use the private unix socket",
    "unix_socket_permissions": "only the server user (and root) may connect",
    "debug_io_direct": "O_DIRECT data files: a buffer miss is a device read, never an OS page cache hit",
    "track_io_timing": "read/write latency in pg_stat_io",
    "track_wal_io_timing": "WAL write/sync latency in pg_stat_io",
    "wal_level": "minimal lets the loader write tables without WAL (COPY FREEZE into a new table)",
    "max_wal_senders": "0 for wal_level=minimal; with standbys, one sender each and room for pg_basebackup",
    "max_replication_slots": "one slot per standby, so the primary keeps the WAL a standby still needs",
    "max_slot_wal_keep_size": "a stopped standby's slot keeps at most this much WAL (what the filesystem can give), "
                              "so it cannot fill the disk; a standby further behind is made again",
    "hot_standby": "a standby serves read-only queries while it replays",
    "hot_standby_feedback": "a standby's queries are not cancelled by the primary's cleanup",
    "primary_conninfo": "the primary's private socket",
    "primary_slot_name": "this standby's slot on the primary",
    "lc_messages": "server messages in English, as dbio parses none but users read them",
    "max_wal_size": "bounded by the free space of the data directory's filesystem, so WAL cannot fill it",
    "min_wal_size": "kept below max_wal_size",
    "max_worker_processes": "room for the parallel query workers of every session's scan (scan_workers)",
    "max_parallel_workers": "every session's scan may have its scan_workers at once",
}


@dataclass(frozen=True)
class Profile:
    """Settings for one purpose: 'run' (as configured) or 'load' (buffered I/O for a fast load)."""

    purpose: str
    settings: tuple[tuple[str, str], ...]
    wal_bounded: bool = False  # dbio lowered max_wal_size to fit the free space

    def as_dict(self) -> dict[str, str]:
        return dict(self.settings)


def connections_for(sessions: int, configured: int) -> int:
    if configured:
        return configured
    needed = sessions + RESERVED_CONNECTIONS + 10
    return max(100, -(-needed // 50) * 50)


# The server keeps about max_wal_size of WAL between checkpoints and may exceed it under a heavy
# update load (it is a soft limit): dbio plans for twice that, plus room for logs and catalogs.
WAL_OVERSHOOT = 2
DISK_RESERVE = 64 << 20
WAL_SIZES_MB = (1024, 512, 256, 128, 64, 32)  # PostgreSQL's default first; steps keep restarts rare
INITDB_BYTES = 48 << 20  # what initdb and the first start write


MEMORY_SHARE_LIMIT = 0.8  # of the host's memory that shared_buffers may take


def memory_problem(cfg: InstanceConfig, memory_bytes: int) -> str | None:
    """Why shared_buffers is too large for this host (None: it is not; unknown memory is no problem)."""
    if not memory_bytes or cfg.shared_buffers <= MEMORY_SHARE_LIMIT * memory_bytes:
        return None
    return (f"shared_buffers = {format_bytes(cfg.shared_buffers)} is more than {MEMORY_SHARE_LIMIT:.0%} of this "
            f"host's memory ({format_bytes(memory_bytes)})")


def wal_size_for(budget_bytes: int) -> int:
    """The largest max_wal_size (MB) whose worst case fits in what the filesystem can give (pure)."""
    for size in WAL_SIZES_MB:
        if WAL_OVERSHOOT * (size << 20) + DISK_RESERVE <= budget_bytes:
            return size
    return WAL_SIZES_MB[-1]


def wal_fits(max_wal_mb: int, budget_bytes: int) -> bool:
    return WAL_OVERSHOOT * (max_wal_mb << 20) + DISK_RESERVE <= budget_bytes


def wal_room_fix(max_wal_mb: int, budget_bytes: int) -> str:
    """What to do about a max_wal_size whose worst case does not fit (pure): the largest smaller one that
    does, or, when none does, the room the smallest needs (a fixed '64MB' was offered to a run at 32 MB)."""
    smaller = next((size for size in WAL_SIZES_MB if size < max_wal_mb and wal_fits(size, budget_bytes)), None)
    if smaller is not None:
        return f"lower max_wal_size (--pg-setting max_wal_size={smaller}MB), free some space, or run without updates"
    least = WAL_SIZES_MB[-1]
    return (f"free some space there (an update run needs {(WAL_OVERSHOOT * (least << 20) + DISK_RESERVE) >> 20} MiB "
            f"at the smallest max_wal_size, {least} MB), or run without updates")


DEFAULT_WORKERS = 8  # PostgreSQL's max_worker_processes and max_parallel_workers
OTHER_WORKERS = 2  # background workers that are not parallel query's (the logical replication launcher...)
WORKER_SETTINGS = ("max_worker_processes", "max_parallel_workers")


def worker_limits(parallel_workers: int) -> dict[str, str]:
    """The worker limits that let parallel_workers parallel query workers run at once (pure): none
    (PostgreSQL's 8) when those are enough."""
    if parallel_workers + OTHER_WORKERS <= DEFAULT_WORKERS:
        return {}
    return {"max_worker_processes": str(parallel_workers + OTHER_WORKERS),
            "max_parallel_workers": str(parallel_workers)}


def streams_to_standbys(cfg: InstanceConfig, purpose: str, standbys: int) -> bool:
    """Whether the primary sends WAL to its standbys in this profile: always, but for a load with
    minimal WAL (fast, as without standbys: the standbys are made again from the loaded primary)."""
    return standbys > 0 and not (purpose == "load" and cfg.wal_level == "minimal")


def build_profile(cfg: InstanceConfig, *, port: int, socket_dir: str, sessions: int, purpose: str,
                  wal_budget: int | None = None, standbys: int = 0, parallel_workers: int = 0) -> Profile:
    """wal_budget: bytes the instance's WAL may take (free space plus its WAL now); None: not bounded.
    standbys: the primary's standbys (their WAL senders and slots); parallel_workers: the parallel
    query workers a run's scans may use at once."""
    direct = cfg.direct_io and purpose == "run"
    settings: dict[str, str] = {
        "listen_addresses": "''",
        "port": str(port),
        "unix_socket_directories": _quote(socket_dir),
        "unix_socket_permissions": "0700",
        "max_connections": str(connections_for(sessions, cfg.max_connections)),
        "shared_buffers": f"{cfg.shared_buffers // 1024}kB",
        "io_method": cfg.io_method,
        "io_workers": str(cfg.io_workers),
        "debug_io_direct": "'data'" if direct else "''",
        "track_io_timing": "on",
        "track_wal_io_timing": "on",
        "wal_level": cfg.wal_level,
        "lc_messages": "'C'",
    }
    settings.update(worker_limits(parallel_workers))
    if streams_to_standbys(cfg, purpose, standbys):
        settings["wal_level"] = "replica" if cfg.wal_level == "minimal" else cfg.wal_level
        settings["max_wal_senders"] = settings["max_replication_slots"] = str(max(10, standbys + 2))
        # a stopped standby's slot would keep WAL without end: at most what the WAL's budget allows
        keep = wal_size_for(wal_budget) if wal_budget is not None else WAL_SIZES_MB[0]
        settings["max_slot_wal_keep_size"] = f"{keep}MB"
    elif cfg.wal_level == "minimal":
        settings["max_wal_senders"] = "0"
    user_set = {name for name, _ in cfg.pg_settings}
    bounded = False
    if wal_budget is not None and "max_wal_size" not in user_set:
        size = wal_size_for(wal_budget)
        if size < WAL_SIZES_MB[0]:
            bounded = True
            settings["max_wal_size"] = f"{size}MB"
            if "min_wal_size" not in user_set:
                settings["min_wal_size"] = f"{max(32, min(size // 2, 80))}MB"  # two 16 MB segments at least
    for name, value in cfg.pg_settings:
        settings[name] = _quote(value)  # quoted whatever the type: PostgreSQL accepts '15min', 'on', '64'
    return Profile(purpose, tuple(settings.items()), bounded)


def as_arguments(profile: Profile) -> dict[str, str]:
    """The profile's values as the server takes them on its command line (unquoted)."""
    return {name: _unquote(value) for name, value in profile.settings}


def render(profile: Profile) -> str:
    lines = [f"# Written by dbio before each start ({profile.purpose} profile). Edits are overwritten;",
             "# set instance options in dbio.toml ([instance] and [instance.pg_settings]) instead."]
    for name, value in profile.settings:
        why = WHY.get(name)
        lines.append(f"{name} = {value}" + (f"  # {why}" if why else ""))
    return "\n".join(lines) + "\n"


def restart_needed(running: dict[str, str], wanted: dict[str, str]) -> list[str]:
    """Settings that differ; a running server with more connections than wanted is fine."""
    changed = []
    for name in sorted(set(running) | set(wanted)):
        have, want = running.get(name), wanted.get(name)
        if have == want:
            continue
        if name == "max_connections" and have and want and int(have) >= int(want):
            continue
        if name in WORKER_SETTINGS and (want is None or (have and int(have) >= int(want))):
            continue  # room for more workers than a run asks is fine
        changed.append(name)
    return changed


def describe_restart(purpose: str, changed: list[str], wanted: dict[str, str]) -> str:
    """Why the server restarts, in plain words: what the new profile changes (pure)."""
    parts = []
    for name in changed:
        value = wanted.get(name)
        if name == "debug_io_direct":
            parts.append("direct I/O (every buffer miss is a device read)" if value not in (None, "''")
                         else "buffered I/O through the OS page cache")
        elif name == "shared_buffers" and value and value.endswith("kB") and value[:-2].isdigit():
            parts.append(f"shared_buffers {format_bytes(int(value[:-2]) * 1024)}")
        else:
            parts.append(f"{name} {_unquote(value)}" if value is not None else f"{name} back to its default")
    text = f"restarting the embedded server for the {purpose}: {', '.join(parts)}"
    if purpose == "load" and "debug_io_direct" in changed:
        wal = " and minimal WAL" if wanted.get("wal_level") == "minimal" else ""
        text += f" (a fast load with buffered I/O{wal}; runs go back to direct I/O)"
    return text


def quote(value: str) -> str:
    """A value as postgresql.conf reads it back unchanged."""
    return _quote(value)


def _quote(value: str) -> str:
    # postgresql.conf reads a backslash in a quoted value as an escape: double it, as the quote
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def max_wal_mb(running: dict[str, str]) -> int | None:
    """The max_wal_size a profile (as written) gives the server, in MB (PostgreSQL's default: 1GB);
    None when it is not a plain size (the server judged it already)."""
    match = re.fullmatch(r"\s*(\d+)\s*(kB|MB|GB|TB)?\s*", _unquote(running.get("max_wal_size", "1GB")))
    if not match:
        return None
    factor = {"kB": 1 / 1024, None: 1, "MB": 1, "GB": 1024, "TB": 1 << 20}[match.group(2)]  # a bare number is MB
    return int(int(match.group(1)) * factor)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'").replace("\\\\", "\\")
    return value
