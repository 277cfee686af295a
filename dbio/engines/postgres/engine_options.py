"""The options only the PostgreSQL engine has: its embedded instance ([instance]) and its plans,
and the typed record the [instance] options fill (Config.instance).

Imported to assemble the option table whichever engine runs: it imports no driver."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dbio.option import LOADS, MAKES, RUNS, SETTINGS, Option

_MiB = 1 << 20

# postgresql.conf settings dbio writes itself: the options that own them, or why they are fixed.
MANAGED_SETTINGS = {
    "port": "dbio picks a free port", "listen_addresses": "the instance listens only on its private socket",
    "unix_socket_directories": "the socket lives in the instance's directory",
    "unix_socket_permissions": "the socket directory is private", "unix_socket_group": "the socket is private",
    "shared_buffers": "use the shared_buffers option", "max_connections": "use the max_connections option",
    "io_method": "use the io_method option", "io_workers": "use the io_workers option",
    "debug_io_direct": "use the direct_io option", "wal_level": "use the wal_level option",
    "track_io_timing": "dbio needs it on", "track_wal_io_timing": "dbio needs it on",
    "data_directory": "the instance's data directory is fixed", "hba_file": "dbio writes the instance's access rules",
    "ident_file": "dbio writes the instance's access rules", "config_file": "dbio writes the instance's configuration",
    "include": "dbio writes the instance's configuration", "include_dir": "dbio writes the instance's configuration",
    "include_if_exists": "dbio writes the instance's configuration",
}


# The options a sweep may vary that restart the embedded server (a sweep varies them outermost),
# with the short names its step directories use.
RESTART_KNOBS = {"shared_buffers": "sb", "io_method": "io", "io_workers": "iow", "direct_io": "dio",
                 "wal_level": "wal", "max_connections": "maxconn"}
# The options placing the embedded instance's files that a sweep may vary (outermost of all): each
# value is set before its steps, the WAL moved or the tables loaded again (sweep/layout.py).
LAYOUT_KNOBS = {"wal_dir": "wald", "data_dirs": "dirs"}
# The options the instance's record remembers from the last command that configured it, which later
# commands take where the user gives none (config_resolver.py); a layout is the record's own.
REMEMBERED = (*RESTART_KNOBS, "pg_settings")


# Settings whose value names a program the server runs or code it loads, beyond the pattern
# runs_code() also applies (names ending in _command, _library or _libraries).
CODE_SETTINGS = frozenset({"dynamic_library_path", "extension_control_path", "jit_provider"})


def runs_code(name: str) -> bool:
    """Whether a server setting makes the server run a program or load code (pure). A module's own setting
    (NAME.part) is judged by its part too: basebackup_to_shell.command, a bundled module's, runs a shell
    command; plperl.on_init and the like run code when their language loads."""
    part = name.rsplit(".", 1)[-1]
    return name in CODE_SETTINGS or any(
        word in ("command", "library", "libraries") or word.endswith(("_command", "_library", "_libraries"))
        for word in (name, part)) or ("." in name and part.startswith("on_") and part.endswith("init"))


OPTIONS: tuple[Option, ...] = (
    # -- workload: how PostgreSQL reads the rows -----------------------------------------
    Option("access_path", "workload", "choice", "index",
           "index: index scan, one synchronous 8 KiB read per row (IO:DataFileRead); "
           "bitmap: bitmap heap scan, batched and prefetched reads.",
           choices=("index", "bitmap"), commands=RUNS),
    Option("scan_workers", "workload", "int", 0,
           "Parallel query workers for each scan of the scan table (scan_pct): the scan runs as a parallel "
           "sequential scan with this many workers besides its session, whose reads count in the scan figures "
           "(0 = the session alone).", min=0, max=32, commands=RUNS),
    # -- instance: the embedded PostgreSQL ----------------------------------------------
    Option("wal_dir", "instance", "path", None,
           "Directory for the embedded instance's WAL (initdb --waldir), e.g. on a device of its own; fixed when "
           "the instance is created (default: pg_wal inside the data directory).", commands=SETTINGS),
    Option("data_dirs", "instance", "strs", None,
           "Directories for the loaded tables, one tablespace each, schemas spread over them in turn "
           "(e.g. one per device); fixed by the load. Needs the embedded instance and schemas >= directories.",
           commands=LOADS),
    Option("standbys", "instance", "int", 0,
           "Streaming hot standbys made with the embedded primary (pg_basebackup), each with its own socket and "
           "port; a run then uses every member as a node (see --nodes). Fixed when the instance is created.",
           min=0, max=8, commands=MAKES),
    Option("standby_data_dir", "instance", "strs", None,
           "Directory for a standby's files (repeat it: the first for standby1, and so on), e.g. on a device of "
           "its own; fixed when the instance is created (default: inside the instance's directory).", commands=MAKES),
    Option("shared_buffers", "instance", "size", 128 * _MiB,
           "Buffer cache of the embedded instance; keep it small so reads reach storage.",
           min=16 * _MiB, max=1 << 40, commands=SETTINGS),
    Option("direct_io", "instance", "bool", True,
           "Open data files with O_DIRECT (debug_io_direct=data) so every buffer miss is a device read.",
           commands=SETTINGS),
    Option("io_method", "instance", "choice", "auto",
           "PostgreSQL 18 I/O method; auto: sync for the index access path (one synchronous read at a time: "
           "an I/O worker only adds a hand-over), worker for bitmap (its reads are prefetched).",
           choices=("auto", "sync", "worker", "io_uring"), commands=SETTINGS),
    Option("io_workers", "instance", "int", 3, "I/O worker processes (io_method=worker).", min=1, max=32,
    commands=SETTINGS),
    Option("max_connections", "instance", "int", 0,
           "Connection limit of the embedded instance (0 = sized for the sessions).", min=0, max=10000,
           commands=SETTINGS),
    Option("wal_level", "instance", "choice", "minimal",
           "WAL level of the embedded instance: minimal lets the loader skip WAL; UPDATE WAL is the same as replica.",
           choices=("minimal", "replica", "logical"), commands=SETTINGS),
    Option("pg_settings", "instance", "settings", (),
           "Extra postgresql.conf settings for the embedded instance (TOML table [instance.pg_settings]; "
           "on the command line --pg-setting name=value, and name= drops one the instance remembers; the file's "
           "table has no empty values: leave a setting out to leave it at the server's default).", cli=False,
           fix="remove that setting, or set it with the dbio option named in the message",
           managed=tuple(MANAGED_SETTINGS.items()), commands=SETTINGS),
    Option("allow_settings", "instance", "names", (),
           "Settings that run programs or load code (archive_command, *_preload_libraries, ...) that the user "
           "allows by name, on the command line only (--allow-setting NAME).", cli=False, file=False,
           commands=SETTINGS),
)


@dataclass(frozen=True)
class InstanceConfig:
    """The embedded PostgreSQL instance's options, as Config.instance holds them."""

    data_dir: Path
    shared_buffers: int
    direct_io: bool
    io_method: str
    io_workers: int
    max_connections: int  # 0 = sized for the sessions
    wal_level: str
    pg_settings: tuple[tuple[str, str], ...]
    allow_settings: tuple[str, ...] = ()  # code-running settings the user allowed by name
    wal_dir: Path | None = None  # None: pg_wal inside the data directory
    data_dirs: tuple[Path, ...] = ()  # one tablespace each; none: the default tablespace
    standbys: int = 0  # streaming hot standbys made with the instance
    standby_data_dir: tuple[Path, ...] = ()  # one per standby, in order; the rest inside the instance

    @property
    def cache_bytes(self) -> int:
        """The buffer cache the instance runs with (its running server may still have another)."""
        return self.shared_buffers

    def to_dict(self) -> dict[str, Any]:
        out = {**asdict(self), "data_dir": str(self.data_dir), "pg_settings": dict(self.pg_settings)}
        out["wal_dir"] = None if self.wal_dir is None else str(self.wal_dir)
        out["data_dirs"] = [str(d) for d in self.data_dirs] or None  # None: as the option reads it
        out["standby_data_dir"] = [str(d) for d in self.standby_data_dir] or None
        return out


# io_method = auto, per access path, from bench/RESULTS.md ("Defaults from measurements", 2 CPUs):
# index: sync gave 1.18-1.37x worker's reads/s and 1.09-1.36x its reads per host-CPU-second;
# bitmap: worker's prefetch gave 1.5-2.0x sync's reads/s at one session (64-row ranges), while at
# 4 sessions and 8-row ranges sync led; worker keeps what that access path exists to show.
IO_METHOD_AUTO = {"index": "sync", "bitmap": "worker"}


def io_method_for(configured: str, access_path: str) -> str:
    """The io_method a configuration means (pure): auto resolved for its access path."""
    return IO_METHOD_AUTO.get(access_path, "worker") if configured == "auto" else configured
