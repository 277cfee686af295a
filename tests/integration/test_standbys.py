"""An embedded primary with two streaming hot standbys (one on a directory of its own): init,
status, stop and start of every member, setup that leaves the same data set on each standby,
the members as a run's nodes, and destroy leaving nothing."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import psycopg
import pytest

from dbio.jobs import blkio_throttle
from tests.integration.conftest import dbio, load_result, over, result_dir

pytestmark = pytest.mark.integration

SHARED = ["--shared-buffers", "16MiB"]
WORKLOAD = ["--scale", "32MiB", "--scan-table-size", "0", "--warmup", "1s", "--run-time", "2s"]


class Cluster:
    def __init__(self, base: Path):
        self.base = base
        self.data_dir = base / "cluster"
        self.other = base / "other-storage"  # stands for another device: --standby-data-dir of standby1
        self.results = base / "results"

    @property
    def place(self) -> list[str]:
        return ["--data-dir", str(self.data_dir)]

    def args(self, *extra: str) -> list[str]:
        return [*self.place, *SHARED, "--results-dir", str(self.results), *WORKLOAD, *extra]

    @property
    def members(self) -> list[dict]:
        return json.loads((self.data_dir / "dbio-instance.json").read_text())["members"]

    def member(self, name: str) -> dict:
        return next(m for m in self.members if m["name"] == name)

    def connect(self, name: str, db: str = "postgres") -> psycopg.Connection:
        m = self.member(name)
        return psycopg.connect(f"host={m['socket_dir']} port={m['port']} user=dbio dbname={db}", autocommit=True)


@pytest.fixture(scope="module")
def cluster():
    root = Path("/var/tmp" if os.geteuid() == 0 else tempfile.gettempdir())
    base = Path(tempfile.mkdtemp(prefix="dbio-tests-standbys-", dir=root))
    base.chmod(0o755)
    made = Cluster(base)
    done = dbio("instance", "init", *made.place, *SHARED, "--standbys", "2", "--standby-data-dir", str(made.other))
    assert done.code == 0, done.text
    assert "standby1: copying the primary" in done.text and "standby2: made in" in done.text
    yield made
    gone = dbio("instance", "destroy", "--yes", *made.place)
    try:
        assert gone.code == 0, gone.text
        assert not made.data_dir.exists()
        assert not made.other.exists()  # dbio made it, and it was left empty
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_init_makes_a_primary_and_two_hot_standbys(cluster):
    listed = cluster.members
    assert [(m["name"], m["role"]) for m in listed] == [("primary", "primary"), ("standby1", "standby"),
                                                         ("standby2", "standby")]
    assert len({m["port"] for m in listed}) == 3 and len({m["socket_dir"] for m in listed}) == 3
    assert cluster.member("standby1")["data_dir"] == str(cluster.other / "dbio-standby1" / "pgdata")
    assert cluster.member("standby2")["data_dir"] == str(cluster.data_dir / "standby2" / "pgdata")
    for m in listed:
        root, pgdata = Path(m["root"]), Path(m["data_dir"])
        assert root.stat().st_uid == os.geteuid()  # the member's directory is dbio's
        assert stat.S_IMODE(pgdata.stat().st_mode) == 0o700
        assert stat.S_IMODE(Path(m["socket_dir"]).stat().st_mode) == 0o700
        if os.geteuid() == 0:
            assert pgdata.stat().st_uid != 0  # only its own directories are the server user's
    with cluster.connect("primary") as conn:
        assert not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
        streaming = dict(conn.execute("SELECT application_name, state FROM pg_stat_replication").fetchall())
        assert streaming == {"standby1": "streaming", "standby2": "streaming"}
        slots = conn.execute("SELECT slot_name FROM pg_replication_slots WHERE active ORDER BY 1").fetchall()
        assert [s for (s,) in slots] == ["dbio_standby1", "dbio_standby2"]
    for name in ("standby1", "standby2"):
        with cluster.connect(name) as conn:
            assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
            assert conn.execute("SHOW hot_standby").fetchone()[0] == "on"
            assert conn.execute("SHOW listen_addresses").fetchone()[0] == ""


def test_status_shows_each_members_role_and_replay_lag(cluster):
    done = dbio("instance", "status", *cluster.place)
    assert done.code == 0, done.text
    rows = {line.split()[0]: line for line in done.out.splitlines() if line.split()[:1] and
            line.split()[0] in ("member", "primary", "standby1", "standby2")}
    assert rows["member"].split()[:5] == ["member", "role", "state", "port", "replay"]
    assert rows["primary"].split()[1:3] == ["primary", "running"]
    for name in ("standby1", "standby2"):
        words = rows[name].split()
        assert words[1:3] == ["standby", "running"] and words[3] == str(cluster.member(name)["port"])
        assert " B, " in rows[name] and " s " in rows[name]  # lag in bytes and seconds


def test_stop_and_start_act_on_every_member(cluster):
    stopped = dbio("instance", "stop", *cluster.place)
    assert stopped.code == 0, stopped.text
    assert "stopped the standbys (standby1, standby2)" in stopped.text
    for m in cluster.members:
        assert not (Path(m["data_dir"]) / "postmaster.pid").exists(), m["name"]
    status = dbio("instance", "status", *cluster.place)
    assert status.code == 3 and status.out.count(" stopped ") == 3
    started = dbio("instance", "start", *cluster.place, *SHARED)
    assert started.code == 0, started.text
    for name in ("standby1", "standby2"):
        with cluster.connect(name) as conn:
            assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
    with cluster.connect("primary") as conn:
        assert conn.execute("SELECT count(*) FROM pg_stat_replication").fetchone()[0] == 2


def test_setup_loads_the_primary_once_and_each_standby_holds_the_same_data(cluster):
    done = dbio("setup", *cluster.args())
    assert done.code == 0, done.text
    # the fast load, then each standby made again from the loaded primary, with a progress line each
    assert "wal_level minimal" in done.text and "loaded 32 MiB" in done.out
    assert done.text.index("loaded 32 MiB") < done.text.index("standby1: copying the primary")
    with cluster.connect("primary", "dbio") as conn:
        setup_id, rows = conn.execute("SELECT setup_id, (SELECT count(*) FROM dbio_1.cf1) FROM dbio.setup").fetchone()
        assert conn.execute("SHOW wal_level").fetchone()[0] == "replica"  # streaming again for the runs
    for name in ("standby1", "standby2"):
        assert f"{name}: holds setup {setup_id}, replayed from the primary" in done.out
        with cluster.connect(name, "dbio") as conn:
            assert conn.execute("SELECT setup_id, (SELECT count(*) FROM dbio_1.cf1) FROM dbio.setup").fetchone() \
                == (setup_id, rows)
    again = dbio("setup", *cluster.args())  # already loaded: nothing is copied again
    assert again.code == 0 and "nothing to do" in again.out and "copying" not in again.text
    assert f"standby2: holds setup {setup_id}" in again.out


def test_nodes_restricts_the_run_to_the_members_named(cluster):
    assert dbio("setup", *cluster.args()).code == 0
    unknown = dbio("run", *cluster.args("--nodes", "primary,standby7"))
    assert unknown.code == 2 and "has no member standby7 (it has primary, standby1, standby2)" in unknown.err
    assert len(unknown.err.strip().splitlines()) == 1
    done = dbio("run", *cluster.args("--nodes", "primary", "-t", "2", "--label", "primary-only"))
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert [(n["name"], n["role"]) for n in doc["nodes"]] == [("primary", "primary")]
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] > 0


def test_a_run_over_the_primary_and_two_standbys(cluster):
    assert dbio("setup", *cluster.args()).code == 0
    done = dbio("run", *cluster.args("-t", "3", "--update-pct", "0", "--label", "cluster"))
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert [(n["name"], n["role"]) for n in doc["nodes"]] == [("primary", "primary"), ("standby1", "standby"),
                                                              ("standby2", "standby")]
    assert [s["node"] for s in doc["sessions"]] == ["primary", "standby1", "standby2"]
    assert all(n["figures"]["load_profile"]["physical_reads_per_s"] > 0 for n in doc["nodes"])
    assert doc["cluster"]["read_only_nodes"] == ["standby1", "standby2"] and doc["cluster"]["start_agreed"] == "nodes"


def test_a_stall_on_one_node_acts_on_its_sessions_only(cluster):
    """--event AT=stall:D@NODE: that node's sessions frozen, the others' running on; its figures on its node's
    series, each other node's beside them."""
    assert dbio("setup", *cluster.args()).code == 0
    base = [*cluster.place, *SHARED, "--results-dir", str(cluster.results), *over(WORKLOAD, "--run-time", "10s"),
            "--nodes", "primary,standby1", "-t", "2", "--update-pct", "0"]
    unknown = dbio("run", *base, "--event", "4s=stall:3s@standby7")
    assert unknown.code == 2 and "--event 4s=stall:3s@standby7: the run has no node standby7" in unknown.err
    assert len(unknown.err.strip().splitlines()) == 1
    done = dbio("run", *base, "--label", "stall-one", "--event", "4s=stall:3s@standby1")
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    [record] = doc["disruptions"]
    assert record["node"] == "standby1" and record["outcome"] == "done" and record["processes"] == 1
    [dip] = doc["figures"]["disruptions"]
    assert dip["node"] == "standby1" and dip["floor_pct"] < 25, dip  # its one session frozen
    primary = dip["other_nodes"]["primary"]
    # never stopped: its reads went on (its lowest second may still dip on a loaded host, never to the frozen one's)
    assert primary["floor_pct"] > dip["floor_pct"] + 20 and primary["reads_lost"] < dip["reads_lost"] / 2, dip
    # the run as a whole: its work point waits for the frozen session, so it has a gap, or one node's share of a dip
    assert dip["run"].get("absent") or dip["run"]["floor_pct"] > dip["floor_pct"], dip
    assert "4s=stall:3s@standby1" in (result_dir(done) / "report.txt").read_text()


