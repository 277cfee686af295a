"""The embedded PostgreSQL instance: dbio owns its initdb, configuration, start and stop."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbio import trust
from dbio.collect.host import supports_direct_io
from dbio.engines.postgres.options import InstanceConfig
from dbio.errors import DbioError, UsageError
from dbio.filesystem import free_bytes, tree_bytes
from dbio.engines.postgres.instance import as_server, binaries, location, placement, processes, settings
from dbio.engines.postgres.instance.ports import free_port
from dbio.engines.postgres.instance.paths import Layout, running_as_root
from dbio.engines.postgres.instance.record import Meta, Status
from dbio.engines.postgres.instance.standbys import Member, Standbys, check_new as check_new_standbys
from dbio.managed import location as managed_location
from dbio.managed.location import claim_directory
from dbio.managed.instance import ManagedInstance
from dbio.managed.server_user import ServerUser, ensure_server_user, recorded_user

SUPERUSER = "dbio"
START_TIMEOUT = 120  # seconds; a server recovering after a crash may need a while


class EmbeddedInstance(ManagedInstance):
    layout_class = Layout
    record_class = Meta
    missing = ("no dbio instance in {data_dir}",
               "create it with dbio instance init (or any dbio command without --dsn)")

    @property
    def standbys(self) -> Standbys:
        return Standbys(self)

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
        pid = self._lock_file_pid()
        return pid if pid is not None and processes.is_postgres(pid) else None

    def _lock_file_pid(self) -> int | None:
        """The pid postmaster.pid names, whatever that process is now (None: no readable lock file)."""
        try:
            return int(trust.read_no_follow(self.layout.pgdata / "postmaster.pid").splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None

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
        from dbio import members as member_names

        listed = self.standbys.members()
        chosen = member_names.choose([m.name for m in listed], wanted)
        return [(m.name, m.role, self.conninfo(dbname) if m.role == "primary" else self.standbys.conninfo(m, dbname))
                for m in listed if m.name in chosen]

    # -- lifecycle ---------------------------------------------------------------------
    def check_location(self) -> None:
        """Before creating anything: the directory must be usable by the server user."""
        location.check_location(self.data_dir, is_instance=self.exists())

    def check_settings(self, cfg: InstanceConfig, *, sessions: int) -> None:
        """Every setting the server would get, judged by the server binary itself, before anything
        is created, stopped or restarted: a bad one never leaves an instance half made or down."""
        if self.exists():
            meta = self.meta()
            bins = binaries.Binaries(Path(meta.bin_dir), meta.wheel_version)
            binaries.require_trusted(bins.bin_dir)
            port, socket_dir = meta.port, str(self.layout.socket_dir)
        else:
            bins, port, socket_dir = binaries.wheel_binaries(), 5432, str(self.layout.socket_dir)
        profile = settings.build_profile(cfg, port=port, socket_dir=socket_dir, sessions=sessions, purpose="run")
        refused = bins.refused_setting(settings.as_arguments(profile))
        if refused:
            raise UsageError(f"the server refuses the instance settings: {refused}",
                             "fix that value in [instance.pg_settings] or --pg-setting (or the dbio option that "
                             "sets it)")

    def init(self, cfg: InstanceConfig, *, sessions: int, dbname: str) -> None:
        self._check_new(cfg, sessions)
        user, bins = self._server_user_and_binaries(cfg)
        meta = self._create(user, bins, dbname, cfg.wal_dir)
        socket_dir = self.layout.socket_dir
        self.notify(f"created PostgreSQL {meta.pg_version} instance in {self.data_dir} (socket {socket_dir}, "
                    f"port {meta.port})")
        if meta.wal_dir:
            shared = " (the same device as the data)" if placement.same_device(Path(meta.wal_dir),
                                                                               self.data_dir) else ""
            self.notify(f"its WAL lives in {meta.wal_dir} on {placement.device_of(Path(meta.wal_dir))}{shared}")
        self._start(settings.build_profile(cfg, port=meta.port, socket_dir=str(socket_dir), sessions=1,
                                           purpose="run", wal_budget=self.wal_budget(), standbys=cfg.standbys))
        self._settle_catalogs()
        self._create_database(dbname)
        if cfg.standbys:
            self._make_standbys(cfg, user)

    def _make_standbys(self, cfg: InstanceConfig, user: ServerUser) -> None:
        """The standbys of a new instance; when one cannot be made, nothing of the instance is left."""
        try:
            self.standbys.create(cfg, user)
        except BaseException:
            self.destroy(self.destroy_plan(), quiet=True)
            raise

    def _check_new(self, cfg: InstanceConfig, sessions: int) -> None:
        """Everything a new instance needs, checked before anything is created."""
        if self.exists():
            raise UsageError(f"a dbio instance already exists in {self.data_dir}",
                             "use it as it is, or remove it first with dbio instance destroy")
        self.check_location()
        self.check_settings(cfg, sessions=sessions)
        wal_room = settings.WAL_OVERSHOOT * (settings.WAL_SIZES_MB[-1] << 20)
        needed = settings.INITDB_BYTES + settings.DISK_RESERVE + (0 if cfg.wal_dir else wal_room)
        if cfg.wal_dir is not None:
            placement.check(cfg.wal_dir, data_dir=self.data_dir, option="wal_dir", subdir=placement.WAL_SUBDIR,
                            needed_bytes=wal_room + settings.DISK_RESERVE)
        self._check_data_dirs(cfg)
        check_new_standbys(self.data_dir, cfg)
        needed += sum(settings.INITDB_BYTES for k in range(cfg.standbys) if k >= len(cfg.standby_data_dir))
        if free_bytes(self.data_dir) < needed:
            raise UsageError(f"--data-dir {self.data_dir} has {free_bytes(self.data_dir) >> 20} MiB free, but a new "
                             f"instance needs at least {needed >> 20} MiB (initdb, and room for its WAL)",
                             "choose a filesystem with more free space")

    def _check_data_dirs(self, cfg: InstanceConfig) -> None:
        """The tablespace directories not yet made, checked before anything is made."""
        made = {Path(p["path"]).parent for p in self.meta().places} if self.exists() else set()
        for chosen in cfg.data_dirs:
            if chosen not in made:
                placement.check(chosen, data_dir=self.data_dir, option="data_dirs", subdir=placement.TABLESPACE_SUBDIR,
                                needed_bytes=settings.DISK_RESERVE)

    def _check_same_wal(self, cfg: InstanceConfig) -> None:
        """initdb fixed where the WAL lives: another wal_dir needs another instance."""
        if cfg.wal_dir is None:
            return  # the instance's WAL stays where it is
        meta = self.meta()
        if meta.wal_dir is None or Path(meta.wal_dir).parent != cfg.wal_dir:  # the record names dbio's subdirectory
            where = f"in {Path(meta.wal_dir).parent}" if meta.wal_dir else "inside its data directory"
            raise UsageError(f"the instance in {self.data_dir} keeps its WAL {where}, not in wal_dir = {cfg.wal_dir}: "
                             "the WAL's place is fixed when an instance is created",
                             "use another --data-dir for that layout (a new instance), or destroy this one first")

    def move_wal(self, cfg: InstanceConfig) -> bool:
        """A sweep over wal_dir: the WAL moved to cfg.wal_dir (None: the data directory), the server
        stopped for it (the next command starts it); False when it is already there."""
        from dbio.engines.postgres.instance import relocate

        moved = relocate.move_wal(self, _user(self.meta()), cfg.wal_dir)
        if moved:
            where = self.meta().wal_dir or f"{self.layout.pgdata / 'pg_wal'} (inside the data directory)"
            self.notify(f"moved the WAL to {where} on {placement.device_of(Path(where.split(' (')[0]))}")
        return moved

    def check_layout(self, cfg: InstanceConfig) -> None:
        """A sweep's layouts, each checked before the sweep starts: its WAL place and its tablespace directories."""
        from dbio.engines.postgres.instance import relocate

        if self.exists():
            relocate.check(self, cfg.wal_dir)
            self._check_data_dirs(cfg)

    def run_as_server(self, user: ServerUser, cmd: list[str], *, what: str) -> str:
        return self._as_server(user, cmd, what=what)

    def tablespace_dirs(self, cfg: InstanceConfig) -> list[str]:
        """The server's own directory in each of data_dirs (made now if missing), in their order."""
        self._check_data_dirs(cfg)
        meta = self.meta()
        made = {Path(p["path"]).parent: p["path"] for p in meta.places}
        out = []
        for chosen in cfg.data_dirs:
            if chosen not in made:
                place = placement.make(chosen, placement.TABLESPACE_SUBDIR, _user(meta))
                meta.places.append(place.to_dict())
                meta.write(self.layout.meta_file)
                made[chosen] = place.path
                self.notify(f"made {place.path} for a tablespace on {placement.device_of(chosen)}")
            out.append(made[chosen])
        return out

    def _server_user_and_binaries(self, cfg: InstanceConfig) -> tuple[ServerUser, binaries.Binaries]:
        user = ensure_server_user()
        if user.created:
            self.notify(f"running as root: PostgreSQL refuses to run as root, so created the system user "
                        f"'{user.name}' to run the embedded server")
        elif running_as_root():
            self.notify(f"running as root: the embedded server runs as the unprivileged system user '{user.name}'")
        bins = binaries.locate(user)
        if bins.copied:
            self.notify(f"server binaries placed in {bins.bin_dir.parent} where '{user.name}' can execute them")
        if cfg.io_method not in bins.io_methods():
            raise UsageError(f"io_method = {cfg.io_method} is not available in this PostgreSQL build",
                             f"use one of {', '.join(bins.io_methods())}")
        return user, bins

    def _create(self, user: ServerUser, bins: binaries.Binaries, dbname: str, wal_dir: Path | None) -> Meta:
        """initdb into a directory claimed for the instance; nothing half-made is left on failure."""
        layout = self.layout
        wal_place: placement.Place | None = None
        preexisting_mode = claim_directory(layout.root)
        created_root = preexisting_mode is None
        try:
            # The directory and the instance record stay ours (root's, run as root): only the server's
            # own directories belong to the server user, who can then change nothing dbio relies on.
            os.chmod(layout.root, (preexisting_mode or 0) | 0o755)  # the server user passes through
            for d in (layout.pgdata, layout.socket_dir, layout.log_dir):
                d.mkdir(mode=0o700)
                os.chown(d, user.uid, user.gid)
                os.chmod(d, 0o700)
            if wal_dir is not None:
                wal_place = placement.make(wal_dir, placement.WAL_SUBDIR, user)
            self._as_server(user, [str(bins.tool("initdb")), "-D", str(layout.pgdata), "-U", SUPERUSER,
                                   "-E", "UTF8", "--locale=C", "--auth-local=trust", "--auth-host=reject",
                                   "--no-instructions", *(["--waldir", wal_place.path] if wal_place else [])],
                            what="initdb")
            conf = layout.pgdata / "postgresql.conf"
            trust.write_for(conf, trust.read_no_follow(conf)
                            + "\n# dbio's settings for I/O testing\ninclude_if_exists = 'dbio.conf'\n",
                            user.uid, user.gid)
            meta = Meta(port=free_port(), server_user=user.name, bin_dir=str(bins.bin_dir),
                        wheel_version=bins.wheel_version, pg_version=bins.server_version(), dbname=dbname,
                        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        preexisting_mode=preexisting_mode, places=[wal_place.to_dict()] if wal_place else [],
                        wal_dir=wal_place.path if wal_place else None)
            meta.members = [Member("primary", "primary", layout.root, meta.port).to_dict()]
            meta.write(layout.meta_file)
        except BaseException:
            if wal_place is not None:
                placement.remove(wal_place.to_dict())
            # Nothing half-made is left behind: remove what this call created.
            if created_root:
                shutil.rmtree(layout.root, ignore_errors=True)
            else:
                for d in (layout.pgdata, layout.socket_dir, layout.log_dir, layout.meta_file):
                    shutil.rmtree(d, ignore_errors=True) if d.is_dir() else d.unlink(missing_ok=True)
                os.chmod(layout.root, preexisting_mode or 0)
            raise
        return meta

    def ensure(self, cfg: InstanceConfig, *, sessions: int, purpose: str, dbname: str,
               parallel_workers: int = 0) -> str:
        """Create and start the instance as needed, in the profile the purpose needs; returns its conninfo.

        purpose: 'run' (as configured), 'load' (buffered I/O for a fast load), or 'any' (a running
        instance is used as it is; a stopped one starts in the run profile). parallel_workers: the
        parallel query workers the run's scans may use at once (its worker limits are raised for them).
        """
        if not self.exists():
            self.init(cfg, sessions=sessions, dbname=dbname)
        else:
            self._check_same_wal(cfg)
            self._check_data_dirs(cfg)
            self.check_settings(cfg, sessions=sessions)
        meta = self.meta()
        keep_as_is = purpose == "any"
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
        self._create_database(dbname)
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

    def wal_location(self) -> Path:
        """Where the WAL is written: wal_dir's subdirectory, or the data directory."""
        wal_dir = self.meta().wal_dir if self.exists() else None
        return Path(wal_dir) if wal_dir else self.data_dir

    def wal_budget(self) -> int:
        """Bytes the instance's WAL may occupy: the free space of its filesystem plus the WAL it has."""
        wal_dir = self.meta().wal_dir if self.exists() else None
        if wal_dir is not None:  # initdb --waldir: pg_wal is a link to it, on its own filesystem
            wal = Path(wal_dir)
            return free_bytes(wal) + (tree_bytes(wal) if wal.is_dir() and not wal.is_symlink() else 0)
        wal = self.layout.pgdata / "pg_wal"
        # the server user may turn pg_wal into a link: then its files are not counted as room
        return free_bytes(self.data_dir) + (tree_bytes(wal) if wal.is_dir() and not wal.is_symlink() else 0)

    def check_redo_room(self, cfg: InstanceConfig) -> None:
        """Before an update run: refuses one that could fill the disk with WAL."""
        chosen = dict(cfg.pg_settings).get("max_wal_size")
        budget = self.wal_budget()
        wal_mb = settings.max_wal_mb({"max_wal_size": chosen}) if chosen else settings.wal_size_for(budget)
        if wal_mb is None or settings.wal_fits(wal_mb, budget):
            return
        raise UsageError(f"the run could fill the disk: its WAL may grow to about {settings.WAL_OVERSHOOT} x "
                         f"max_wal_size ({wal_mb} MB), with {settings.DISK_RESERVE >> 20} MiB kept free besides, but "
                         f"the filesystem of {self.wal_location()} can give it only {budget >> 20} MiB",
                         settings.wal_room_fix(wal_mb, budget))

    def check_host(self, cfg: InstanceConfig, memory_bytes: int) -> None:
        """Before a setup creates or starts the instance: its filesystem takes direct I/O when asked,
        and its buffer cache leaves the host some memory."""
        if cfg.direct_io and not supports_direct_io(cfg.data_dir):
            raise UsageError(f"the filesystem of --data-dir {cfg.data_dir} does not support direct I/O (O_DIRECT)",
                             "choose a directory on a filesystem that does, or pass --no-direct-io (and read the "
                             "report's page-cache warning)")
        problem = settings.memory_problem(cfg, memory_bytes)
        if problem:
            raise UsageError(problem, "lower shared_buffers")

    def start(self, cfg: InstanceConfig, *, sessions: int = 1) -> None:
        self._check_same_wal(cfg)
        self.check_settings(cfg, sessions=sessions)
        meta = self.meta()
        if self.is_running():
            self.notify(f"the embedded server is already running (pid {self.postmaster_pid()})")
        else:
            self._start(settings.build_profile(cfg, port=meta.port, socket_dir=str(self.layout.socket_dir),
                                               sessions=sessions, purpose="run", wal_budget=self.wal_budget(),
                                               standbys=self.standby_count()))
        self._run_standbys()

    def stop(self, *, quiet: bool = False) -> bool:
        """Fast shutdown (immediate if that does not finish), the standbys first; False when none was running."""
        meta = self.meta()
        stopped = self.standbys.stop_all() if self.standby_count() else []
        if stopped and not quiet:
            self.notify(f"stopped the standbys ({', '.join(stopped)})")
        if not self.is_running():
            return bool(stopped)
        user = _user(meta)
        pg_ctl = _trusted_tool(meta, "pg_ctl")
        try:
            self._as_server(user, [pg_ctl, "-D", str(self.layout.pgdata), "-m", "fast", "-w", "-t", "60", "stop"],
                            what="pg_ctl stop")
        except DbioError:
            self._as_server(user, [pg_ctl, "-D", str(self.layout.pgdata), "-m", "immediate", "-w", "-t", "30", "stop"],
                            what="pg_ctl stop -m immediate")
        if not quiet:
            self.notify("stopped the embedded server")
        return True

    def crash(self) -> None:
        """Stop the server as a crash would (pg_ctl stop -m immediate): no shutdown checkpoint, so the
        next start replays the WAL written since the last one (dbio ops recovery)."""
        meta = self.meta()
        self._as_server(_user(meta), [_trusted_tool(meta, "pg_ctl"), "-D", str(self.layout.pgdata), "-m", "immediate",
                                      "-w", "-t", "60", "stop"], what="pg_ctl stop -m immediate")

    def start_checked(self, cfg: InstanceConfig, *, sessions: int) -> None:
        """Start the stopped server with cfg's settings, judged before: only the start itself is left,
        which dbio ops recovery times."""
        meta = self.meta()
        self._start(settings.build_profile(cfg, port=meta.port, socket_dir=str(self.layout.socket_dir),
                                           sessions=sessions, purpose="run", wal_budget=self.wal_budget(),
                                           standbys=self.standby_count()))

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
        return _trusted_tool(self.meta(), name)

    def destroy_plan(self) -> "DestroyPlan":
        """What destroy would remove and leave, checked before anything is touched."""
        meta, others = self.before_destroy([self.layout.pgdata, self.layout.socket_dir, self.layout.log_dir])
        inside = [m.root for m in self.standbys.standbys() if not m.place]  # made inside: removed with it
        size = tree_bytes(self.layout.pgdata) + sum(tree_bytes(m.layout.pgdata) for m in self.standbys.standbys())
        return DestroyPlan(self.data_dir, meta, size, [p for p in others if p not in inside])

    def destroy(self, plan: "DestroyPlan", *, quiet: bool = False) -> None:
        """Remove what dbio created, and only that; restore what it changed of a directory it found."""
        notify = (lambda _: None) if quiet else self.notify
        self.stop(quiet=True)
        self.standbys.remove()
        for path in (self.layout.pgdata, self.layout.socket_dir, self.layout.log_dir):
            shutil.rmtree(path, ignore_errors=not path.exists())
        for place in plan.meta.places:  # the WAL's and the tablespaces' directories dbio made
            placement.remove(place)
        managed_location.give_back(self.data_dir, self.layout.meta_file, plan.meta.preexisting_mode, plan.others,
                                   "embedded instance", notify)

    # -- what the standbys ask of their primary ------------------------------------------
    def server_user(self) -> ServerUser:
        return _user(self.meta())

    def trusted_tool(self, name: str) -> str:
        return _trusted_tool(self.meta(), name)

    def query_one(self, name: str) -> Any:
        """The first value of a script of the engine's sql/ run on the primary."""
        rows = self.query_all(name)
        return rows[0][0] if rows else None

    def query_all(self, name: str) -> list[tuple]:
        import psycopg

        from dbio.engines.postgres import sqlfiles

        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as conn:
            return conn.execute(sqlfiles.text(name)).fetchall()

    def run_sql(self, name: str, each: list[dict[str, Any]]) -> None:
        """A script of the engine's sql/ run on the primary once with each set of parameters."""
        import psycopg

        from dbio.engines.postgres import sqlfiles

        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as conn:
            for params in each:
                conn.execute(sqlfiles.text(name), params)

    # -- internals ---------------------------------------------------------------------
    def _start(self, profile: settings.Profile) -> None:
        meta = self.meta()
        user = _user(meta)
        pg_ctl = _trusted_tool(meta, "pg_ctl")
        processes.wait_for_crashed_server(self.layout.pgdata, self._lock_file_pid(), self.notify)
        bounded = profile.as_dict().get("max_wal_size")
        if profile.wal_bounded and bounded != meta.settings.get("max_wal_size"):
            self.notify(f"max_wal_size set to {bounded} so that WAL cannot fill the filesystem of "
                        f"{self.wal_location()} "
                        f"({self.wal_budget() >> 20} MiB free for it)")
        trust.write_for(self.layout.settings_file, settings.render(profile), user.uid, user.gid)
        self._as_server(user, [pg_ctl, "-D", str(self.layout.pgdata), "-l", str(self.layout.log_file),
                               "-w", "-t", str(START_TIMEOUT), "start"], what="pg_ctl start")
        meta.settings = profile.as_dict()
        meta.purpose = profile.purpose
        meta.write(self.layout.meta_file)

    def _settle_catalogs(self) -> None:
        """initdb leaves the catalogs of template1 and postgres never analysed, and autovacuum
        gets to them a minute later, in the first measured window. Do it now (about a second);
        databases created from template1 afterwards inherit the result."""
        import psycopg

        for dbname in ("template1", "postgres"):
            with psycopg.connect(self.conninfo(dbname), autocommit=True) as conn:
                conn.execute("VACUUM (FREEZE, ANALYZE)")
            # Analysing the tables after pg_statistic's turn left dead rows in it, which a second
            # VACUUM only removes from a new session (ANALYZE never touches pg_statistic itself).
            with psycopg.connect(self.conninfo(dbname), autocommit=True) as conn:
                conn.execute("VACUUM (FREEZE) pg_catalog.pg_statistic")
                # publish the counters now, not when the backend exits after we have moved on
                conn.execute("SELECT pg_stat_force_next_flush()")
                conn.execute("SELECT 1")

    def _create_database(self, dbname: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))

    def _as_server(self, user: ServerUser, cmd: list[str], *, what: str) -> str:
        return as_server.run(user, cmd, cwd=self.layout.root, log_file=self.layout.log_file, what=what)


