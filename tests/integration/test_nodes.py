"""A run over several servers (nodes): two embedded instances, sessions dealt to both, each node's
figures and their total; one server given twice is refused."""

from __future__ import annotations

import pytest

from tests.integration.conftest import dbio, load_result, result_dir

WORKLOAD = ["--scale", "32MiB", "--scan-table-size", "0", "--warmup", "1s", "--run-time", "2s"]


def test_a_run_over_two_servers_has_each_node_and_the_total(instance, second):
    for inst in (instance, second):
        inst.create_database("nodes")
    dsns = ["--dsn", instance.conninfo("nodes"), "--dsn", second.conninfo("nodes")]
    common = [*dsns, "--results-dir", str(instance.results), *WORKLOAD]
    done = dbio("setup", *common)
    assert done.code == 0, done.text
    done = dbio("run", *common, "-t", "4", "--label", "two-nodes")
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert doc["status"] == "complete" and doc["format_version"] == 2
    assert [n["name"] for n in doc["nodes"]] == ["node1", "node2"]
    assert [s["node"] for s in doc["sessions"]] == ["node1", "node2", "node1", "node2"]
    reads = [n["figures"]["load_profile"]["physical_reads_per_s"] for n in doc["nodes"]]
    assert all(r > 0 for r in reads)
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(sum(reads), rel=0.05)
    statements = [n["figures"]["load_profile"]["statements_per_s"] for n in doc["nodes"]]
    assert doc["figures"]["load_profile"]["statements_per_s"] == pytest.approx(sum(statements), rel=0.05)
    # each node's own processes: its sessions' CPU, from /proc (both servers run on this host)
    cpu = [n["figures"]["cpu"]["db_cpu_seconds"] for n in doc["nodes"]]
    assert all(c and c > 0 for c in cpu)
    assert doc["figures"]["cpu"]["db_cpu_seconds"] == pytest.approx(sum(cpu), rel=1e-6)
    assert all(n["figures"]["cpu"]["host"] is None for n in doc["nodes"])  # the host's CPU is the run's
    ports = {n["server"]["description"].split(" port ")[1].split(",")[0] for n in doc["nodes"]}
    assert len(ports) == 2  # two servers
    report = (result_dir(done) / "report.txt").read_text()
    assert "\nNodes\n" in report and "node2" in report
    for inst in (instance, second):  # nothing of the run is left on either server
        with inst.connect("nodes") as conn:
            assert conn.execute("SELECT count(*) FROM dbio.run_control").fetchone()[0] == 0


def test_one_server_given_twice_is_refused(instance):
    instance.create_database("nodes")
    instance.create_database("nodes_again")
    done = dbio("run", "--dsn", instance.conninfo("nodes"), "--dsn", instance.conninfo("nodes_again"),
                "--results-dir", str(instance.results), *WORKLOAD)
    assert done.code == 2, done.text
    assert "are the same server" in done.err and "a node is a server" in done.err
