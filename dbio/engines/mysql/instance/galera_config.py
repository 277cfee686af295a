"""A managed Galera cluster's nodes as data (pure): where each lives, its loopback ports, its option
file, and what its grastate.dat and a --wsrep-recover say.

Each node has a directory of its own (data, socket, log; the whole of it the server user's: the
SST script writes into it), no client TCP port (skip_networking: the socket only), and three
loopback ports: Galera's group communication (base_port, with gmcast.listen_addr so that it never
listens beyond 127.0.0.1), the SST's (rsync's daemon on a joiner) and the IST's (ist.recv_addr, by
default base_port + 1, which would collide with an SST port put there). A node starts with
--defaults-file naming the option file dbio writes for it outside its directory (root's): the SST
script reads the server's options from the file it was started with, else the system's my.cnf.

Every local user reaches loopback, so Galera's traffic (group communication, IST and SST) is TLS with
a CA made for this cluster (tls_commands): a peer without a certificate that CA signed is refused at
the handshake, never a member, never a donor or a joiner. The SST is rsync through stunnel ([sst]
tca/tcert/tkey, ssl-mode=VERIFY_CA: both ends present the cluster's certificate and check the
other's). The files live in the instance's galera-tls/, the server user's and no one else's."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROVIDER = Path("/usr/lib/galera/libgalera_smm.so")  # Debian's galera-4
SST_METHOD = "rsync"
# What the rsync SST script runs, found in PATH=/usr/bin:/bin (server_process.ENV); checked trusted before a start:
# with [sst] tca/tcert/tkey it runs rsync through stunnel, and openssl checks the certificate against key and CA.
# Each with the Debian package that holds it, named when it is missing.
SST_PROGRAMS = {"wsrep_sst_rsync": "mariadb-server", "wsrep_sst_common": "mariadb-server",
                "my_print_defaults": "mariadb-client", "rsync": "rsync", "ss": "iproute2", "stunnel": "stunnel4",
                "openssl": "openssl"}
PACKAGE_HINT = "install galera-4, rsync and stunnel4 (apt-get install galera-4 rsync iproute2 stunnel4)"
HOST = "127.0.0.1"
NODE_PREFIX = "node"
TLS_DIR = "galera-tls"  # in the instance's directory: the cluster's CA, and the key and certificate of its nodes
TLS_DAYS = "36500"  # the cluster's own CA: it lives as long as the cluster, destroy removes it


@dataclass(frozen=True)
class TlsFiles:
    """The cluster's CA and the one key and certificate (signed by it) every node presents."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca-key.pem"

    @property
    def cert(self) -> Path:
        return self.directory / "node.pem"

    @property
    def key(self) -> Path:
        return self.directory / "node-key.pem"

    def all(self) -> tuple[Path, ...]:
        return (self.ca, self.ca_key, self.cert, self.key)


def tls_files(root: Path) -> TlsFiles:
    return TlsFiles(root / TLS_DIR)


def tls_commands(openssl: str, tls: TlsFiles, cluster_name: str) -> list[list[str]]:
    """The openssl commands that make the cluster's CA and its nodes' key and certificate (pure).
    The CA's key signs once: nothing else than this cluster's nodes holds a certificate it signed."""
    request = tls.directory / "node.csr"
    # the node's CN without a space: the SST script sends it to the donor in a line split at spaces
    return [
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", TLS_DAYS,
         "-subj", f"/CN={cluster_name} CA", "-keyout", str(tls.ca_key), "-out", str(tls.ca)],
        [openssl, "req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", f"/CN={cluster_name}-node",
         "-keyout", str(tls.key), "-out", str(request)],
        [openssl, "x509", "-req", "-sha256", "-days", TLS_DAYS, "-in", str(request), "-CA", str(tls.ca),
         "-CAkey", str(tls.ca_key), "-set_serial", "1", "-out", str(tls.cert)],
    ]


@dataclass(frozen=True)
class Member:
    """One node as the instance's record keeps it."""

    name: str  # node1, node2, ...
    root: Path  # its directory: data, socket and log, all the server user's
    galera_port: int  # base_port: group communication
    ist_port: int
    sst_port: int
    place: str | None = None  # the --galera-data-dir it was made in (destroy removes only root there)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "root": str(self.root), "galera_port": self.galera_port,
                "ist_port": self.ist_port, "sst_port": self.sst_port, "place": self.place}

    @classmethod
    def from_dict(cls, data: Any) -> "Member":
        """ValueError when the record's entry does not describe a node."""
        if not isinstance(data, dict):
            raise ValueError("a member is not a table")
        try:
            ports = [int(data[k]) for k in ("galera_port", "ist_port", "sst_port")]
            name, root, place = str(data["name"]), Path(str(data["root"])), data.get("place")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"a member lacks {exc}") from None
        if not re.fullmatch(rf"{NODE_PREFIX}[1-9][0-9]?", name) or not root.is_absolute() \
                or not all(0 < p < 65536 for p in ports) or not (place is None or isinstance(place, str)):
            raise ValueError(f"member {name!r} is not one dbio made")
        return cls(name, root, ports[0], ports[1], ports[2], place=place)


def names(count: int) -> list[str]:
    return [f"{NODE_PREFIX}{k}" for k in range(1, count + 1)]


def planned(root: Path, count: int, dirs: tuple[Path, ...]) -> list[tuple[str, Path, str | None]]:
    """(name, directory, the --galera-data-dir it is in or None) of each node (pure): node k in the
    k-th directory given, as dbio-node<k>, else inside the instance's directory."""
    out: list[tuple[str, Path, str | None]] = []
    for k, name in enumerate(names(count)):
        if k < len(dirs):
            out.append((name, dirs[k] / f"dbio-{name}", str(dirs[k])))
        else:
            out.append((name, root / name, None))
    return out


