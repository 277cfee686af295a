"""A managed MariaDB Galera cluster (dbio instance init --engine mysql --galera 3) as users run it: its
nodes made, started, stopped and destroyed with nothing left behind or listening beyond loopback; one
data set loaded through node 1 and held by every node; a run whose sessions UPDATE on every node, the
same rows with --hot-schema-frequency 1, conflicts retried and counted, no session lost; the same
nodes given as an existing cluster by one --dsn each, refused while a node is not Synced; a node
killed mid-run lost as a standby is, the others finishing with their quorum. They skip with the
reason where galera-4 (its library), rsync, stunnel4 or MariaDB's server is missing. The SST goes through
stunnel with the cluster's certificate: a joiner forced to a full SST gets it, and no other client gets in."""

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.conftest import _base_dir, dbio, load_result, result_dir, wait_for
from tests.integration.test_faults import measuring

pymysql = pytest.importorskip("pymysql")

SMALL = ["--scale", "2000", "--schemas", "3", "--scan-table-size", "1MiB"]


def _galera_or_skip() -> None:
    from dbio.engines.mysql.instance import binaries, galera
    from dbio.errors import UsageError

    try:
        binaries.locate()
        galera.require_galera()
    except UsageError as exc:
        pytest.skip(f"no Galera cluster can be made here: {exc}")