@dataclass(frozen=True)
class DestroyPlan:
    data_dir: Path
    meta: Meta
    size_bytes: int
    others: list[Path]  # entries dbio did not create, left in place

    def leftovers(self) -> list[str]:
        """What destroy leaves on the machine on purpose, with how to remove it."""
        notes = []
        bin_dir = Path(self.meta.bin_dir)
        if bin_dir.is_relative_to(binaries.SYSTEM_BASE):
            copy = bin_dir.parents[2]
            notes.append(f"the server binaries copied to {copy} (other instances may use them): rm -r {copy}")
        if running_as_root():
            notes.append(f"the system user '{self.meta.server_user}' (other instances may use it): "
                         f"userdel {self.meta.server_user}")
        return notes


def _user(meta: Meta) -> ServerUser:
    return recorded_user(meta.server_user)


def _trusted_tool(meta: Meta, name: str) -> str:
    """A server program, after checking that no one but root (or us) could have changed it or what it loads."""
    bin_dir = Path(meta.bin_dir)
    binaries.require_trusted(bin_dir)
    return str(bin_dir / name)


if TYPE_CHECKING:  # mypy checks it against the interface dbio asks of a managed instance, standbys included
    from dbio.engines import instance as declared

    _DECLARED: declared.WithStandbys = EmbeddedInstance(Path())
