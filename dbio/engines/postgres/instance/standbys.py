"""The embedded instance's standbys: streaming hot standbys of its primary, made with the bundled
pg_basebackup, each with its own directory (data, socket, log) and port.

A standby lives in `<instance>/standby<k>`, or in `dbio-standby<k>` inside the directory
--standby-data-dir names (on other storage). As for the primary, the member's directory belongs
to dbio (root), and only its data, socket and log directories to the server user; the record
(dbio-instance.json) lists every member. Standbys start after the primary and stop before it.

How the standbys get the loaded data: a load with wal_level = minimal (the default, and the fast
path: COPY FREEZE writes no WAL) cannot be streamed, so before it the standbys are stopped and
their slots dropped ("stale"), and after it each is made again from the loaded primary with
pg_basebackup. Measured on this machine (bench/RESULTS.md, "standbys: streaming the load or
copying it"), the minimal load plus copies beat streaming the load through WAL (wal_level =
replica), which writes each block twice on the primary and twice again on every standby. With
wal_level = replica or logical chosen by the user, the standbys simply stream the load."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from dbio import cluster_members as names
from dbio import trust
from dbio.engines.postgres.engine_options import InstanceConfig
from dbio.errors import DbioError, UsageError
from dbio.filesystem import tree_bytes
from dbio.engines.postgres.instance import as_server, placement, processes, settings
from dbio.engines.postgres.instance.paths import Layout
from dbio.engines.postgres.instance.ports import free_port
from dbio.engines.postgres.instance.record import MemberStatus, Meta
from dbio.managed import location as managed_location
from dbio.managed.server_user import ServerUser
from dbio.units import format_bytes

CATCH_UP_TIMEOUT = 600.0  # seconds a standby may take to replay what the primary wrote


@dataclass(frozen=True)
class Member:
    """One member as the record keeps it."""

    name: str
    role: str
    root: Path  # the member's directory: its pgdata, socket and log
    port: int
    place: dict | None = None  # a standby on --standby-data-dir: what destroy removes (placement.Place)
    stale: bool = False  # stopped and its slot dropped for a load with minimal WAL: made again after it

    @property
    def layout(self) -> Layout:
        return Layout(self.root)

    @property
    def slot(self) -> str:
        return f"dbio_{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "data_dir": str(self.layout.pgdata),
                "socket_dir": str(self.layout.socket_dir), "port": self.port, "root": str(self.root),
                "place": self.place, "stale": self.stale}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Member":
        try:
            return cls(str(data["name"]), str(data["role"]), Path(str(data["root"])), int(data["port"]),
                       data.get("place"), bool(data.get("stale", False)))
        except (KeyError, TypeError, ValueError) as exc:
            raise DbioError(f"the instance record lists a member it does not describe ({exc})",
                            "if the instance is damaged, destroy it (dbio instance destroy) and make it again"
                            ) from None


def planned(root: Path, cfg: InstanceConfig) -> list[tuple[str, Path, Path | None]]:
    """(name, directory, the --standby-data-dir it is in or None) of each standby to make (pure)."""
    out = []
    for k, name in enumerate(names.names(cfg.standbys)[1:]):
        chosen = cfg.standby_data_dir[k] if k < len(cfg.standby_data_dir) else None
        out.append((name, chosen / f"dbio-{name}" if chosen else root / name, chosen))
    return out


def check_new(root: Path, cfg: InstanceConfig) -> None:
    """Every standby's place, checked before anything is made (one line, exit 2, when refused)."""
    for name, member_root, chosen in planned(root, cfg):
        if chosen is not None:
            placement.check(chosen, data_dir=root, option="--standby-data-dir", subdir=member_root.name,
                            needed_bytes=settings.INITDB_BYTES + settings.DISK_RESERVE)
        socket_path = Layout(member_root).socket_dir / ".s.PGSQL.65535"
        if len(os.fsencode(socket_path)) > managed_location.MAX_SOCKET_PATH:
            where = f"--standby-data-dir {chosen}" if chosen else f"--data-dir {root}"
            raise UsageError(f"{where} is too long for {name}: its socket {socket_path} would have "
                             f"{len(os.fsencode(socket_path))} bytes, above the {managed_location.MAX_SOCKET_PATH} a "
                             "unix "
                             "socket path may have", "choose a shorter directory path")


