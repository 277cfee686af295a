"""The managed instance as a MariaDB Galera cluster: its nodes made, started, stopped and removed.

`dbio instance init --engine mysql --galera N` makes N nodes (galera_config.py: their directories,
loopback ports and option files). Node 1 starts the cluster (bootstrap, gcomm:// of every node) and
each other joins it by state transfer (rsync SST, or IST when it missed little); a start waits until
every node is Synced. A full stop takes the nodes down in reverse order, so that node 1, the last
out, is the one grastate.dat marks safe to bootstrap again; after a crash (a node killed), the
node with the most recent position (mariadbd --wsrep-recover) is made safe and starts it.

As for the single server, dbio's record and each node's option file are root's (as root), and each
node's directory is the unprivileged server user's: what the server user writes (grastate.dat, the
logs) is read without following links, and changed only by a program run as that user."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbio import trust
from dbio.engines.mysql.instance import process, settings
from dbio.engines.mysql.instance.galera_config import (PACKAGE_HINT, PROVIDER, SST_PROGRAMS, Member, SavedState,
                                                        TlsFiles, bootstrap_choice, node_settings, option_file,
                                                        parse_grastate, parse_recovered, sst_settings, tls_commands,
                                                        tls_files)
from dbio.engines.mysql.instance.layout import Layout
from dbio.errors import DbioError, UsageError
from dbio.filesystem import write_whole
from dbio.managed import server_process
from dbio.managed.server_user import ServerUser

START_TIMEOUT = 120.0  # seconds the bootstrapping node may take (crash recovery of its redo log)
JOIN_TIMEOUT = 900.0  # seconds a joining node may take to be Synced (an SST copies the whole data set)
RESERVED_PORTS = frozenset({3306, 4444, 4567, 4568, 5432, 5433})  # the machine's services and Galera's defaults
SYNCED = "Synced"
OPENSSL = Path("/usr/bin/openssl")


def require_galera() -> None:
    """Before a cluster is made or started: Galera's library and what the SST script runs, each trusted."""
    if not PROVIDER.exists():
        raise UsageError(f"a Galera cluster needs Galera's library {PROVIDER}, and this machine has none", PACKAGE_HINT)
    fix = "reinstall the package so that root owns its files and only root can write them"
    trust.require_trusted(PROVIDER.resolve(), "Galera's library", fix=fix)
    for name, package in SST_PROGRAMS.items():
        found = next((d / name for d in (Path("/usr/bin"), Path("/bin")) if (d / name).is_file()), None)
        if found is None:
            raise UsageError(f"a Galera node's state transfer runs {name}, and this machine has none",
                             f"install the Debian package {package} (apt-get install {package})")
        trust.require_trusted(found, "the state transfer's program", fix=fix)
        if found.is_symlink():  # stunnel -> stunnel4: what runs is the link's target, checked too
            trust.require_trusted(found.resolve(), "the state transfer's program", fix=fix)


def make_tls(tls: TlsFiles, user: ServerUser, cluster_name: str) -> None:
    """The cluster's CA, and its nodes' key and certificate, made once (kept while the cluster lives):
    in a directory made 0700 and given, with its files (0600), to the server user, who alone reads them."""
    if all(p.is_file() for p in tls.all()):
        return
    if not OPENSSL.is_file():
        raise UsageError(f"a Galera cluster's TLS needs {OPENSSL}, and this machine has none",
                         "apt-get install openssl")
    trust.require_trusted(OPENSSL, "openssl", fix="reinstall openssl so that root owns it and only root can write it")
    shutil.rmtree(tls.directory, ignore_errors=True)  # half-made: made again whole
    tls.directory.mkdir(mode=0o700)
    try:
        for cmd in tls_commands(str(OPENSSL), tls, cluster_name):
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=tls.directory, env=server_process.ENV,
                                  check=False)
            if done.returncode != 0:
                said = (done.stderr or "").strip().splitlines()
                raise DbioError("the Galera cluster's TLS certificates could not be made",
                                f"openssl said: {said[-1]}" if said else "openssl failed")
        (tls.directory / "node.csr").unlink(missing_ok=True)
        for path in tls.all():
            os.chown(path, user.uid, user.gid)
            os.chmod(path, 0o600)
        os.chown(tls.directory, user.uid, user.gid)
    except BaseException:
        shutil.rmtree(tls.directory, ignore_errors=True)
        raise


def free_ports(count: int, taken: set[int]) -> list[int]:
    """count distinct loopback TCP ports free now, none of the reserved or taken ones."""
    found: list[int] = []
    while len(found) < count:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in RESERVED_PORTS and port not in taken and port not in found and 1024 < port < 65000:
            found.append(port)
    return found


