"""The embedded PostgreSQL instance: dbio owns its initdb, configuration, start and stop.

EmbeddedInstance is what dbio asks of it (engines/instance.py), and how a command's needs become a
server running in the right profile (ensure); the steps live with their own job: preflight.py (the
checks before anything is made, started or moved), creation.py (initdb and what follows it),
start_stop.py (pg_ctl), removal.py (destroy), relocate.py (the WAL moved) and standbys.py. Each step is
given what it needs (the layout, the record, where to say what it did), never the instance: the instance
calls its steps, and no step calls it back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dbio import trust
from dbio.engines.postgres.instance import as_server, creation, placement, preflight, processes, removal, settings
from dbio.engines.postgres.instance import start_stop
from dbio.engines.postgres.instance.creation import SUPERUSER
from dbio.engines.postgres.instance.paths import Layout
from dbio.engines.postgres.instance.record import Meta, Status
from dbio.engines.postgres.instance.removal import DestroyPlan
from dbio.engines.postgres.instance.standbys import Standbys
from dbio.engines.postgres.engine_options import InstanceConfig
from dbio.errors import NoDatabase
from dbio.filesystem import tree_bytes
from dbio.managed.instance import ManagedInstance
from dbio.managed.server_user import ServerUser

__all__ = ["SUPERUSER", "DestroyPlan", "EmbeddedInstance"]


class EmbeddedInstance(ManagedInstance):
    layout_class = Layout
    record_class = Meta
    missing = ("no dbio instance in {data_dir}",
               "create it with dbio instance init (or any dbio command without --dsn)")

    @property
    def standbys(self) -> Standbys:
        return Standbys(self.layout, self.meta, lambda: self.conninfo("postgres"), self.notify)

    def standby_count(self) -> int:
        return sum(1 for m in self.meta().members if m.get("role") == "standby")

    def meta(self) -> Meta:
        return super().meta()

    def conninfo(self, dbname: str | None = None) -> str:
        from psycopg.conninfo import make_conninfo

        meta = self.meta()
        # require_auth=none: the instance trusts its private socket, so a server that asks for a
        # password is not dbio's, and gets none of ours (~/.pgpass, PGPASSWORD).
        # options=' ': nothing of PGOPTIONS in dbio's environment reaches the server (it could load code)
        return make_conninfo(host=str(self.layout.socket_dir), port=str(meta.port), user=SUPERUSER,
                             dbname=dbname or meta.dbname, connect_timeout="10", require_auth="none", options=" ")

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid (None when its lock file names no live postgres)."""
        return processes.running_postmaster(self.layout.pgdata)

    def is_running(self) -> bool:
        return self.postmaster_pid() is not None

    def status(self) -> Status:
        if not self.exists():
            return Status(self.data_dir, exists=False, running=False)
        meta = self.meta()
        pid = self.postmaster_pid()
        members = tuple(self.standbys.status()) if self.standby_count() else ()
        return Status(self.data_dir, True, pid is not None, pid, meta.port, meta.pg_version, meta.server_user,
                      meta.purpose, meta.settings, tree_bytes(self.layout.pgdata), self.layout.log_file,
                      wal_dir=self.layout.pgdata / "pg_wal", members=members)

    def nodes(self, dbname: str, wanted: str | None) -> list[tuple[str, str, str]]:
        """(name, role, connection string) of the members a run uses: all, or those --nodes names."""
        from dbio import cluster_members as member_names

        listed = self.standbys.members()
        chosen = member_names.choose([m.name for m in listed], wanted)
        return [(m.name, m.role, self.conninfo(dbname) if m.role == "primary" else self.standbys.conninfo(m, dbname))
                for m in listed if m.name in chosen]

    def log_size(self) -> int:
        try:
            return self.layout.log_file.stat().st_size
        except FileNotFoundError:
            return 0

    def log_since(self, offset: int) -> list[str]:
        """The server log's lines written after offset bytes (what one start logged)."""
        return trust.read_no_follow(self.layout.log_file, start=offset).splitlines()

    def tool(self, name: str) -> str:
        """A program of the instance's PostgreSQL (pg_basebackup), after checking that no one but
        root (or us) could have changed it."""
        return as_server.trusted_tool(self.meta(), name)

    # -- checks before anything is made, started or moved (preflight.py) -----------------
    def _record(self) -> Meta | None:
        """The instance's record, or None when there is no instance (what the steps are given)."""
        return self.meta() if self.exists() else None

    def check_location(self) -> None:
        """Before creating anything: the directory must be usable by the server user."""
        preflight.check_location(self.layout, self._record())

    def check_settings(self, cfg: InstanceConfig, *, sessions: int) -> None:
        """Every setting the server would get, judged by the server binary itself (preflight.py)."""
        preflight.check_settings(self.layout, self._record(), cfg, sessions=sessions)

    def check_layout(self, cfg: InstanceConfig) -> None:
        """A sweep's layouts, each checked before the sweep starts: its WAL place and its tablespace directories."""
        from dbio.engines.postgres.instance import relocate

        if self.exists():
            relocate.check(self.layout, self.meta(), cfg.wal_dir)
            preflight.check_data_dirs(self.data_dir, self.meta(), cfg)

    def check_redo_room(self, cfg: InstanceConfig) -> None:
        """Before an update run: refuses one that could fill the disk with WAL."""
        preflight.check_redo_room(self.layout, self._record(), cfg)

    check_host = staticmethod(preflight.check_host)  # before a setup creates or starts it: direct I/O, memory

    def wal_location(self) -> Path:
        """Where the WAL is written: wal_dir's subdirectory, or the data directory."""
        return preflight.wal_location(self.layout, self._record())

    def wal_budget(self) -> int:
        """Bytes the instance's WAL may occupy: the free space of its filesystem plus the WAL it has."""
        return preflight.wal_budget(self.layout, self._record())

    # -- made, and started in the profile a purpose needs ---------------------------------
    def init(self, cfg: InstanceConfig, *, sessions: int, dbname: str) -> None:
        preflight.check_new(self.layout, self.exists(), cfg, sessions)
        user, bins = creation.server_user_and_binaries(cfg, self.notify)
        meta = creation.create(self.layout, user, bins, dbname, cfg.wal_dir)
        socket_dir = self.layout.socket_dir
        self.notify(f"created PostgreSQL {meta.pg_version} instance in {self.data_dir} (socket {socket_dir}, "
                    f"port {meta.port})")
        if meta.wal_dir:
            shared = " (the same device as the data)" if placement.same_device(Path(meta.wal_dir),
                                                                               self.data_dir) else ""
            self.notify(f"its WAL lives in {meta.wal_dir} on {placement.device_of(Path(meta.wal_dir))}{shared}")
        self._start(settings.build_profile(cfg, port=meta.port, socket_dir=str(socket_dir), sessions=1,
                                           purpose="run", wal_budget=self.wal_budget(), standbys=cfg.standbys))
        creation.settle_catalogs(self.conninfo)
        creation.create_database(self.conninfo("postgres"), self.data_dir, dbname)
        if cfg.standbys:
            self._make_standbys(cfg, user)

    def _make_standbys(self, cfg: InstanceConfig, user: ServerUser) -> None:
        """The standbys of a new instance; when one cannot be made, nothing of the instance is left."""
        try:
            self.standbys.create(cfg, user)
        except BaseException:
            self.destroy(self.destroy_plan(), quiet=True)
            raise

    def ensure(self, cfg: InstanceConfig, *, sessions: int, purpose: str, dbname: str,
               parallel_workers: int = 0) -> str:
        """Create and start the instance as needed, in the profile the purpose needs; returns its conninfo.

        purpose: 'run' (as configured), 'load' (buffered I/O for a fast load), 'any' (a running
        instance is used as it is; a stopped one starts in the run profile) or 'look' (as 'any', but
        nothing is created: NoDatabase when the instance or the database is not there). parallel_workers:
        the parallel query workers the run's scans may use at once (its worker limits are raised for them).
        """
        look = purpose == "look"
        if not self.exists() and look:
            raise NoDatabase(f"no dbio instance in {self.data_dir}")
        if not self.exists():
            self.init(cfg, sessions=sessions, dbname=dbname)
        else:
            preflight.check_same_wal(self.data_dir, self.meta(), cfg)
            preflight.check_data_dirs(self.data_dir, self.meta(), cfg)
            self.check_settings(cfg, sessions=sessions)
        meta = self.meta()
        keep_as_is = purpose in ("any", "look")
        profile = self._profile(cfg, sessions, "run" if keep_as_is else purpose, parallel_workers)
        if self.standby_count() and not settings.streams_to_standbys(cfg, profile.purpose, self.standby_count()):
            self._retire_standbys(cfg, sessions)
        wanted = profile.as_dict()
        if self.is_running() and keep_as_is:
            pass
        elif self.is_running():
            changed = settings.restart_needed(meta.settings, wanted)
            if changed:
                self.notify(settings.describe_restart(purpose, changed, wanted))
                self.stop(quiet=True)
                self._start(profile)
        else:
            self._start(profile)
        creation.create_database(self.conninfo("postgres"), self.data_dir, dbname, look=look)
        self._run_standbys()
        return self.conninfo(dbname)

    def _profile(self, cfg: InstanceConfig, sessions: int, purpose: str,
                 parallel_workers: int = 0) -> settings.Profile:
        return settings.build_profile(cfg, port=self.meta().port, socket_dir=str(self.layout.socket_dir),
                                      sessions=sessions, purpose=purpose, wal_budget=self.wal_budget(),
                                      standbys=self.standby_count(), parallel_workers=parallel_workers)

    def _retire_standbys(self, cfg: InstanceConfig, sessions: int) -> None:
        """Before a load with minimal WAL: the standbys stop and their slots go (the primary runs to drop them)."""
        if not any(not m.stale for m in self.standbys.standbys()):
            return
        if not self.is_running():
            self._start(self._profile(cfg, sessions, "run"))
        self.standbys.retire()

    def _run_standbys(self) -> None:
        """Once the primary streams WAL: stale standbys made again, every standby running."""
        if not self.standby_count() or self.meta().settings.get("wal_level") == "minimal":
            return
        self.standbys.remake_stale()
        self.standbys.start_all()

    def _start(self, profile: settings.Profile) -> None:
        start_stop.start(self.layout, self.meta(), profile, self.notify)

    def start(self, cfg: InstanceConfig, *, sessions: int = 1) -> None:
        preflight.check_same_wal(self.data_dir, self.meta(), cfg)
        self.check_settings(cfg, sessions=sessions)
        meta = self.meta()
        if self.is_running():
            self.notify(f"the embedded server is already running (pid {self.postmaster_pid()})")
        else:
            self._start(settings.build_profile(cfg, port=meta.port, socket_dir=str(self.layout.socket_dir),
                                               sessions=sessions, purpose="run", wal_budget=self.wal_budget(),
                                               standbys=self.standby_count()))
        self._run_standbys()

    def start_checked(self, cfg: InstanceConfig, *, sessions: int) -> None:
        """Start the stopped server with cfg's settings, judged before: only the start itself is left,
        which dbio ops recovery times."""
        meta = self.meta()
        self._start(settings.build_profile(cfg, port=meta.port, socket_dir=str(self.layout.socket_dir),
                                           sessions=sessions, purpose="run", wal_budget=self.wal_budget(),
                                           standbys=self.standby_count()))

    def stop(self, *, quiet: bool = False) -> bool:
        """Fast shutdown (immediate if that does not finish), the standbys first; False when none was running."""
        stopped = self.standbys.stop_all() if self.standby_count() else []
        if stopped and not quiet:
            self.notify(f"stopped the standbys ({', '.join(stopped)})")
        if not self.is_running():
            return bool(stopped)
        start_stop.stop(self.layout, self.meta())
        if not quiet:
            self.notify("stopped the embedded server")
        return True

    def crash(self) -> None:
        """Stop the server as a crash would (pg_ctl stop -m immediate): the next start replays the WAL."""
        start_stop.crash(self.layout, self.meta())

    # -- another layout: the WAL moved, tablespace directories made -------------------------
    def move_wal(self, cfg: InstanceConfig) -> bool:
        """A sweep over wal_dir: the WAL moved to cfg.wal_dir (None: the data directory), the server
        stopped for it (the next command starts it); False when it is already there."""
        from dbio.engines.postgres.instance import relocate

        meta = self.meta()
        moved = relocate.move_wal(self.layout, meta, as_server.server_user(meta), cfg.wal_dir,
                                  lambda: self.stop(quiet=True))
        if moved:
            where = self.meta().wal_dir or f"{self.layout.pgdata / 'pg_wal'} (inside the data directory)"
            self.notify(f"moved the WAL to {where} on {placement.device_of(Path(where.split(' (')[0]))}")
        return moved

    def tablespace_dirs(self, cfg: InstanceConfig) -> list[str]:
        """The server's own directory in each of data_dirs (made now if missing), in their order."""
        meta = self.meta()
        preflight.check_data_dirs(self.data_dir, meta, cfg)
        made = {Path(p["path"]).parent: p["path"] for p in meta.places}
        out = []
        for chosen in cfg.data_dirs:
            if chosen not in made:
                place = placement.make(chosen, placement.TABLESPACE_SUBDIR, as_server.server_user(meta))
                meta.places.append(place.to_dict())
                meta.write(self.layout.meta_file)
                made[chosen] = place.path
                self.notify(f"made {place.path} for a tablespace on {placement.device_of(chosen)}")
            out.append(made[chosen])
        return out

    # -- destroyed (removal.py) -------------------------------------------------------------
    def destroy_plan(self) -> DestroyPlan:
        """What destroy would remove and leave, checked before anything is touched."""
        layout = self.layout
        meta, others = self.before_destroy([layout.pgdata, layout.socket_dir, layout.log_dir])
        standbys = [(m.root, m.layout, bool(m.place)) for m in self.standbys.standbys()]
        return removal.destroy_plan(layout, meta, others, standbys)

    def destroy(self, plan: DestroyPlan, *, quiet: bool = False) -> None:
        """Remove what dbio created, and only that; restore what it changed of a directory it found."""
        self.stop(quiet=True)
        self.standbys.remove()
        removal.remove(self.layout, plan, (lambda _: None) if quiet else self.notify)


if TYPE_CHECKING:  # mypy checks it against the interface dbio asks of a managed instance, standbys included
    from dbio.engines import instance as declared

    _DECLARED: declared.WithStandbys = EmbeddedInstance(Path())