@pytest.mark.skipif(os.geteuid() != 0 or not (blkio_throttle.BLKIO / blkio_throttle.LIMIT_FILE).is_file(),
                    reason="the throttle takes root and the cgroup v1 blkio controller")
def test_a_throttle_on_one_node_limits_its_reads_only(cluster):
    assert dbio("setup", *cluster.args()).code == 0
    done = dbio("run", *cluster.place, *SHARED, "--results-dir", str(cluster.results),
                *over(WORKLOAD, "--run-time", "10s"), "--nodes", "primary,standby1", "-t", "2", "--update-pct", "0",
                "--label", "throttle-one", "--event", "3s=throttle:200:4s@standby1")
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    [record] = doc["disruptions"]
    assert record["node"] == "standby1" and record["outcome"] == "done" and record["iops"] == 200
    [dip] = doc["figures"]["disruptions"]
    assert dip["node"] == "standby1" and dip["before_reads_per_s"] > 400, dip
    assert dip["floor_reads_per_s"] <= 200 * 1.2, dip
    assert dip["other_nodes"]["primary"]["floor_reads_per_s"] > 400, dip  # not limited


def test_a_bad_standby_data_dir_is_refused_and_nothing_is_made(cluster):
    a_file = cluster.base / "a-file"
    a_file.write_text("not a directory")
    for bad, why in ((a_file, "is a file, not a directory"),
                     (cluster.base / "new" / "cluster" / "inside", "is inside the instance's data directory")):
        data_dir = cluster.base / "new" / "cluster"
        done = dbio("instance", "init", "--data-dir", str(data_dir), *SHARED, "--standbys", "1",
                    "--standby-data-dir", str(bad))
        assert done.code == 2, done.text
        assert why in done.err and len(done.err.strip().splitlines()) == 1
        assert not data_dir.exists()
    assert a_file.read_text() == "not a directory"


def test_an_older_record_without_members_still_reads(instance):
    """The shared instance of the other tests, its record as dbio wrote it before standbys."""
    record = instance.data_dir / "dbio-instance.json"
    original = record.read_text()
    data = json.loads(original)
    data.pop("members", None)
    record.write_text(json.dumps(data))
    try:
        done = dbio("instance", "status", "--data-dir", str(instance.data_dir))
        assert done.code == 0, done.text
        assert "replay lag" not in done.out  # one member: no members table
    finally:
        record.write_text(original)