class Cluster:
    def __init__(self, root: Path):
        self.data_dir, self.results = root / "galera", root / "results"

    def here(self, *extra: str) -> list[str]:
        return ["--engine", "mysql", "--data-dir", str(self.data_dir), *extra]

    def args(self, *extra: str) -> list[str]:
        return [*self.here(), "--buffer-pool", "8MiB", "--results-dir", str(self.results), *extra]

    def socket(self, node: int) -> Path:
        return self.data_dir / f"node{node}" / "socket" / "mysqld.sock"

    def pid(self, node: int) -> int:
        return int((self.data_dir / f"node{node}" / "socket" / "mysqld.pid").read_text().split()[0])

    def status(self, node: int, name: str) -> str:
        conn = pymysql.connect(unix_socket=str(self.socket(node)), user="root", autocommit=True, connect_timeout=5)
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
                return str(cur.fetchone()[1])
        finally:
            conn.close()

    def servers(self) -> list[int]:
        """Every mariadbd of this cluster still running (by its data directory on the command line)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(a.startswith(b"--datadir=" + os.fsencode(self.data_dir)) for a in args):
                found.append(int(entry.name))
        return found


@pytest.fixture(scope="module")
def cluster():
    _galera_or_skip()
    root = _base_dir()
    made = Cluster(root)
    done = dbio("instance", "init", *made.here("--galera", "3", "--buffer-pool", "8MiB"), timeout=300)
    assert done.code == 0, done.text
    made.made = done.text
    yield made
    dbio("instance", "destroy", "--yes", *made.here())
    shutil.rmtree(root, ignore_errors=True)


def test_three_nodes_each_its_own_loopback_only_with_trusted_files(cluster):
    assert "node1: started the cluster" in cluster.made and "node3: joined the cluster" in cluster.made
    assert all(cluster.status(k, "wsrep_local_state_comment") == "Synced" for k in (1, 2, 3))
    assert {cluster.status(k, "wsrep_cluster_size") for k in (1, 2, 3)} == {"3"}
    pids = {cluster.pid(k) for k in (1, 2, 3)}
    listening = subprocess.run(["ss", "-Htlnp"], capture_output=True, text=True).stdout.splitlines()
    ours = [line for line in listening if any(f"pid={pid}," in line for pid in pids)]
    assert len(ours) == 3, listening  # one Galera port each, no client port (sockets only)
    assert all(line.split()[3].startswith("127.0.0.1:") for line in ours), ours
    for k in (1, 2, 3):
        option_file = cluster.data_dir / f"node{k}.cnf"
        st = option_file.stat()
        assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o640  # dbio's, read by the server's group
        node = cluster.data_dir / f"node{k}"
        assert stat.S_IMODE(node.stat().st_mode) == 0o700 and node.stat().st_uid != 0
        assert st.st_gid == node.stat().st_gid
        assert stat.S_IMODE(cluster.socket(k).parent.stat().st_mode) == 0o700
        assert "gmcast.listen_addr=tcp://127.0.0.1:" in option_file.read_text()
        assert "socket.ssl=yes;socket.ssl_ca=" in option_file.read_text()
    record = cluster.data_dir / "dbio-mysql-instance.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600  # the cluster's name and ports: dbio's alone
    tls = cluster.data_dir / "galera-tls"
    server_uid = (cluster.data_dir / "node1").stat().st_uid
    assert stat.S_IMODE(tls.stat().st_mode) == 0o700 and tls.stat().st_uid == server_uid
    assert sorted(p.name for p in tls.iterdir()) == ["ca-key.pem", "ca.pem", "node-key.pem", "node.pem"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 and p.stat().st_uid == server_uid for p in tls.iterdir())
    shown = dbio("instance", "status", *cluster.here())
    assert shown.code == 0 and shown.out.count("(Synced)") == 3, shown.text


def _hostile_user():
    """A local user of no privilege, made for the test (removed after): who reaches loopback, as every user does."""
    if os.geteuid() != 0:
        pytest.skip("making another local user (useradd) needs root")
    name = f"dbiomal{os.getpid() % 100000}"
    made = subprocess.run(["useradd", "-m", "-s", "/bin/sh", name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"useradd {name} failed: {made.stderr.strip()}")
    return name, Path(f"/home/{name}")


def _her_node(name: str, home: Path, port: int, cluster_name: str, tls: bool) -> subprocess.Popen:
    """Her own mariadbd, run as her, pointed at node1's Galera port with the cluster's name."""
    from dbio.engines.mysql.instance import binaries, galera

    base, ist, sst = galera.free_ports(3, {port})
    data = home / ("data-tls" if tls else "data")
    subprocess.run(["runuser", "-u", name, "--", "mkdir", "-p", str(data)], check=True)
    provider = f"base_port={base};gmcast.listen_addr=tcp://127.0.0.1:{base};ist.recv_addr=127.0.0.1:{ist}"
    if tls:  # TLS too, with a CA and certificate of her own making: not the cluster's
        subprocess.run(["runuser", "-u", name, "--", "/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-days", "2", "-subj", "/CN=mallory", "-keyout", str(home / "key.pem"),
                        "-out", str(home / "cert.pem")], check=True, capture_output=True)
        provider += (f";socket.ssl=yes;socket.ssl_ca={home / 'cert.pem'};socket.ssl_cert={home / 'cert.pem'}"
                     f";socket.ssl_key={home / 'key.pem'}")
    cmd = [str(binaries.locate().server), "--no-defaults", f"--datadir={data}", f"--socket={data}.sock",
           "--skip-networking", f"--pid-file={data}.pid", f"--log-error={data}.err", "--innodb-buffer-pool-size=8M",
           "--wsrep-on=ON", f"--wsrep-provider={galera.PROVIDER}",
           f"--wsrep-cluster-address=gcomm://127.0.0.1:{port}", f"--wsrep-cluster-name={cluster_name}",
           "--wsrep-sst-method=rsync", f"--wsrep-node-address=127.0.0.1:{base}",
           f"--wsrep-sst-receive-address=127.0.0.1:{sst}", f"--wsrep-provider-options={provider}",
           "--binlog-format=ROW", "--innodb-autoinc-lock-mode=2"]
    return subprocess.Popen(["runuser", "-u", name, "--", *cmd], cwd=home, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_another_users_node_at_node1s_galera_port_is_never_a_member(cluster):
    import json

    record = json.loads((cluster.data_dir / "dbio-mysql-instance.json").read_text())
    port = next(m["galera_port"] for m in record["members"] if m["name"] == "node1")
    name, home = _hostile_user()
    try:
        for tls in (False, True):
            hers = _her_node(name, home, port, record["cluster_name"], tls)
            try:
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    assert {cluster.status(k, "wsrep_cluster_size") for k in (1, 2, 3)} == {"3"}, \
                        f"her node (TLS {tls}) became a member of dbio's cluster"
                    if hers.poll() is not None:
                        break  # refused, she gave up
                    time.sleep(0.5)
            finally:
                if hers.poll() is None:
                    os.killpg(hers.pid, signal.SIGKILL)
                hers.wait(timeout=30)
            log = home / ("data-tls.err" if tls else "data.err")
            said = log.read_text(errors="replace") if log.exists() else ""
            assert "SYNCED" not in said and "Synchronized with group" not in said, said[-2000:]
            assert not (home / ("data-tls" if tls else "data") / "dbio").exists(), "she received the data set"
    finally:
        subprocess.run(["userdel", "-r", "-f", name], capture_output=True)
    assert {cluster.status(k, "wsrep_local_state_comment") for k in (1, 2, 3)} == {"Synced"}


def test_loaded_through_one_node_held_by_every_node_then_updated_on_every_node(cluster):
    done = dbio("setup", *cluster.args(*SMALL, "--allow-cached"), timeout=600)
    assert done.code == 0, done.text
    assert "node2: holds setup" in done.out and "node3: holds setup" in done.out, done.text
    before = {k: int(cluster.status(k, "wsrep_local_cert_failures")) for k in (1, 2, 3)}
    done = dbio("run", *cluster.args(*SMALL, "--allow-cached", "--threads-per-schema", "2", "--update-pct", "50",
                                     "--hot-schema-frequency", "1", "--warmup", "1s", "--run-time", "8s"), timeout=300)
    assert done.code == 0, done.text
    result = load_result(result_dir(done))
    assert result["status"] == "complete"
    assert [n["name"] for n in result["nodes"]] == ["node1", "node2", "node3"]
    assert {s["node"] for s in result["sessions"]} == {"node1", "node2", "node3"}
    assert not [e for e in result.get("events", []) if e.get("kind") == "session_failed"]
    for node in result["nodes"]:
        ws = node["figures"]["writesets"]
        assert ws["replicated_per_s"] > 0 and ws["received_per_s"] > 0, node["name"]  # every node writes
    after = {k: int(cluster.status(k, "wsrep_local_cert_failures")) for k in (1, 2, 3)}
    conflicts = sum(after.values()) - sum(before.values())
    assert conflicts > 0, "the same rows updated on three nodes met no certification failure"
    assert result["totals"]["retries"] > 0  # the loop ran them again, and counted them
    report = (result_dir(done) / "report.txt").read_text()
    assert "Write-sets (each node of the multi-writer cluster, and the cluster)" in report
    assert "every node applies every one" in report
    # a read-only run after the UPDATEs: each node settles (InnoDB's purge, dbio's tables flushed) first
    done = dbio("run", *cluster.args(*SMALL, "--allow-cached", "--update-pct", "0", "--warmup", "1s", "--run-time",
                                     "3s"), timeout=300)
    assert done.code == 0, done.text
    assert load_result(result_dir(done))["status"] == "complete"


def test_the_nodes_as_an_existing_cluster_and_a_node_not_synced_refused(cluster):
    dsns = [a for k in (1, 2, 3)
            for a in ("--dsn", f"mysql://root@localhost/dbio?unix_socket={cluster.socket(k)}&auth=socket")]
    common = ["--engine", "mysql", "--results-dir", str(cluster.results), *SMALL, "--allow-cached", "--warmup", "1s",
              "--run-time", "2s", "--update-pct", "20"]
    done = dbio("run", *common, *dsns, timeout=300)
    assert done.code == 0, done.text
    nodes = load_result(result_dir(done))["nodes"]
    assert len(nodes) == 3 and all(n["figures"]["writesets"]["replicated_per_s"] > 0 for n in nodes)
    conn = pymysql.connect(unix_socket=str(cluster.socket(2)), user="root", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL wsrep_desync = ON")
        wait_for(lambda: cluster.status(2, "wsrep_local_state_comment") != "Synced", 10, "node2 desynced")
        refused = dbio("run", *common, *dsns, timeout=120)
        assert refused.code == 2, refused.text
        assert "not Synced" in refused.err and len(refused.err.strip().splitlines()) <= 2, refused.err
    finally:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL wsrep_desync = OFF")
        conn.close()
    wait_for(lambda: cluster.status(2, "wsrep_local_state_comment") == "Synced", 30, "node2 synced again")


def _probe_sst_port(port: int, joining: subprocess.Popen) -> tuple[bytes, bytes]:
    """What a plain rsync client, then a TLS client without the cluster's certificate, gets from a joiner's SST
    port while it joins: the first connection that port accepts greets (or refuses) each."""
    import socket
    import ssl

    said: list[bytes] = []
    while joining.poll() is None and len(said) < 2:
        try:
            conn = socket.create_connection(("127.0.0.1", port), timeout=0.2)
        except OSError:
            time.sleep(0.02)  # not listening yet: the joiner's SST script starts its daemon after its recovery
            continue
        with conn:
            conn.settimeout(2)
            try:
                if said:  # TLS, no client certificate, the server's not checked: what any local user has
                    context = ssl.create_default_context()
                    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
                    conn = context.wrap_socket(conn)
                conn.sendall(b"@RSYNCD: 31.0\n")  # the rsync daemon protocol's greeting
                said.append(conn.recv(200) or b"(closed)")
            except (OSError, ssl.SSLError) as exc:
                said.append(f"refused: {exc}".encode())
    assert len(said) == 2, "the joiner's SST port was never seen listening"
    return said[0], said[1]


def test_a_joiner_forced_to_a_full_sst_gets_it_through_tls_and_no_one_else_gets_in(cluster):
    """Issue 41: the rsync SST was plain, and while a node joined any local user could talk to its rsync daemon
    (push files into its datadir) or pose as its donor. node3, its state removed, joins by a full SST: that
    transfer goes through stunnel with the cluster's certificate, and a plain rsync client or a TLS one without
    the certificate gets nothing from the joiner's SST port."""
    import json

    record = json.loads((cluster.data_dir / "dbio-mysql-instance.json").read_text())
    port = next(m["sst_port"] for m in record["members"] if m["name"] == "node3")
    os.kill(cluster.pid(3), signal.SIGKILL)
    log = cluster.data_dir / "node3" / "log" / "error.log"
    before = log.stat().st_size  # this join's lines alone are read
    (cluster.data_dir / "node3" / "data" / "grastate.dat").unlink()  # no state: a full SST, never an IST
    joining = subprocess.Popen([sys.executable, "-m", "dbio", "instance", "start", *cluster.here()],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    try:
        plain, tls = _probe_sst_port(port, joining)
        out, _ = joining.communicate(timeout=300)
    finally:
        if joining.poll() is None:
            joining.kill()
    assert joining.returncode == 0 and "node3: joined the cluster" in out, out
    assert b"@RSYNCD" not in plain and b"@RSYNCD" not in tls, (plain, tls)  # the daemon never answered them
    assert b"certificate required" in tls.lower() or b"refused" in tls, tls
    said = log.read_bytes()[before:].decode(errors="replace")
    assert "Using stunnel for SSL encryption" in said and "ssl-mode='VERIFY_CA'" in said, said[-2000:]
    assert "rsync SST completed on joiner" in said or "SST completed" in said, said[-2000:]
    assert {cluster.status(k, "wsrep_local_state_comment") for k in (1, 2, 3)} == {"Synced"}
    conn = pymysql.connect(unix_socket=str(cluster.socket(3)), user="root", autocommit=True)
    try:
        with conn.cursor() as cur:  # the data set loaded through node 1, node3's again by the SST
            cur.execute("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'dbio'")
            assert cur.fetchone()[0] > 0
    finally:
        conn.close()


def test_a_node_killed_mid_run_is_lost_the_others_finish_and_destroy_leaves_nothing(cluster):
    args = cluster.args(*SMALL, "--allow-cached", "--update-pct", "20", "--warmup", "1s", "--run-time", "14s",
                        "--label", "node-lost")
    run = subprocess.Popen([sys.executable, "-m", "dbio", "run", *args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                           env={**os.environ, "COLUMNS": "200"})
    try:
        # a few seconds into the window, however long a busy host takes to connect and warm up
        in_window = measuring(cluster.results, "node-lost")
        wait_for(lambda: run.poll() is not None or in_window(), 120, "the measured window")
        time.sleep(2)
        os.kill(cluster.pid(3), signal.SIGKILL)
        out, err = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, out + err
    assert "node node3 stopped" in err, err
    directory = Path(next(line.split(":", 1)[1].strip() for line in out.splitlines()
                          if line.startswith("result:"))).parent
    result = load_result(directory)
    assert result["status"] == "complete"
    stopped = [n["name"] for n in result["nodes"] if n.get("stopped")]
    assert stopped == ["node3"]
    assert "the others kept a quorum (2 of 3 nodes)" in (directory / "report.txt").read_text()
    done = dbio("instance", "destroy", "--yes", *cluster.here())
    assert done.code == 0, done.text
    assert cluster.servers() == [], "a mariadbd of the cluster is still running after destroy"
    assert not cluster.data_dir.exists()