def option_file_path(root: Path, member: Member) -> Path:
    """Outside the node's directory, in the instance's own (root's): the server user cannot change it."""
    return root / f"{member.name}.cnf"


@dataclass(frozen=True)
class MemberStatus:
    """One node as dbio instance status shows it (commands/admin.member_lines)."""

    name: str
    role: str
    running: bool
    pid: int | None
    port: int  # its Galera port
    data_dir: Path
    lag_bytes: int | None = None
    lag_seconds: float | None = None
    note: str = ""  # its wsrep state (Synced, Donor/Desynced, ...)


class Cluster:
    """The nodes of one managed instance, as its record lists them, given what they need of it: its
    directory (root's: the option files and the TLS files), how a socket is reached and where to say
    what they do. They never call the instance back."""

    def __init__(self, data_dir: Path, members: list[Member], conninfo_at: Callable[[Path, str], str],
                 notify: Callable[[str], None]):
        self.data_dir = data_dir
        self.members = members
        self.conninfo_at = conninfo_at
        self.notify = notify

    def layout(self, member: Member) -> Layout:
        return Layout(member.root)

    def conninfo(self, member: Member, dbname: str) -> str:
        return self.conninfo_at(self.layout(member).socket, dbname)

    def pid(self, member: Member) -> int | None:
        return process.pid_of(self.layout(member))

    # -- made ----------------------------------------------------------------------------
    def make_directories(self, user: ServerUser) -> None:
        """Each node's directory, all of it the server user's (the SST script writes into it)."""
        for member in self.members:
            member.root.mkdir(mode=0o700)
            for path in (member.root, *self.layout(member).owned_by_server()):
                path.mkdir(mode=0o700, exist_ok=True)
                os.chown(path, user.uid, user.gid)
                os.chmod(path, 0o700)

    def remove_directories(self) -> None:
        """Each node's directory, and the cluster's TLS files."""
        for member in self.members:
            shutil.rmtree(member.root, ignore_errors=True)
        shutil.rmtree(tls_files(self.data_dir).directory, ignore_errors=True)

    # -- started -------------------------------------------------------------------------
    def start(self, server: str, user: ServerUser, wanted: dict[str, str], cluster_name: str) -> None:
        """Every node stopped is started: the cluster bootstrapped when none runs, then each joins."""
        running = [m for m in self.members if self.pid(m) is not None]
        stopped = [m for m in self.members if m not in running]
        if not stopped:
            return
        make_tls(tls_files(self.data_dir), user, cluster_name)  # made before its TLS: at its next start
        recovered = {m.name: self._recover(server, user, m) for m in stopped if self._needs_recovery(m)}
        if not running:
            states = [self._saved(m) for m in self.members]
            positions = [found[1] if (found := recovered.get(m.name)) is not None else None for m in self.members]
            first = self.members[bootstrap_choice(states, positions)]
            state = states[self.members.index(first)]
            if state is not None and not state.safe_to_bootstrap:
                self.notify(f"{first.name} holds the most recent state of the cluster: it starts it again")
                self._mark_safe(user, first)
            self._start_node(server, user, wanted, cluster_name, first, bootstrap=True,
                             position=recovered.get(first.name))
            stopped.remove(first)
        for member in stopped:
            self._start_node(server, user, wanted, cluster_name, member, bootstrap=False,
                             position=recovered.get(member.name))

    def _start_node(self, server: str, user: ServerUser, wanted: dict[str, str], cluster_name: str, member: Member,
                    *, bootstrap: bool, position: tuple[str, int] | None) -> None:
        layout = self.layout(member)
        path = option_file_path(self.data_dir, member)
        try:
            ours = node_settings(member, self.members, cluster_name, tls_files(self.data_dir))
        except ValueError as exc:
            raise UsageError(str(exc), "choose a --data-dir whose path has no ';' or '='") from None
        options = {**wanted, **ours}
        write_whole(path, option_file(settings.arguments(options, layout),
                                      sst_settings(tls_files(self.data_dir))), mode=0o600)
        os.chown(path, os.geteuid(), user.gid)  # root's (dbio's), read by the server's group only
        os.chmod(path, 0o640)
        cmd = [server, f"--defaults-file={path}", f"--datadir={layout.datadir}"]  # the datadir names the process
        if bootstrap:
            cmd.append("--wsrep-new-cluster")
        if position is not None:
            cmd.append(f"--wsrep-start-position={position[0]}:{position[1]}")
        began = time.monotonic()
        spawned = process.spawn(cmd, user, member.root)
        self._wait_synced(member, spawned, START_TIMEOUT if bootstrap else JOIN_TIMEOUT)
        how = "started the cluster" if bootstrap else "joined the cluster"
        self.notify(f"{member.name}: {how} ({time.monotonic() - began:.1f} s)")

    def _wait_synced(self, member: Member, spawned, timeout: float) -> None:
        from dbio.engines.mysql.connection import connect

        layout = self.layout(member)
        deadline = time.monotonic() + timeout
        while True:
            if spawned.poll() is not None:
                tail = process.log_tail(layout.log_file)
                raise DbioError(f"{member.name} did not start (exit status {spawned.returncode})",
                                f"server log {layout.log_file}" + (f": {tail}" if tail else ""))
            if layout.socket.exists():
                try:
                    conn = connect(self.conninfo(member, "mysql"), application_name="dbio:start", database=False)
                    try:
                        row = conn.one_row("SHOW STATUS LIKE 'wsrep_local_state_comment'")
                    finally:
                        conn.close()
                    if row is not None and row[1] == SYNCED:
                        return
                except UsageError:
                    pass  # not accepting connections yet (a joiner accepts none before its state transfer)
            if time.monotonic() > deadline:
                raise DbioError(f"{member.name} was not Synced with the cluster within {timeout:.0f} s",
                                f"see {layout.log_file}")
            time.sleep(0.3)

    def _saved(self, member: Member) -> SavedState | None:
        """grastate.dat (the server user's: read without following links); None before its first start."""
        path = self.layout(member).datadir / "grastate.dat"
        try:
            return parse_grastate(trust.read_no_follow(path))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise DbioError(f"{member.name}: {path} cannot be read ({exc.strerror or exc})", "if the instance is "
                            "damaged, destroy it (dbio instance destroy) and make it again") from None

    def _needs_recovery(self, member: Member) -> bool:
        """A node that did not stop cleanly does not know its position (seqno -1): --wsrep-recover finds it."""
        state = self._saved(member)
        return state is not None and state.seqno < 0

    def _recover(self, server: str, user: ServerUser, member: Member) -> tuple[str, int] | None:
        layout = self.layout(member)
        path = option_file_path(self.data_dir, member)
        log = layout.log_dir / "recover.log"
        done = server_process.run(user, [server, f"--defaults-file={path}", f"--datadir={layout.datadir}",
                                         "--wsrep-recover", f"--log-error={log}"], cwd=member.root)
        try:
            found = parse_recovered(trust.read_no_follow(log, tail=True))
        except OSError:
            found = None
        if done.returncode != 0 or found is None:
            self.notify(f"{member.name}: --wsrep-recover found no position: it joins by a full state transfer")
            return None
        return found

    def _mark_safe(self, user: ServerUser, member: Member) -> None:
        """grastate.dat's safe_to_bootstrap set by the server user (its file, in its directory)."""
        path = self.layout(member).datadir / "grastate.dat"
        done = server_process.run(user, ["/usr/bin/sed", "-i", "s/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/",
                                         str(path)], cwd=member.root)
        if done.returncode != 0:
            raise DbioError(f"{member.name}: {path} could not be marked safe to bootstrap",
                            (done.stderr or "").strip() or "see its server log")

    # -- stopped -------------------------------------------------------------------------
    def stop(self, timeout: float) -> bool:
        """Every running node, the last first: node 1 is the last out (safe to bootstrap). False: none ran."""
        stopped = False
        for member in reversed(self.members):
            pid = self.pid(member)
            if pid is None:
                continue
            if not process.stop(pid, self.layout(member), timeout):
                raise DbioError(f"{member.name} (pid {pid}) did not stop", f"see {self.layout(member).log_file}")
            stopped = True
        return stopped

    # -- seen ----------------------------------------------------------------------------
    def status(self) -> tuple[MemberStatus, ...]:
        return tuple(MemberStatus(m.name, "writer", pid is not None, pid, m.galera_port, self.layout(m).datadir,
                                  note=self._state(m) if pid is not None else "")
                     for m in self.members for pid in (self.pid(m),))

    def _state(self, member: Member) -> str:
        from dbio.engines.mysql.connection import connect

        try:
            conn = connect(self.conninfo(member, "mysql"), application_name="dbio:status", database=False)
        except (UsageError, DbioError):
            return "not answering"
        try:
            row = conn.one_row("SHOW STATUS LIKE 'wsrep_local_state_comment'")
            return str(row[1]) if row else "wsrep off"
        finally:
            conn.close()