def lsn_bytes(lsn: str) -> int:
    """A WAL position as PostgreSQL writes it ('16/B374D848') in bytes (pure)."""
    high, low = lsn.split("/")
    return (int(high, 16) << 32) + int(low, 16)


def lag_seconds(lag_bytes: int | None, measured: float | None) -> float | None:
    """A standby's replay lag in time: the primary's measure; once it has gone (the standby was idle
    and replayed everything) the lag is truly 0; otherwise it is unknown (pure)."""
    if measured is not None:
        return measured
    return 0.0 if lag_bytes == 0 else None


def standby_settings(primary: dict[str, str], member: Member, primary_member: Member) -> settings.Profile:
    """The primary's running settings, with the standby's own place and its way to the primary
    (a hot standby needs the primary's connection and lock limits at least: the same values)."""
    conninfo = (f"host={primary_member.layout.socket_dir} port={primary_member.port} user=dbio "
                f"application_name={member.name}")
    own = {"port": str(member.port), "unix_socket_directories": settings.quote(str(member.layout.socket_dir)),
           "hot_standby": "on", "hot_standby_feedback": "on",
           "primary_conninfo": settings.quote(conninfo), "primary_slot_name": settings.quote(member.slot)}
    return settings.Profile("standby", tuple({**primary, **own}.items()))


