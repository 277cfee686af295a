"""What surrounded a run, as its reports read it: the environment (server, host, storage, limits), the
raw-device baseline fio measured beside it, and the load that made its data set (result_records.Result
holds one of each).

Typed leniently, as the reports read these parts: a value not of its shape is left out (an entry of a
list) or read as absent (a number that is not one), never a crash. What is a bag of facts by nature
(the server as probed, the host, each storage place as collect/block.py read it) stays a mapping,
reached through a named field instead of a path repeated across the reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

_EMPTY: Mapping[str, Any] = {}


def mapping(value: Any) -> Mapping[str, Any]:
    """value when it is an object, else an empty one (the records' one leniency for objects)."""
    return value if isinstance(value, dict) else _EMPTY


def number(value: Any) -> float | None:
    """value when it is a number (not a bool), else None (absent)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def objects(value: Any) -> tuple[Mapping[str, Any], ...]:
    """The objects of a list (what is not one is left out)."""
    return tuple(v for v in value if isinstance(v, dict)) if isinstance(value, list) else ()


def words(value: Any) -> tuple[str, ...]:
    """The texts of a list, each as text (a command line, fio's options, a plan's nodes)."""
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


@dataclass(frozen=True)
class Storage:
    """The places the server wrote to, each as collect/block.py read it (path, device, filesystem, its
    stack of devices, what /proc/diskstats counts it on); an empty mapping where a place was not recorded."""
    data_directory: Mapping[str, Any]
    wal: Mapping[str, Any]
    tablespaces: tuple[Mapping[str, Any], ...]  # the tables' own places (data_dirs), in their order

    @classmethod
    def of(cls, value: Any) -> Storage:
        s = mapping(value)
        return cls(mapping(s.get("data_directory")), mapping(s.get("wal")), objects(s.get("tablespaces")))

    def places(self) -> list[tuple[str, Mapping[str, Any]]]:
        """(role, facts) of each place recorded: the data directory, each tablespace, the WAL."""
        out = [("data directory", self.data_directory)] if self.data_directory else []
        out += [(f"tablespace {n}", s) for n, s in enumerate(self.tablespaces, start=1) if s]
        if self.wal:
            out.append(("WAL", self.wal))
        return out

    @property
    def has_layout(self) -> bool:
        """Whether the run's WAL or tables were placed outside the data directory."""
        data, wal = str(self.data_directory.get("path") or ""), str(self.wal.get("path") or "")
        return bool(self.tablespaces) or bool(data and wal and not wal.startswith(data.rstrip("/") + "/"))


@dataclass(frozen=True)
class Environment:
    """Where the run ran: the server as probed, the host, the storage, and the limits each side ran under."""
    server: Mapping[str, Any]  # its description, identity, settings
    host: Mapping[str, Any]  # CPUs, memory, kernel, CPU governor, transparent huge pages
    storage: Storage
    limits: tuple[Mapping[str, Any], ...]  # the server's cgroup limits and affinity (a merge's: each host's)
    client_limits: tuple[Mapping[str, Any], ...]  # dbio's own, which a baseline's fio ran under

    @classmethod
    def of(cls, value: Any) -> Environment:
        e = mapping(value)
        return cls(mapping(e.get("server")), mapping(e.get("host")), Storage.of(e.get("storage")),
                   objects(e.get("limits")), objects(e.get("client_limits")))

    @property
    def settings(self) -> Mapping[str, Any]:
        """The server's settings as read (name -> its setting and unit)."""
        return mapping(self.server.get("settings"))


@dataclass(frozen=True)
class FioRun:
    """One of fio's read runs beside the database's (sync, sync_after, sync_more_N, deep, sequential)."""
    jobs: Any  # shown as written ("4 x 1")
    iodepth: Any
    engine: str | None
    options: tuple[str, ...]
    reads_per_s: float | None
    avg_read_us: float | None
    p99_read_us: float | None
    host_cpu_us_per_read: float | None
    process_cpu_us_per_read: float | None
    seconds: float | None
    started_at: float | None
    ended_at: float | None

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> FioRun:
        return cls(value.get("jobs"), value.get("iodepth"), value.get("engine"), words(value.get("options")),
                   *(number(value.get(name)) for name in (
                       "reads_per_s", "avg_read_us", "p99_read_us", "host_cpu_us_per_read", "process_cpu_us_per_read",
                       "seconds", "started_at", "ended_at")))


@dataclass(frozen=True)
class FioWrites:
    """fio's random writes to a scratch file beside a run with updates."""
    jobs: Any
    options: tuple[str, ...]
    writes_per_s: float | None
    avg_write_us: float | None
    p99_write_us: float | None
    host_cpu_us_per_write: float | None
    process_cpu_us_per_write: float | None
    seconds: float | None

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> FioWrites:
        return cls(value.get("jobs"), words(value.get("options")), *(number(value.get(name)) for name in (
            "writes_per_s", "avg_write_us", "p99_write_us", "host_cpu_us_per_write", "process_cpu_us_per_write",
            "seconds")))


@dataclass(frozen=True)
class RedoSync:
    """The redo log's sync rate on the redo directory's device: one small write and a sync, repeated."""
    method: str | None
    command: tuple[str, ...]
    syncs_per_s: float | None
    avg_sync_us: float | None

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> RedoSync:
        return cls(value.get("method"), words(value.get("command")), number(value.get("syncs_per_s")),
                   number(value.get("avg_sync_us")))


@dataclass(frozen=True)
class Baseline:
    """The raw-device baseline (dbio baseline, run --baseline): what fio ran, where and when. Its figures
    against the database's are in the result's figures, read through the catalogue."""
    version: str | None  # fio's
    place: str | None
    files: Any
    started_at: float | None
    ended_at: float | None
    after_skipped: str | None  # why fio's run after the database's did not complete
    runs: Mapping[str, FioRun]  # by name, in fio's order
    writes: FioWrites | None
    redo_sync: RedoSync | None

    @classmethod
    def of(cls, value: Any) -> Baseline | None:
        if not isinstance(value, dict):
            return None
        side = mapping(value.get("write_side"))
        writes, redo = side.get("writes"), side.get("redo_sync")
        return cls(value.get("version"), value.get("place"), value.get("files"), number(value.get("started_at")),
                   number(value.get("ended_at")), value.get("after_skipped"),
                   {name: FioRun.of(run) for name, run in mapping(value.get("runs")).items() if isinstance(run, dict)},
                   FioWrites.of(writes) if isinstance(writes, dict) else None,
                   RedoSync.of(redo) if isinstance(redo, dict) else None)


@dataclass(frozen=True)
class Setup:
    """The load that made the data set the run read (dbio setup)."""
    setup_id: Any
    loaded_bytes: float | None
    seconds: float | None

    @classmethod
    def of(cls, value: Any) -> Setup:
        s = mapping(value)
        return cls(s.get("setup_id"), number(s.get("loaded_bytes")), number(s.get("seconds")))
