"""The embedded PostgreSQL instance: dbio owns its initdb, configuration, start and stop."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from dbio.config import InstanceConfig
from dbio.errors import DbioError, UsageError
from dbio import trust
from dbio.instance import binaries, settings
from dbio.instance.paths import Layout, running_as_root
from dbio.instance.server_user import (SERVER_USER, ServerUser, current_user, ensure_server_user, first_blocked_dir,
                                       lookup)

META_VERSION = 1
SUPERUSER = "dbio"
START_TIMEOUT = 120  # seconds; a server recovering after a crash may need a while
OLD_SERVER_WAIT = 15.0  # seconds for a crashed server's processes to go before starting again
MAX_SOCKET_PATH = 107  # bytes: sun_path holds 108, with its terminating NUL
UNSAFE_PATH_CHARACTERS = "'\"\\,"  # break unix_socket_directories (a quoted, comma-separated list)


@dataclass
class Meta:
    """dbio-instance.json: what dbio knows about the instance (never a password: none exists)."""

    port: int
    server_user: str
    bin_dir: str
    wheel_version: str
    pg_version: str
    dbname: str
    created_at: str
    settings: dict[str, str] = field(default_factory=dict)  # as written for the current/last start
    purpose: str = "run"
    # The data directory existed before dbio made an instance in it (a mount point, say): its
    # mode then, restored by destroy, which also leaves the directory itself in place.
    preexisting_mode: int | None = None
    format_version: int = META_VERSION

    @classmethod
    def read(cls, path: Path) -> "Meta":
        damaged = "if the instance is damaged, remove its directory yourself after checking what is in it"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise DbioError(f"cannot read the instance record {path}: {exc}", damaged) from None
        if not isinstance(data, dict):
            raise DbioError(f"the instance record {path} is not a JSON object", damaged)
        data.pop("format_version", None)
        try:
            meta = cls(**data)
        except TypeError as exc:
            raise DbioError(f"the instance record {path} does not describe a dbio instance ({exc})", damaged) from None
        if not isinstance(meta.port, int) or not all(isinstance(v, str) for v in
                                                       (meta.server_user, meta.bin_dir, meta.dbname)):
            raise DbioError(f"the instance record {path} has values of the wrong type", damaged)
        return meta

    def write(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(asdict(self), indent=2) + "\n")
        tmp.replace(path)


@dataclass(frozen=True)
class Status:
    data_dir: Path
    exists: bool
    running: bool
    pid: int | None = None
    port: int | None = None
    pg_version: str | None = None
    server_user: str | None = None
    purpose: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    size_bytes: int | None = None
    log_file: Path | None = None


def _silent(_: str) -> None:
    pass


class EmbeddedInstance:
    def __init__(self, data_dir: Path, notify: Callable[[str], None] = _silent):
        self.layout = Layout(Path(data_dir))
        self.notify = notify

    # -- facts -------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        return self.layout.root

    def exists(self) -> bool:
        return self.layout.meta_file.exists()

    def meta(self) -> Meta:
        """The instance record, refused unless only trusted users could have written it."""
        if not self.exists():
            raise UsageError(f"no dbio instance in {self.data_dir}",
                             "create it with dbio instance init (or any dbio command without --dsn)")
        record = self.layout.meta_file
        problem = trust.path_problem(record)
        if problem:
            owner = "root" if running_as_root() else "you"
            raise UsageError(
                f"refusing to use the instance record {record}: {problem}, so another user could rewrite which "
                "programs dbio runs and as whom",
                f"check its contents, then make it and {self.data_dir} owned by {owner} and writable by no one else "
                f"(chown {os.geteuid()} DIR FILE; chmod 755 DIR; chmod 644 FILE), or remove the directory yourself")
        meta = Meta.read(record)
        if not running_as_root() and meta.server_user != current_user().name:
            raise UsageError(f"the instance in {self.data_dir} is run by user '{meta.server_user}', not by you",
                             "run dbio as the user who made it (root for a server run by 'dbio'), or use your own "
                             "--data-dir")
        return meta

    def conninfo(self, dbname: str | None = None) -> str:
        from psycopg.conninfo import make_conninfo

        meta = self.meta()
        # require_auth=none: the instance trusts its private socket, so a server that asks for a
        # password is not dbio's, and gets none of ours (~/.pgpass, PGPASSWORD).
        return make_conninfo(host=str(self.layout.socket_dir), port=str(meta.port), user=SUPERUSER,
                             dbname=dbname or meta.dbname, connect_timeout="10", require_auth="none")

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid (None when its lock file names no live postgres)."""
        pid = self._lock_file_pid()
        return pid if pid is not None and _is_postgres(pid) else None

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
        return Status(self.data_dir, True, pid is not None, pid, meta.port, meta.pg_version, meta.server_user,
                      meta.purpose, meta.settings, _du(self.layout.pgdata), self.layout.log_file)

    # -- lifecycle ---------------------------------------------------------------------
    def check_location(self) -> None:
        """Before creating anything: the directory must be usable by the server user."""
        root = self.data_dir
        if root.exists() and not root.is_dir():
            raise UsageError(f"--data-dir {root} is a file, not a directory", "choose a directory path")
        # a freshly made filesystem's mount point holds lost+found, which stays as it is
        if root.exists() and any(p.name != "lost+found" for p in root.iterdir()) and not self.exists():
            raise UsageError(f"--data-dir {root} is not empty and is not a dbio instance",
                             "choose an empty or new directory")
        bad = sorted({ch for ch in str(root) if ch in UNSAFE_PATH_CHARACTERS or ord(ch) < 32})
        if bad:
            raise UsageError(f"--data-dir {str(root)!r} contains {' '.join(repr(ch) for ch in bad)}, which the "
                             "server's socket and configuration settings cannot take",
                             "choose a path without quotes, backslashes, commas or control characters")
        socket_path = self.layout.socket_dir / ".s.PGSQL.65535"
        if len(os.fsencode(socket_path)) > MAX_SOCKET_PATH:
            raise UsageError(f"--data-dir {root} is too long: the server's socket {socket_path} would have "
                             f"{len(os.fsencode(socket_path))} bytes, above the {MAX_SOCKET_PATH} a unix socket path may have",
                             f"choose a directory path of at most {MAX_SOCKET_PATH - len(os.fsencode(socket_path)) + len(os.fsencode(root))} bytes")
        if _inside_other_instance(root):
            raise UsageError(f"--data-dir {root} is inside another PostgreSQL data directory",
                             "choose a directory outside any existing data directory")
        parent = _existing_ancestor(root)
        if not os.access(parent, os.W_OK | os.X_OK):
            raise UsageError(f"--data-dir {root} cannot be created: {parent} is not writable",
                             "choose a directory you can write, or fix its permissions")
        problem = trust.path_problem(root)
        if problem:
            raise UsageError(f"--data-dir {root}: {problem}, who could then replace the instance's record and "
                             "choose what dbio runs",
                             "choose a directory whose every parent is owned by root or by you and writable by no one else")
        if running_as_root():
            user = lookup(SERVER_USER)
            if user is not None:
                blocked = first_blocked_dir(root, user)
                if blocked is not None:
                    raise UsageError(
                        f"--data-dir {root} is unreachable for the server user '{SERVER_USER}': {blocked} is not searchable",
                        f"choose a directory under a searchable path (e.g. /var/lib/dbio) or chmod o+x {blocked}")
            else:
                blocked = _blocked_for_others(root)
                if blocked is not None:
                    raise UsageError(
                        f"--data-dir {root} would be unreachable for the server user '{SERVER_USER}': {blocked} is not searchable by others",
                        f"choose a directory under a searchable path (e.g. /var/lib/dbio) or chmod o+x {blocked}")

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
                             "fix that value in [instance.pg_settings] or --pg-setting (or the dbio option that sets it)")

    def init(self, cfg: InstanceConfig, *, sessions: int, dbname: str) -> None:
        if self.exists():
            raise UsageError(f"a dbio instance already exists in {self.data_dir}",
                             "use it as it is, or remove it first with dbio instance destroy")
        self.check_location()
        self.check_settings(cfg, sessions=sessions)
        needed = settings.INITDB_BYTES + settings.WAL_OVERSHOOT * (settings.WAL_SIZES_MB[-1] << 20) \
            + settings.DISK_RESERVE
        if _free_bytes(self.data_dir) < needed:
            raise UsageError(f"--data-dir {self.data_dir} has {_free_bytes(self.data_dir) >> 20} MiB free, but a new "
                             f"instance needs at least {needed >> 20} MiB (initdb, and room for its WAL)",
                             "choose a filesystem with more free space")
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
        layout = self.layout
        created_root = not layout.root.exists()
        preexisting_mode = None if created_root else stat.S_IMODE(layout.root.stat().st_mode)
        try:
            # The directory and the instance record stay ours (root's, run as root): only the server's
            # own directories belong to the server user, who can then change nothing dbio relies on.
            layout.root.mkdir(parents=True, exist_ok=True)
            os.chmod(layout.root, (preexisting_mode or 0) | 0o755)  # the server user passes through
            for d in (layout.pgdata, layout.socket_dir, layout.log_dir):
                d.mkdir(mode=0o700)
                os.chown(d, user.uid, user.gid)
                os.chmod(d, 0o700)
            self._as_server(user, [str(bins.tool("initdb")), "-D", str(layout.pgdata), "-U", SUPERUSER,
                                   "-E", "UTF8", "--locale=C", "--auth-local=trust", "--auth-host=reject",
                                   "--no-instructions"], what="initdb")
            conf = layout.pgdata / "postgresql.conf"
            trust.write_for(conf, trust.read_no_follow(conf)
                            + "\n# dbio's settings for I/O testing\ninclude_if_exists = 'dbio.conf'\n",
                            user.uid, user.gid)
            meta = Meta(port=_free_port(), server_user=user.name, bin_dir=str(bins.bin_dir),
                        wheel_version=bins.wheel_version, pg_version=bins.server_version(), dbname=dbname,
                        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        preexisting_mode=preexisting_mode)
            meta.write(layout.meta_file)
        except BaseException:
            # Nothing half-made is left behind: remove what this call created.
            if created_root:
                shutil.rmtree(layout.root, ignore_errors=True)
            else:
                for d in (layout.pgdata, layout.socket_dir, layout.log_dir, layout.meta_file):
                    shutil.rmtree(d, ignore_errors=True) if d.is_dir() else d.unlink(missing_ok=True)
                os.chmod(layout.root, preexisting_mode or 0)
            raise
        self.notify(f"created PostgreSQL {meta.pg_version} instance in {self.data_dir} (socket {layout.socket_dir}, port {meta.port})")
        self._start(settings.build_profile(cfg, port=meta.port, socket_dir=str(layout.socket_dir),
                                           sessions=1, purpose="run", wal_budget=self.wal_budget()))
        self._settle_catalogs()
        self._create_database(dbname)

    def ensure(self, cfg: InstanceConfig, *, sessions: int, purpose: str, dbname: str) -> str:
        """Create and start the instance as needed, in the profile the purpose needs; returns its conninfo.

        purpose: 'run' (as configured), 'load' (buffered I/O for a fast load), or 'any' (a running
        instance is used as it is; a stopped one starts in the run profile).
        """
        if not self.exists():
            self.init(cfg, sessions=sessions, dbname=dbname)
        else:
            self.check_settings(cfg, sessions=sessions)
        meta = self.meta()
        keep_as_is = purpose == "any"
        profile = settings.build_profile(cfg, port=meta.port, socket_dir=str(self.layout.socket_dir),
                                         sessions=sessions, purpose="run" if keep_as_is else purpose,
                                         wal_budget=self.wal_budget())
        wanted = profile.as_dict()
        if self.is_running() and keep_as_is:
            pass
        elif self.is_running():
            changed = settings.restart_needed(meta.settings, wanted)
            if changed:
                self.notify(f"restarting the embedded server for the {purpose} profile ({', '.join(changed)})")
                self.stop(quiet=True)
                self._start(profile)
        else:
            self._start(profile)
        self._create_database(dbname)
        return self.conninfo(dbname)

    def wal_budget(self) -> int:
        """Bytes the instance's WAL may occupy: the free space of its filesystem plus the WAL it has."""
        wal = self.layout.pgdata / "pg_wal"
        return _free_bytes(self.data_dir) + (_du(wal) if wal.exists() else 0)

    def wal_problem(self, cfg: InstanceConfig) -> str | None:
        """Why an update run could fill the disk with WAL (None: it cannot), before it starts."""
        chosen = dict(cfg.pg_settings).get("max_wal_size")
        budget = self.wal_budget()
        wal_mb = settings.max_wal_mb({"max_wal_size": chosen}) if chosen else settings.wal_size_for(budget)
        if wal_mb is None or settings.wal_fits(wal_mb, budget):
            return None
        return (f"the run could fill the disk: its WAL may grow to about {settings.WAL_OVERSHOOT} x max_wal_size "
                f"({wal_mb} MB) but the filesystem of {self.data_dir} can give it only {budget >> 20} MiB")

    def start(self, cfg: InstanceConfig, *, sessions: int = 1) -> None:
        self.check_settings(cfg, sessions=sessions)
        meta = self.meta()
        if self.is_running():
            self.notify(f"the embedded server is already running (pid {self.postmaster_pid()})")
            return
        self._start(settings.build_profile(cfg, port=meta.port, socket_dir=str(self.layout.socket_dir),
                                           sessions=sessions, purpose="run", wal_budget=self.wal_budget()))

    def stop(self, *, quiet: bool = False) -> bool:
        """Fast shutdown (immediate if that does not finish); False when it was not running."""
        meta = self.meta()
        if not self.is_running():
            return False
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

    def destroy_plan(self) -> "DestroyPlan":
        """What destroy would remove and leave, checked before anything is touched."""
        if not self.exists():
            raise UsageError(f"{self.data_dir} holds no dbio instance (no {self.layout.meta_file.name})",
                             "give the --data-dir of a dbio instance; dbio never deletes other directories")
        meta = self.meta()
        _user(meta)
        ours = [self.layout.pgdata, self.layout.socket_dir, self.layout.log_dir, self.layout.meta_file]
        others = sorted(p for p in self.data_dir.iterdir() if p not in ours and p.name != "dbio-instance.tmp")
        return DestroyPlan(self.data_dir, meta, _du(self.layout.pgdata), others)

    def destroy(self, plan: "DestroyPlan") -> None:
        """Remove what dbio created, and only that; restore what it changed of a directory it found."""
        if self.is_running():
            self.stop(quiet=True)
        for path in (self.layout.pgdata, self.layout.socket_dir, self.layout.log_dir):
            shutil.rmtree(path, ignore_errors=not path.exists())
        self.layout.meta_file.with_suffix(".tmp").unlink(missing_ok=True)
        self.layout.meta_file.unlink()
        if plan.meta.preexisting_mode is not None:
            os.chmod(self.data_dir, plan.meta.preexisting_mode)
            self.notify(f"removed the embedded instance from {self.data_dir}, which stays as it was before")
        elif not plan.others:
            self.data_dir.rmdir()
            self.notify(f"removed the embedded instance in {self.data_dir}")
        else:
            self.notify(f"removed the embedded instance from {self.data_dir}; kept what dbio did not create there: "
                        + ", ".join(p.name for p in plan.others))

    # -- internals ---------------------------------------------------------------------
    def _start(self, profile: settings.Profile) -> None:
        meta = self.meta()
        user = _user(meta)
        pg_ctl = _trusted_tool(meta, "pg_ctl")
        self._wait_for_crashed_server()
        bounded = profile.as_dict().get("max_wal_size")
        if profile.wal_bounded and bounded != meta.settings.get("max_wal_size"):
            self.notify(f"max_wal_size set to {bounded} so that WAL cannot fill the filesystem of {self.data_dir} "
                        f"({self.wal_budget() >> 20} MiB free for it)")
        trust.write_for(self.layout.settings_file, settings.render(profile), user.uid, user.gid)
        self._as_server(user, [pg_ctl, "-D", str(self.layout.pgdata), "-l", str(self.layout.log_file),
                               "-w", "-t", str(START_TIMEOUT), "start"], what="pg_ctl start")
        meta.settings = profile.as_dict()
        meta.purpose = profile.purpose
        meta.write(self.layout.meta_file)

    def _wait_for_crashed_server(self) -> None:
        """After the postmaster was killed, its backends take a moment to notice and exit, and its
        own process stays a zombie until its parent reaps it (in containers that can be seconds,
        or never): PostgreSQL then refuses to start ("lock file postmaster.pid already exists").
        Wait for both; a lock file whose process is only a zombie is stale and is removed, never
        one of a live server."""
        old_pid = self._lock_file_pid()
        if old_pid is None:
            return  # no lock file, or a damaged one PostgreSQL judges itself
        pid_file = self.layout.pgdata / "postmaster.pid"
        deadline = time.monotonic() + OLD_SERVER_WAIT
        while True:
            state = _process_state(old_pid)
            backends = _processes_in(self.layout.pgdata, exclude=old_pid)
            if not backends:
                if state is None:
                    return  # PostgreSQL itself sees the lock file is stale
                if state != "Z" and _is_postgres(old_pid):
                    return  # a live server: starting reports it
                if state != "Z" or time.monotonic() >= deadline:  # its pid reused, or a zombie for good
                    pid_file.unlink()
                    self.notify(f"removed the stale postmaster.pid of a crashed server (its pid {old_pid} is "
                                + ("a zombie its parent has not reaped)" if state == "Z" else "now another process)"))
                    return
            elif time.monotonic() >= deadline:
                raise DbioError(f"processes of an earlier server are still running in {self.layout.pgdata} "
                                f"(pid {', '.join(map(str, backends))})", "stop them (kill) and start again")
            time.sleep(0.2)

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
        kwargs: dict = {}
        if os.geteuid() == 0 and user.uid != 0:
            kwargs = {"user": user.uid, "group": user.gid, "extra_groups": []}
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "TZ": "UTC"}
        proc = subprocess.run(cmd, cwd=str(self.layout.root), env=env, capture_output=True, text=True, **kwargs)
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            tail = detail[-1] if detail else f"exit status {proc.returncode}"
            log_tail = _log_tail(self.layout.log_file)
            hint = f"server log {self.layout.log_file}" + (f": {log_tail}" if log_tail else "")
            raise DbioError(f"{what} failed: {tail}", hint)
        return proc.stdout


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