class Standbys:
    """The standbys of one embedded instance, given what they need of their primary: its layout, its
    record as read now (the members are kept in it), its connection string and where to say what
    they do. They never call the instance back."""

    def __init__(self, layout: Layout, meta: Callable[[], Meta], primary_conninfo: Callable[[], str],
                 notify: Callable[[str], None]):
        self.layout = layout
        self.meta = meta
        self.primary_conninfo = primary_conninfo  # the primary's postgres database, by its private socket
        self.notify = notify

    def members(self) -> list[Member]:
        meta = self.meta()
        if not meta.members:  # a record made before standbys: the primary alone
            return [Member(names.PRIMARY, "primary", self.layout.root, meta.port)]
        return [Member.from_dict(d) for d in meta.members]

    def standbys(self) -> list[Member]:
        return [m for m in self.members() if m.role == "standby"]

    def _save(self, member: Member) -> None:
        meta = self.meta()
        listed = [Member.from_dict(d) for d in meta.members] or self.members()
        listed = [member if m.name == member.name else m for m in listed]
        if member.name not in {m.name for m in listed}:
            listed.append(member)
        meta.members = [m.to_dict() for m in listed]
        meta.write(self.layout.meta_file)

    # -- facts -------------------------------------------------------------------------
    def pid(self, member: Member) -> int | None:
        return processes.running_postmaster(member.layout.pgdata)

    def conninfo(self, member: Member, dbname: str) -> str:
        from psycopg.conninfo import make_conninfo

        # as the primary's: the private socket, no password, nothing of PGOPTIONS
        return make_conninfo(host=str(member.layout.socket_dir), port=str(member.port), user="dbio",
                             dbname=dbname, connect_timeout="10", require_auth="none", options=" ")

    # -- making them -------------------------------------------------------------------
    def create(self, cfg: InstanceConfig, user: ServerUser) -> None:
        """Each standby of a new instance, from its running primary (the record lists each one made)."""
        self._save(self.members()[0])
        used = {self.meta().port}
        for name, member_root, chosen in planned(self.layout.root, cfg):
            port = _free_port(used)
            used.add(port)
            member = Member(name, "standby", member_root, port, self._make_dirs(member_root, chosen, user))
            self._save(member)
            self._copy(member, user)
            self.start(member)

    def _make_dirs(self, member_root: Path, chosen: Path | None, user: ServerUser) -> dict | None:
        """The member's directory (dbio's) with its data, socket and log directories (the server user's)."""
        made_parent = chosen is not None and not chosen.exists()
        if chosen is not None:
            chosen.mkdir(parents=True, exist_ok=True)
            placement.prove_made(chosen)
        member_root.mkdir(mode=0o755)  # fails if something appeared there since the check
        place = placement.Place(str(member_root), made_parent).to_dict()
        try:
            os.chmod(member_root, 0o755)  # the server user passes through
            layout = Layout(member_root)
            for d in (layout.pgdata, layout.socket_dir, layout.log_dir):
                d.mkdir(mode=0o700)
                os.chown(d, user.uid, user.gid)
        except BaseException:
            placement.remove(place)  # nothing half-made: not yet in the record, destroy would miss it
            raise
        return place if chosen is not None else None

    def _copy(self, member: Member, user: ServerUser) -> None:
        """The primary's data, copied into the member's empty data directory by pg_basebackup, which
        also makes the member's slot; then the files that make it a standby."""
        primary = self.members()[0]
        size = tree_bytes(self.layout.pgdata)  # the primary's data, as its status says
        self.notify(f"{member.name}: copying the primary ({format_bytes(size)}) with pg_basebackup into "
                    f"{member.layout.pgdata}")
        started = time.monotonic()
        tool = as_server.trusted_tool(self.meta(), "pg_basebackup")
        as_server.run(user, [tool, "-D", str(member.layout.pgdata), "-h", str(primary.layout.socket_dir),
                             "-p", str(primary.port), "-U", "dbio", "-w", "-X", "stream", "-c", "fast",
                             "-C", "-S", member.slot], cwd=member.root, log_file=member.layout.log_file,
                      what=f"pg_basebackup of {member.name}")
        trust.write_for(member.layout.pgdata / "standby.signal", "", user.uid, user.gid)
        seconds = time.monotonic() - started
        self.notify(f"{member.name}: made in {seconds:.1f} s ({format_bytes(size / max(seconds, 1e-3))}/s)")

    def remake_stale(self) -> None:
        """Standbys dropped for a load with minimal WAL, made again from the primary and started."""
        user = as_server.server_user(self.meta())
        for member in self.standbys():
            if not member.stale:
                continue
            self.stop(member)
            _empty(member.layout.pgdata, user)
            self._copy(member, user)
            fresh = replace(member, stale=False)
            self._save(fresh)
            self.start(fresh)

    def retire(self) -> None:
        """Before the primary restarts with wal_level = minimal, which refuses replication slots: each
        standby stopped, its slot dropped, and marked to be made again after the load."""
        live = [m for m in self.standbys() if not m.stale]
        if not live:
            return
        self.notify("stopping the standbys for the load with minimal WAL; each is made again from the "
                    "loaded primary after it")
        for member in live:
            self.stop(member)
        _run_sql(self.primary_conninfo(), "instance/drop_slot.sql", [{"slot": m.slot} for m in live])
        for member in live:
            self._save(replace(member, stale=True))

    # -- running them ------------------------------------------------------------------
    def start(self, member: Member) -> None:
        if member.stale or self.pid(member) is not None:
            return
        meta = self.meta()
        user = as_server.server_user(meta)
        processes.wait_for_crashed_server(member.layout.pgdata, _lock_pid(member), self.notify)
        profile = standby_settings(meta.settings, member, self.members()[0])
        trust.write_for(member.layout.settings_file, settings.render(profile), user.uid, user.gid)
        as_server.run(user, [as_server.trusted_tool(meta, "pg_ctl"), "-D", str(member.layout.pgdata), "-l",
                             str(member.layout.log_file), "-w", "-t", "120", "start"],
                      cwd=member.root, log_file=member.layout.log_file, what=f"pg_ctl start of {member.name}")

    def start_all(self) -> None:
        for member in self.standbys():
            self.start(member)

    def stop(self, member: Member) -> bool:
        if self.pid(member) is None:
            return False
        meta = self.meta()
        user, pg_ctl = as_server.server_user(meta), as_server.trusted_tool(meta, "pg_ctl")
        base = [pg_ctl, "-D", str(member.layout.pgdata), "-w"]
        try:
            as_server.run(user, base + ["-m", "fast", "-t", "60", "stop"], cwd=member.root,
                          log_file=member.layout.log_file, what=f"pg_ctl stop of {member.name}")
        except DbioError:
            as_server.run(user, base + ["-m", "immediate", "-t", "30", "stop"], cwd=member.root,
                          log_file=member.layout.log_file, what=f"pg_ctl stop -m immediate of {member.name}")
        return True

    def stop_all(self) -> list[str]:
        return [m.name for m in self.standbys() if self.stop(m)]

    def remove(self) -> None:
        """destroy: every standby's directory (and a --standby-data-dir dbio made, left empty)."""
        for member in self.standbys():
            self.stop(member)
            if member.place:
                placement.remove(member.place)
            elif member.root.parent == self.layout.root:
                shutil.rmtree(member.root, ignore_errors=not member.root.exists())

    # -- replication -------------------------------------------------------------------
    def wait_caught_up(self, dbname: str = "postgres", timeout: float = CATCH_UP_TIMEOUT) -> None:
        """Until every running standby has replayed all the primary has written now."""
        target = lsn_bytes(_query_one(self.primary_conninfo(), "instance/primary_position.sql"))
        deadline = time.monotonic() + timeout
        for member in self.standbys():
            while True:
                replayed = self._replayed(member, dbname)
                if replayed is not None and replayed >= target:
                    break
                if time.monotonic() > deadline:
                    raise DbioError(f"{member.name} has not replayed the primary's WAL after {timeout:.0f} s",
                                    f"see its log {member.layout.log_file}")
                time.sleep(0.2)

    def _replayed(self, member: Member, dbname: str) -> int | None:
        import psycopg

        try:
            with psycopg.connect(self.conninfo(member, dbname), autocommit=True) as conn:
                row = conn.execute(_sql("instance/replay_position.sql")).fetchone()
        except psycopg.OperationalError:
            return None  # starting, or restarting: asked again
        return lsn_bytes(row[0]) if row and row[0] else None

    def status(self) -> list[MemberStatus]:
        """Each member, the primary first, with each standby's replay lag (bytes and seconds)."""
        primary_pid = processes.running_postmaster(self.layout.pgdata)
        running = primary_pid is not None
        flushed = lsn_bytes(_query_one(self.primary_conninfo(), "instance/primary_position.sql")) if running else None
        measured = dict(_query_all(self.primary_conninfo(), "instance/replay_lag.sql")) if running else {}
        rows = []
        for member in self.members():
            pid = self.pid(member) if member.role == "standby" else primary_pid
            row = MemberStatus(member.name, member.role, pid is not None, pid, member.port, member.layout.pgdata)
            if member.role == "standby":
                row = _with_lag(row, member, self._replayed(member, "postgres") if pid else None, flushed,
                                measured.get(member.name))
            rows.append(row)
        return rows