def assign_ports(count: int, free: list[int]) -> list[tuple[int, int, int]]:
    """(galera, ist, sst) for each node from distinct free ports (pure); ValueError when too few."""
    if len(set(free)) < 3 * count:
        raise ValueError(f"{3 * count} free loopback ports are needed, {len(set(free))} were found")
    ports = list(dict.fromkeys(free))
    return [(ports[3 * k], ports[3 * k + 1], ports[3 * k + 2]) for k in range(count)]


def cluster_address(members: list[Member]) -> str:
    return "gcomm://" + ",".join(f"{HOST}:{m.galera_port}" for m in members)


def node_settings(member: Member, members: list[Member], cluster_name: str, tls: TlsFiles) -> dict[str, str]:
    """The wsrep settings of one node (pure), by the server's variable names; what the instance's
    profile (settings.profile) does not already set. Loopback only: every address is 127.0.0.1, and
    Galera's traffic (group communication, IST) TLS with the cluster's CA verifying the peer."""
    if any(c in str(tls.directory) for c in ";=\n"):
        raise ValueError(f"{tls.directory} cannot be named in wsrep_provider_options (it holds ';' or '=')")
    provider = ";".join((f"base_host={HOST}", f"base_port={member.galera_port}",
                         f"gmcast.listen_addr=tcp://{HOST}:{member.galera_port}",
                         f"ist.recv_addr={HOST}:{member.ist_port}",
                         "socket.ssl=yes", f"socket.ssl_ca={tls.ca}", f"socket.ssl_cert={tls.cert}",
                         f"socket.ssl_key={tls.key}"))
    return {
        "wsrep_on": "ON",
        "wsrep_provider": str(PROVIDER),
        "wsrep_cluster_name": cluster_name,
        "wsrep_cluster_address": cluster_address(members),
        "wsrep_node_name": member.name,
        "wsrep_node_address": f"{HOST}:{member.galera_port}",
        "wsrep_provider_options": provider,
        "wsrep_sst_method": SST_METHOD,
        "wsrep_sst_receive_address": f"{HOST}:{member.sst_port}",
        "binlog_format": "ROW",  # what Galera replicates
        "innodb_autoinc_lock_mode": "2",  # interleaved: Galera's applier needs it
    }


def sst_settings(tls: TlsFiles) -> dict[str, str]:
    """The SST script's [sst] group (pure): rsync through stunnel, each end presenting the cluster's certificate
    and verifying the other's against its CA (VERIFY_CA: the chain; every node has the one certificate)."""
    return {"tca": str(tls.ca), "tcert": str(tls.cert), "tkey": str(tls.key), "ssl-mode": "VERIFY_CA"}


def option_file(arguments: list[str], sst: dict[str, str] | None = None) -> str:
    """The node's option file from the server's command-line options (pure): one [mysqld] group, an
    option a line ("--innodb-buffer-pool-size=134217728" -> "innodb-buffer-pool-size=134217728");
    --no-defaults has no place in it (the file is the only one read); then the SST script's [sst] group."""
    bad = [a for a in arguments if not a.startswith("--") or "\n" in a]
    bad += [f"{k}={v}" for k, v in (sst or {}).items() if "\n" in k + v]
    if bad:
        raise ValueError(f"{bad[0]!r} is not a server option")
    lines = [a[2:] for a in arguments if a != "--no-defaults"]
    text = "# written by dbio for this Galera node: it is replaced at each start\n[mysqld]\n" + "\n".join(lines) + "\n"
    if sst:
        text += "[sst]\n" + "".join(f"{key}={value}\n" for key, value in sst.items())
    return text


@dataclass(frozen=True)
class SavedState:
    """grastate.dat: the cluster's state the node last saw."""

    uuid: str | None
    seqno: int  # -1: unknown (the node did not stop cleanly)
    safe_to_bootstrap: bool


def parse_grastate(text: str) -> SavedState:
    """grastate.dat's fields (pure); a missing field reads as unknown."""
    fields: dict[str, str] = {m.group(1): m.group(2)
                              for m in re.finditer(r"^\s*([a-z_]+):\s*(\S*)\s*$", text, re.MULTILINE)}
    try:
        seqno = int(fields.get("seqno", "-1"))
    except ValueError:
        seqno = -1
    uuid = fields.get("uuid") or None
    return SavedState(uuid, seqno, fields.get("safe_to_bootstrap") == "1")


RECOVERED = re.compile(r"WSREP: Recovered position:\s*([0-9a-f-]{36}):(-?\d+)")


def parse_recovered(log: str) -> tuple[str, int] | None:
    """The position a --wsrep-recover found, from the server's log (pure): the last one it wrote."""
    found = RECOVERED.findall(log)
    return (found[-1][0], int(found[-1][1])) if found else None


def bootstrap_choice(states: list[SavedState | None], recovered: list[int | None]) -> int:
    """Which node (index) may start the cluster again (pure): the one grastate.dat marks safe (the last
    out of a clean full stop), the first when every node is new; after a crash, the node with the most
    recent position --wsrep-recover found (the first of equals)."""
    safe = [k for k, s in enumerate(states) if s is not None and s.safe_to_bootstrap]
    if safe:
        return safe[0]
    if all(s is None for s in states):
        return 0
    known = [(seqno, -k) for k, seqno in enumerate(recovered) if seqno is not None]
    return -max(known)[1] if known else 0