def _process_state(pid: int) -> str | None:
    """The state letter of a process (R, S, D, Z...), None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2]


def _is_postgres(pid: int) -> bool:
    try:
        return b"postgres" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _processes_in(directory: Path, *, exclude: int) -> list[int]:
    """Live postgres processes whose working directory is the data directory: a server's backends
    (not, say, a shell someone opened there)."""
    found = []
    directory = directory.resolve()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == exclude:
            continue
        pid = int(entry.name)
        try:
            if Path(os.readlink(entry / "cwd")) == directory and _process_state(pid) not in (None, "Z") \
                    and _is_postgres(pid):
                found.append(pid)
        except OSError:
            continue  # gone, or not ours to look at
    return found


def _user(meta: Meta) -> ServerUser:
    user = lookup(meta.server_user)
    if user is None:
        raise DbioError(f"the instance's server user '{meta.server_user}' no longer exists",
                        f"recreate it (useradd --system {meta.server_user}) or destroy the instance")
    if running_as_root() and (user.uid == 0 or user.gid == 0):
        raise UsageError(f"refusing to run the server as '{user.name}' (uid {user.uid}, gid {user.gid}): "
                         "the embedded server runs as an unprivileged user",
                         f"set server_user to '{SERVER_USER}' in the instance record, or destroy the instance")
    return user


def _trusted_tool(meta: Meta, name: str) -> str:
    """A server program, after checking that no one but root (or us) could have changed it or what it loads."""
    bin_dir = Path(meta.bin_dir)
    binaries.require_trusted(bin_dir)
    return str(bin_dir / name)


def _free_bytes(path: Path) -> int:
    """Free space for unprivileged writers (the server user) on the filesystem of path."""
    st = os.statvfs(_existing_ancestor(path))
    return st.f_bavail * st.f_frsize


def _free_port() -> int:
    # The socket lives in a private directory, so the port only has to be free for TCP,
    # should the user ever enable a loopback listener. Skip the well-known ports.
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in (5432, 3306, 5433) and port < 65000:
            return port


def _existing_ancestor(path: Path) -> Path:
    current = path.resolve()
    while not current.exists():
        current = current.parent
    return current


def _inside_other_instance(path: Path) -> bool:
    current = path.resolve()
    for candidate in [current, *current.parents]:
        if (candidate / "PG_VERSION").exists() and (candidate / "global").is_dir():
            return True
    return False


def _blocked_for_others(path: Path) -> Path | None:
    current = Path("/")
    for part in _existing_ancestor(path).parts[1:]:
        current = current / part
        if not os.stat(current).st_mode & 0o001:
            return current
    return None


def _du(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _log_tail(log_file: Path) -> str:
    try:
        lines = [ln for ln in trust.read_no_follow(log_file).splitlines() if ln.strip()]
    except OSError:
        return ""
    errors = [ln for ln in lines[-20:] if "FATAL" in ln or "ERROR" in ln or "LOG:  invalid" in ln]
    return (errors or lines[-1:] or [""])[-1].strip()

