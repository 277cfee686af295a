"""The managed MariaDB/MySQL instance: dbio creates, starts, stops and removes it.

As root, the server runs as the unprivileged system user 'dbio' (as the embedded PostgreSQL does):
the directory and the record stay root's; the server user owns only its data, socket and log
directories; the programs and every directory on their way are checked before each start."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from dbio.collect.host import supports_direct_io
from dbio.engines.mysql.instance import binaries, galera, galera_config, process, settings
from dbio.engines.mysql.instance.layout import Layout
from dbio.engines.mysql.instance.record import Meta, Status
from dbio.engines.mysql.engine_options import PAGE_SIZES, InstanceConfig
from dbio.errors import DbioError, NoDatabase, UsageError
from dbio.filesystem import free_bytes, tree_bytes
from dbio.managed import location
from dbio.managed.paths import running_as_root
from dbio.managed.instance import ManagedInstance
from dbio.managed.server_user import ServerUser, current_user, ensure_server_user, recorded_user

START_TIMEOUT = 120.0  # seconds; crash recovery of a large redo log may take a while
STOP_TIMEOUT = 120.0
NEW_INSTANCE_BYTES = 256 << 20  # system tables, ibdata1, the redo log and the temporary tablespace


class MysqlInstance(ManagedInstance):
    layout_class = Layout
    record_class = Meta
    missing = ("no dbio MySQL instance in {data_dir}",
               "create it with dbio instance init --engine mysql (or dbio setup --engine mysql)")

    def meta(self) -> Meta:
        return super().meta()

    def conninfo(self, dbname: str | None = None) -> str:
        """auth=socket: the server knows dbio's user by the socket's peer, so no password of the
        user's (MYSQL_PWD, ~/.my.cnf) is ever sent to it. A Galera cluster's is its first node's."""
        cluster = self.cluster()
        if cluster is not None:
            return cluster.conninfo(cluster.members[0], dbname or self.meta().dbname)
        return self.conninfo_at(self.layout.socket, dbname)

    def conninfo_at(self, socket: Path, dbname: str | None = None) -> str:
        meta = self.meta()
        return (f"mysql://{quote(meta.client_user, safe='')}@localhost/{quote(dbname or meta.dbname, safe='')}"
                f"?unix_socket={quote(str(socket), safe='/')}&auth=socket")

    def cluster(self) -> galera.Cluster | None:
        """Its Galera nodes, when it was made as a cluster (--galera N); None: a single server."""
        meta = self.meta()
        if not meta.members:
            return None
        try:
            members = [galera_config.Member.from_dict(m) for m in meta.members]
        except ValueError as exc:
            raise DbioError(f"the instance record in {self.data_dir} lists a Galera node it does not describe ({exc})",
                            "if the instance is damaged, destroy it (dbio instance destroy) and make it again"
                            ) from None
        return galera.Cluster(self.data_dir, members, self.conninfo_at, self.notify)

    def pid(self) -> int | None:
        cluster = self.cluster()
        if cluster is not None:
            return cluster.pid(cluster.members[0])
        return process.pid_of(self.layout)

    def is_running(self) -> bool:
        """Running as made: a cluster's every node (one lost is started again by the next command)."""
        cluster = self.cluster()
        if cluster is not None:
            return all(cluster.pid(m) is not None for m in cluster.members)
        return self.pid() is not None

    # -- a Galera cluster's nodes as the nodes of a run (engines/instance.WithStandbys) -----------------
    @property
    def standbys(self) -> "Synced":
        return Synced(self)

    def standby_count(self) -> int:
        """The nodes besides the first: a run then uses every node (target.members)."""
        cluster = self.cluster() if self.exists() else None
        return len(cluster.members) - 1 if cluster is not None else 0

    def nodes(self, dbname: str, wanted: str | None) -> list[tuple[str, str, str]]:
        """(name, role, connection string) of each node, or of those --nodes names: every one a writer."""
        from dbio import cluster_members

        cluster = self.cluster()
        if cluster is None:
            raise UsageError(f"--nodes {wanted}: the managed instance in {self.data_dir} is a single server",
                             "remove --nodes, or make the instance as a cluster (dbio instance init --galera 3)")
        by_name = {m.name: m for m in cluster.members}
        chosen = cluster_members.choose(list(by_name), wanted)
        return [(name, "primary", cluster.conninfo(by_name[name], dbname)) for name in chosen]

    def status(self) -> Status:
        if not self.exists():
            return Status(self.data_dir, exists=False, running=False)
        meta = self.meta()
        pid = self.pid()
        cluster = self.cluster()
        if cluster is not None:
            first = cluster.layout(cluster.members[0])
            return Status(self.data_dir, True, self.is_running(), pid, meta.version, meta.server_user, meta.settings,
                          sum(tree_bytes(cluster.layout(m).datadir) for m in cluster.members), first.log_file,
                          first.socket, wal_dir=first.datadir, members=cluster.status())
        return Status(self.data_dir, True, pid is not None, pid, meta.version, meta.server_user, meta.settings,
                      tree_bytes(self.layout.datadir), self.layout.log_file, self.layout.socket,
                      wal_dir=self.layout.datadir)

    # -- checks before anything is made ------------------------------------------------
    def check_location(self) -> None:
        """Before a new instance is made: the server's programs first (the package to install), then its place."""
        if not self.exists():
            binaries.locate()
        location.check_location(self.data_dir, is_instance=self.exists(), socket_path=self.layout.socket,
                                inside_other=_inside_other)

    def _check_node_places(self, cfg: InstanceConfig) -> list[tuple[str, Path, str | None]]:
        """Before a cluster is made: Galera's programs, and a place for each node that dbio may own."""
        galera.require_galera()
        planned = galera_config.planned(self.data_dir, cfg.galera, cfg.galera_data_dir)
        for _, root, place in planned:
            if place is not None:
                if not Path(place).is_dir():
                    raise UsageError(f"--galera-data-dir {place} is not a directory", "create it first (a mount "
                                     "point, say), or leave it out")
                location.check_location(root, is_instance=False, socket_path=Layout(root).socket,
                                        inside_other=_inside_other)
                if root.exists():
                    raise UsageError(f"{root} is already there", "remove it, or choose another --galera-data-dir")
        return planned

    def check_host(self, cfg: InstanceConfig, memory_bytes: int) -> None:
        """Its filesystem takes O_DIRECT (a buffer-pool miss must be a device read), and its buffer
        pool leaves the host some memory."""
        if not supports_direct_io(cfg.data_dir):
            raise UsageError(f"the filesystem of --data-dir {cfg.data_dir} does not support direct I/O (O_DIRECT), "
                             "which the managed instance's innodb_flush_method needs",
                             "choose a directory on a filesystem that does (not tmpfs)")
        if memory_bytes and cfg.buffer_pool > memory_bytes // 2:
            raise UsageError(f"buffer_pool {cfg.buffer_pool >> 20} MiB is more than half of this host's "
                             f"{memory_bytes >> 20} MiB of memory", "lower buffer_pool (--buffer-pool 128MiB)")

    def check_redo_room(self, cfg: InstanceConfig) -> None:
        return None  # InnoDB's redo log has a fixed size (innodb_log_file_size): updates cannot grow it

    def _check_page_size(self, cfg: InstanceConfig, meta: Meta) -> None:
        if cfg.innodb_page_size is not None and PAGE_SIZES[cfg.innodb_page_size] != meta.page_size:
            raise UsageError(f"the instance in {self.data_dir} has {meta.page_size // 1024} KiB pages, not "
                             f"innodb_page_size = {cfg.innodb_page_size}: the page size is fixed when an instance "
                             "is created", "leave innodb_page_size out, use another --data-dir, or destroy this "
                                           "instance first")

    # -- lifecycle ---------------------------------------------------------------------
    def init(self, cfg: InstanceConfig, *, sessions: int, dbname: str) -> None:
        if self.exists():
            raise UsageError(f"a dbio instance already exists in {self.data_dir}",
                             "use it as it is, or remove it first with dbio instance destroy --engine mysql")
        bins = binaries.locate()  # before anything is made: missing binaries name their package
        self.check_location()
        self.check_host(cfg, 0)  # O_DIRECT on its filesystem (setup checks the memory too)
        if free_bytes(self.data_dir) < NEW_INSTANCE_BYTES:
            raise UsageError(f"--data-dir {self.data_dir} has {free_bytes(self.data_dir) >> 20} MiB free, but a new "
                             f"instance needs at least {NEW_INSTANCE_BYTES >> 20} MiB", "choose a filesystem with "
                                                                                       "more free space")
        planned = self._check_node_places(cfg) if cfg.galera else []
        user = ensure_server_user()
        if running_as_root():
            self.notify(f"running as root: the managed server runs as the unprivileged system user '{user.name}'")
        if planned:
            meta = self._create_cluster(user, bins, cfg, dbname, planned)
            self.notify(f"created a {meta.version} Galera cluster of {len(meta.members)} nodes in {self.data_dir} "
                        f"(sockets only, Galera and state transfers on 127.0.0.1, {meta.page_size // 1024} KiB pages)")
        else:
            meta = self._create(user, bins, cfg, dbname)
            self.notify(f"created {meta.version} instance in {self.data_dir} (socket {self.layout.socket}, no TCP "
                        f"listener, {meta.page_size // 1024} KiB pages)")
        self._start(settings.profile(cfg, meta.page_size, sessions=sessions))
        self._create_database(dbname)

    def _create(self, user: ServerUser, bins: binaries.Binaries, cfg: InstanceConfig, dbname: str) -> Meta:
        """The system tables in a directory claimed for the instance; nothing half-made is left on failure."""
        layout = self.layout
        preexisting_mode = location.claim_directory(layout.root)
        page_size = PAGE_SIZES[cfg.innodb_page_size or "16k"]
        client = "root" if running_as_root() or not bins.is_mariadb else current_user().name
        try:
            os.chmod(layout.root, (preexisting_mode or 0) | 0o755)  # the server user passes through
            for d in layout.owned_by_server():
                d.mkdir(mode=0o700)
                os.chown(d, user.uid, user.gid)
                os.chmod(d, 0o700)
            self._initialize(user, bins, page_size, client)
            meta = Meta(server_user=user.name, server=str(bins.server), version=_product(bins.version),
                        page_size=page_size, dbname=dbname, client_user=client,
                        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        preexisting_mode=preexisting_mode)
            meta.write(layout.meta_file)
        except BaseException:
            if preexisting_mode is None:
                shutil.rmtree(layout.root, ignore_errors=True)
            else:
                for d in layout.owned_by_server():
                    shutil.rmtree(d, ignore_errors=True)
                layout.meta_file.unlink(missing_ok=True)
                os.chmod(layout.root, preexisting_mode)
            raise
        return meta

    def _create_cluster(self, user: ServerUser, bins: binaries.Binaries, cfg: InstanceConfig, dbname: str,
                        planned: list[tuple[str, Path, str | None]]) -> Meta:
        """Each node's directory and system tables (a joiner's are replaced by its first state transfer),
        its ports chosen free on loopback and recorded; nothing half-made is left on failure."""
        if not bins.is_mariadb:
            raise UsageError(f"a Galera cluster needs MariaDB's server, and {bins.server} is {bins.version}",
                             "install mariadb-server and galera-4")
        layout = self.layout
        preexisting_mode = location.claim_directory(layout.root)
        page_size = PAGE_SIZES[cfg.innodb_page_size or "16k"]
        client = "root" if running_as_root() else current_user().name
        ports = galera_config.assign_ports(len(planned), galera.free_ports(3 * len(planned), set()))
        members = [galera_config.Member(name, root, *node_ports, place=place)
                   for (name, root, place), node_ports in zip(planned, ports)]
        cluster = galera.Cluster(self.data_dir, members, self.conninfo_at, self.notify)
        try:
            os.chmod(layout.root, (preexisting_mode or 0) | 0o755)  # the server user passes through
            cluster.make_directories(user)
            for member in members:
                self._initialize(user, bins, page_size, client, cluster.layout(member))
            meta = Meta(server_user=user.name, server=str(bins.server), version=_product(bins.version),
                        page_size=page_size, dbname=dbname, client_user=client,
                        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        preexisting_mode=preexisting_mode, members=[m.to_dict() for m in members],
                        cluster_name=f"dbio-{os.getpid()}-{int(time.time())}")
            meta.write(layout.meta_file)
        except BaseException:
            cluster.remove_directories()
            if preexisting_mode is None:
                shutil.rmtree(layout.root, ignore_errors=True)
            else:
                for member in members:
                    galera.option_file_path(layout.root, member).unlink(missing_ok=True)
                layout.meta_file.unlink(missing_ok=True)
                os.chmod(layout.root, preexisting_mode)
            raise
        return meta

    def _initialize(self, user: ServerUser, bins: binaries.Binaries, page_size: int, client: str,
                    layout: Layout | None = None) -> None:
        """MariaDB: mariadb-install-db, root (and, run by another user, that user) known by the socket's
        peer; MySQL: mysqld --initialize-insecure (root without a password, on a private socket)."""
        layout = layout or self.layout
        datadir = f"--datadir={layout.datadir}"
        if bins.installer is not None and bins.is_mariadb:
            cmd = [str(bins.installer), "--no-defaults", datadir, "--auth-root-authentication-method=socket",
                   "--skip-test-db", "--skip-name-resolve", f"--innodb-page-size={page_size}"]
            if client != "root":
                cmd.append(f"--auth-root-socket-user={client}")
        else:
            cmd = [str(bins.server), "--no-defaults", "--initialize-insecure", datadir,
                   f"--innodb-page-size={page_size}", f"--log-error={layout.log_file}"]
        done = process.run(cmd, user, layout.root)
        if done.returncode != 0:
            raise DbioError(f"{Path(cmd[0]).name} failed: {why_failed(done.stderr or done.stdout, done.returncode)}",
                            f"see {layout.log_file}")

    def ensure(self, cfg: InstanceConfig, *, sessions: int, purpose: str, dbname: str) -> str:
        """Create and start the instance as needed; returns its connection string. purpose 'any': a
        running server is used as it is; 'look': so too, and nothing is created (NoDatabase when the
        instance or the database is not there); otherwise it restarts when its settings differ."""
        look = purpose == "look"
        if not self.exists() and look:
            raise NoDatabase(f"no dbio instance in {self.data_dir}")
        if not self.exists():
            self.init(cfg, sessions=sessions, dbname=dbname)
        meta = self.meta()
        self._check_page_size(cfg, meta)
        wanted = settings.profile(cfg, meta.page_size, sessions=sessions)
        if not self.is_running():
            self._start(wanted)
        elif purpose not in ("any", "look"):
            changed = settings.restart_needed(meta.settings, wanted)
            if changed:
                self.notify("restarting the managed server for " + ", ".join(f"{k} = {wanted[k]}" for k in changed))
                self.stop(quiet=True)
                self._start(wanted)
        self._create_database(dbname, look=look)
        return self.conninfo(dbname)

    def start(self, cfg: InstanceConfig, *, sessions: int = 1) -> None:
        meta = self.meta()
        self._check_page_size(cfg, meta)
        if self.is_running():
            self.notify(f"the managed server is already running (pid {self.pid()})")
            return
        self._start(settings.profile(cfg, meta.page_size, sessions=sessions))

    def stop(self, *, quiet: bool = False) -> bool:
        """A clean InnoDB shutdown (SIGTERM), killed if it does not end in time; False when it was not running."""
        self.meta()
        cluster = self.cluster()
        if cluster is not None:
            stopped = cluster.stop(STOP_TIMEOUT)
            if stopped and not quiet:
                self.notify(f"stopped the {len(cluster.members)} Galera nodes")
            return stopped
        pid = self.pid()
        if pid is None:
            return False
        if not process.stop(pid, self.layout, STOP_TIMEOUT):
            raise DbioError(f"the managed server (pid {pid}) did not stop", f"see {self.layout.log_file}")
        if not quiet:
            self.notify("stopped the managed server")
        return True

    def destroy_plan(self) -> "DestroyPlan":
        cluster = self.cluster() if self.exists() else None
        if cluster is None:
            meta, others = self.before_destroy(list(self.layout.owned_by_server()))
            return DestroyPlan(self.data_dir, meta, tree_bytes(self.layout.datadir), others)
        inside = [m.root for m in cluster.members if m.place is None]
        inside.append(galera_config.tls_files(self.data_dir).directory)
        files = [galera.option_file_path(self.data_dir, m) for m in cluster.members]
        meta, others = self.before_destroy(inside + files)
        return DestroyPlan(self.data_dir, meta, sum(tree_bytes(cluster.layout(m).datadir) for m in cluster.members),
                           others)

    def destroy(self, plan: "DestroyPlan") -> None:
        """Remove what dbio created, and only that; restore what it changed of a directory it found."""
        cluster = self.cluster()
        self.stop(quiet=True)
        if cluster is not None:
            cluster.remove_directories()
            for member in cluster.members:
                galera.option_file_path(self.data_dir, member).unlink(missing_ok=True)
        for path in self.layout.owned_by_server():
            shutil.rmtree(path, ignore_errors=not path.exists())
        location.give_back(self.data_dir, self.layout.meta_file, plan.meta.preexisting_mode, plan.others,
                           "managed instance", self.notify)

    # -- internals ---------------------------------------------------------------------
    def _start(self, wanted: dict[str, str]) -> None:
        meta = self.meta()
        user = _user(meta)
        bins = binaries.Binaries(Path(meta.server), None, meta.version)
        binaries.require_trusted(bins)  # checked before each start: a program changed meanwhile is refused
        cluster = self.cluster()
        if cluster is not None:
            galera.require_galera()
            cluster.start(meta.server, user, wanted, meta.cluster_name or "dbio")
            meta.settings = wanted
            meta.write(self.layout.meta_file)
            return
        cmd = [meta.server, *settings.arguments(wanted, self.layout)]
        server = process.spawn(cmd, user, self.layout.root)
        self._wait_ready(server)
        meta.settings = wanted
        meta.write(self.layout.meta_file)

    def _wait_ready(self, server) -> None:
        from dbio.engines.mysql.connection import connect

        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if server.poll() is not None:
                tail = process.log_tail(self.layout.log_file)
                raise DbioError(f"the managed server did not start (exit status {server.returncode})",
                                f"server log {self.layout.log_file}" + (f": {tail}" if tail else ""))
            if self.layout.socket.exists():
                try:
                    connect(self.conninfo("mysql"), application_name="dbio:start", database=False).close()
                    return
                except UsageError:
                    pass  # not accepting connections yet
            if time.monotonic() > deadline:
                raise DbioError(f"the managed server did not accept connections within {START_TIMEOUT:.0f} s",
                                f"see {self.layout.log_file}")
            time.sleep(0.2)

    def _create_database(self, dbname: str, *, look: bool = False) -> None:
        """The database made if it is not there; look: made by no one (NoDatabase when it is not there)."""
        from dbio.engines.mysql.connection import connect

        conn = connect(self.conninfo(dbname), application_name="dbio:init", database=False)
        try:
            if look:
                if conn.one("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (dbname,)) is None:
                    raise NoDatabase(f"no database {dbname!r} in {self.data_dir}")
                return
            conn.execute(f"CREATE DATABASE IF NOT EXISTS `{dbname.replace('`', '``')}`")
        finally:
            conn.close()


class Synced:
    """A cluster's nodes caught up: each has applied every write-set the cluster committed (setup
    confirms the loaded data set on each after this: jobs/standby_setup.py)."""

    def __init__(self, instance: MysqlInstance):
        self.instance = instance

    def wait_caught_up(self, dbname: str = "mysql", timeout: float = 600.0) -> None:
        from dbio.engines.mysql.connection import connect

        cluster = self.instance.cluster()
        if cluster is None:
            return
        deadline = time.monotonic() + timeout
        while True:
            positions = []
            for member in cluster.members:
                conn = connect(cluster.conninfo(member, "mysql"), application_name="dbio:setup", database=False)
                try:
                    rows = dict(conn.query("SHOW STATUS WHERE Variable_name IN ('wsrep_last_committed', "
                                           "'wsrep_local_recv_queue')"))
                finally:
                    conn.close()
                positions.append((int(rows.get("wsrep_last_committed", -1)),
                                  int(rows.get("wsrep_local_recv_queue", 0))))
            if len({p for p, _ in positions}) == 1 and not any(q for _, q in positions):
                return
            if time.monotonic() > deadline:
                raise DbioError(f"the Galera nodes did not apply the same write-sets within {timeout:.0f} s "
                                f"(positions {', '.join(str(p) for p, _ in positions)})", "see the nodes' server logs")
            time.sleep(0.2)


@dataclass(frozen=True)
class DestroyPlan:
    data_dir: Path
    meta: Meta
    size_bytes: int
    others: list[Path]  # entries dbio did not create, left in place

    def leftovers(self) -> list[str]:
        if running_as_root():
            return [f"the system user '{self.meta.server_user}' (other instances may use it): "
                    f"userdel {self.meta.server_user}"]
        return []


def _user(meta: Meta) -> ServerUser:
    return recorded_user(meta.server_user)


def why_failed(output: str, code: int) -> str:
    """The line of a server tool's output that says why it failed (pure): its first [ERROR] other than the closing
    "Aborting" (which says only that it stopped, and comes last), else its last line, else the exit status
    (mariadb-install-db with --no-defaults writes to its output, not to the server's log)."""
    lines = [ln.strip() for ln in (output or "").splitlines() if ln.strip()]
    errors = [ln for ln in lines if "[ERROR]" in ln and not ln.rstrip(".").endswith("Aborting")]
    return errors[0] if errors else lines[-1] if lines else f"exit status {code}"


def _product(version: str) -> str:
    """'MariaDB 10.11.19' from the server's version string (pure)."""
    number = version.split("-")[0]
    return f"{'MariaDB' if 'mariadb' in version.lower() else 'MySQL'} {number}"


def _inside_other(path: Path) -> str | None:
    current = path.resolve()
    for candidate in [current, *current.parents]:
        if (candidate / "ibdata1").exists() or (candidate / "mysql" / "user.frm").exists():
            return "MySQL/MariaDB"
        if (candidate / "PG_VERSION").exists() and (candidate / "global").is_dir():
            return "PostgreSQL"
    return None


if TYPE_CHECKING:  # mypy checks it against the interface dbio asks of a managed instance
    from dbio.engines import instance as declared

    _DECLARED: declared.ManagedInstance = MysqlInstance(Path())
    _CLUSTER: declared.WithStandbys = MysqlInstance(Path())
