"""A run over a primary and its hot standby (a real streaming replica of an embedded instance): the
standby's sessions only read, UPDATEs run on the primary alone, one start agreed in advance for
both; update pct > 0 on read-only servers alone is refused before anything starts."""

from __future__ import annotations

import pytest

from tests.integration.conftest import dbio, load_result, result_dir
from tests.integration.standby import DATABASE, destroy, make_primary, make_standby

WORKLOAD = ["--scale", "32MiB", "--warmup", "1s", "--run-time", "3s", "-t", "4"]


@pytest.fixture(scope="module")
def cluster(workdir):
    root = workdir / "replication"
    root.mkdir()
    primary = make_primary(root)
    standby = None
    try:
        standby = make_standby(primary, root / "standby")
        yield primary, standby
    finally:
        destroy(primary, standby)


def _run(primary, standby, *extra: str):
    return dbio("run", "--dsn", primary.conninfo(DATABASE), "--dsn", standby.conninfo(), "--results-dir",
                str(primary.results), *WORKLOAD, *extra)


@pytest.mark.parametrize("update_pct", [0, 20])
def test_a_standby_reads_and_only_the_primary_updates(cluster, update_pct):
    primary, standby = cluster
    done = _run(primary, standby, "--update-pct", str(update_pct), "--label", f"standby-{update_pct}")
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert doc["status"] == "complete", doc["status_reason"]
    assert [(n["name"], n["role"]) for n in doc["nodes"]] == [("node1", "primary"), ("node2", "standby")]
    assert doc["nodes"][1]["capabilities"]["read_only"] is True
    cluster_facts = doc["cluster"]
    assert cluster_facts["read_only_nodes"] == ["node2"]
    assert cluster_facts["update_capable_sessions"] == 2
    assert cluster_facts["start_agreed"] == "nodes"
    assert cluster_facts["start_skew_seconds"] is not None and cluster_facts["start_skew_seconds"] < 0.05
    by_node = {n["name"]: n for n in doc["nodes"]}
    assert by_node["node1"]["sessions"]["ranges"] == "1, 3" and by_node["node2"]["sessions"]["ranges"] == "2, 4"
    for n in doc["nodes"]:
        assert n["figures"]["load_profile"]["physical_reads_per_s"] > 0
        assert abs(n["start"]["clock_offset_s"]) < 0.05  # one host, one clock
    standby_updates = [s["updates"] for s in doc["sessions"] if s["node"] == "node2"]
    primary_updates = [s["updates"] for s in doc["sessions"] if s["node"] == "node1"]
    assert standby_updates == [0, 0]
    assert (min(primary_updates) > 0) == (update_pct > 0) and (max(primary_updates) == 0) == (update_pct == 0)
    with primary.connect(DATABASE) as conn:  # nothing of the run is left on the primary
        assert conn.execute("SELECT count(*) FROM dbio.run_control").fetchone()[0] == 0
    report = (result_dir(done) / "report.txt").read_text()
    assert "standby" in report


def test_updates_on_read_only_servers_alone_are_refused(cluster):
    primary, standby = cluster
    done = dbio("run", "--dsn", standby.conninfo(), "--results-dir", str(primary.results), *WORKLOAD,
                "--update-pct", "20", "--label", "refused")
    assert done.code == 2, done.text
    assert "read-only" in done.err and "update_pct = 0" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert not list(primary.results.glob("*refused*"))
