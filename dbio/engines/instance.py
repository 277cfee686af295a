"""What dbio asks of an engine's managed instance (its embedded or managed server), declared.

A command's target holds one or None: None is the explicit "no managed instance" case (--dsn, a
server of the user's), never an object to probe. The standbys are an optional group: an engine
whose spec says Features.standbys has a managed instance that is also a WithStandbys.
PostgreSQL's is engines/postgres/instance/embedded.py, MySQL's engines/mysql/instance/managed.py;
both build on dbio/managed/instance.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class InstanceStatus(Protocol):
    """What dbio instance status shows (each engine's record.Status); read-only."""

    @property
    def data_dir(self) -> Path: ...
    @property
    def exists(self) -> bool: ...
    @property
    def running(self) -> bool: ...
    @property
    def pid(self) -> int | None: ...
    @property
    def size_bytes(self) -> int | None: ...
    @property
    def log_file(self) -> Path | None: ...
    @property
    def purpose(self) -> str | None: ...
    @property
    def wal_dir(self) -> Path | None: ...  # where its redo log is, when known
    @property
    def members(self) -> tuple[Any, ...]: ...  # with standbys: each member, the primary first; else ()
    def server_line(self) -> str: ...
    def socket_line(self) -> str: ...
    def profile(self) -> str: ...


class DestroyPlan(Protocol):
    """What destroy will remove, checked before anything is touched."""

    @property
    def data_dir(self) -> Path: ...
    @property
    def size_bytes(self) -> int: ...
    def leftovers(self) -> list[str]: ...  # what it leaves in place, each a line


class ManagedInstance(Protocol):
    """dbio's own server of an engine: made, started, configured and removed by dbio only.
    cfg is the engine's Config.instance record (EngineSpec.instance_config)."""

    @property
    def data_dir(self) -> Path: ...
    def exists(self) -> bool: ...
    def meta(self) -> Any: ...  # its record (read with trust): options, the server user, ...
    def remember(self, options: dict[str, Any]) -> None: ...  # the options the commands take back
    def conninfo(self, dbname: str | None = None) -> str: ...
    def is_running(self) -> bool: ...
    def status(self) -> InstanceStatus: ...
    def check_location(self) -> None: ...  # before it is made: a directory dbio may own
    def check_host(self, cfg: Any, memory_bytes: int) -> None: ...  # its cache fits this host
    def check_redo_room(self, cfg: Any) -> None: ...  # an UPDATE run's redo log has room
    def init(self, cfg: Any, *, sessions: int, dbname: str) -> None: ...
    # started in the profile a purpose needs (load, run, any, look: creates nothing); its connection string
    def ensure(self, cfg: Any, *, sessions: int, purpose: str, dbname: str) -> str: ...
    def stop(self, *, quiet: bool = False) -> bool: ...  # False: it was not running
    def destroy_plan(self) -> DestroyPlan: ...  # checked before anything is touched
    def destroy(self, plan: Any) -> None: ...


class Standbys(Protocol):
    def wait_caught_up(self, dbname: str = "postgres", timeout: float = ...) -> None: ...


class WithStandbys(ManagedInstance, Protocol):
    """The optional group Features.standbys declares: a primary and streaming standbys, each a node of a run."""

    @property
    def standbys(self) -> Standbys: ...
    def standby_count(self) -> int: ...
    # (name, role, connection string) of each member, or those wanted names (--nodes); refuses an unknown name
    def nodes(self, dbname: str, wanted: str | None) -> list[tuple[str, str, str]]: ...