def _with_lag(row: MemberStatus, member: Member, replayed: int | None, flushed: int | None,
              measured: float | None) -> MemberStatus:
    if member.stale:
        return replace(row, note="to be made again from the primary (after a load with minimal WAL)")
    if replayed is None or flushed is None:
        return replace(row, note="not replaying" if row.running else "")
    lag = max(0, flushed - replayed)
    return replace(row, lag_bytes=lag, lag_seconds=lag_seconds(lag, measured))


def _lock_pid(member: Member) -> int | None:
    """The pid the member's postmaster.pid names, whatever that process is now."""
    return processes.lock_file_pid(member.layout.pgdata)


def _empty(pgdata: Path, user: ServerUser) -> None:
    """The data directory of a standby made again: empty, as pg_basebackup wants it."""
    shutil.rmtree(pgdata)
    pgdata.mkdir(mode=0o700)
    os.chown(pgdata, user.uid, user.gid)


def _sql(name: str) -> str:
    from dbio.engines.postgres import sqlfiles

    return sqlfiles.text(name)


def _query_all(conninfo: str, name: str) -> list[tuple]:
    """The rows of a script of the engine's sql/ run on the primary."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        return conn.execute(_sql(name)).fetchall()


def _query_one(conninfo: str, name: str) -> Any:
    """The first value of a script of the engine's sql/ run on the primary."""
    rows = _query_all(conninfo, name)
    return rows[0][0] if rows else None


def _run_sql(conninfo: str, name: str, each: list[dict[str, Any]]) -> None:
    """A script of the engine's sql/ run on the primary once with each set of parameters."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        for params in each:
            conn.execute(_sql(name), params)


def _free_port(used: set[int]) -> int:
    while True:
        port = free_port()
        if port not in used:
            return port
