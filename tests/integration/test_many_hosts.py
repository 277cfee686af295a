"""Many hosts, one result: three independent embedded instances (as three hosts would each have
their own), three `dbio run` processes launched at once with one --start-at, then `dbio merge`.

The three runs share nothing but the agreed instant: each is its own process against its own
server, so their windows line up only through --start-at. Each run also shows --start-at on the
real engine: the release writes the agreed start and the window opens at the agreed instant.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone

import pytest

from tests import forked_dbio
from tests.integration.conftest import SMALL, Done, Instance, dbio, launch_margin, load_result, result_dir
from tests.lateness import Lateness

HOSTS = {"h1": 1, "h2": 1, "h3": 2}  # name -> sessions: unequal, so a node's figures are not interchangeable
WARMUP = 1.0  # SMALL's
RUN_TIMEOUT = 180


@pytest.fixture(scope="module")
def hosts(workdir, instance, second):
    """Three instances, each loaded: the session's two (a database of their own) and one made here,
    destroyed at the end whatever happened."""
    root = workdir / "many-hosts"
    root.mkdir()
    own = Instance(root / "h3", root / "h3" / "instance", root / "results")
    made = {"h1": instance, "h2": second, "h3": own}
    try:
        done = dbio("instance", "init", "--data-dir", str(own.data_dir), "--shared-buffers", "16MiB")
        assert done.code == 0, done.text
        for name, inst in made.items():
            done = dbio("setup", *inst.args("many_hosts", *SMALL, "--allow-cached", "-t", str(HOSTS[name])))
            assert done.code == 0, done.text
        yield made
    finally:
        dbio("instance", "destroy", "--yes", "--data-dir", str(own.data_dir))
        assert not own.data_dir.exists()


def _launch(inst: Instance, name: str, stamp: str) -> forked_dbio.Started:
    args = inst.args("many_hosts", *SMALL, "--allow-cached", "-t", str(HOSTS[name]), "--label", name,
                     "--start-at", stamp)
    return forked_dbio.start(["run", *args], env={**os.environ, "COLUMNS": "200"})


def _node_reads(node: dict) -> float:
    """A node's physical reads over its own window, from its own figures."""
    f = node["figures"]
    return f["load_profile"]["physical_reads_per_s"] * f["window_seconds"]


def test_three_hosts_at_one_start_merge_into_one_result(hosts, workdir):
    # run refuses less than 10 s + warm-up ahead; a fixed 5 s for three interpreters' start was too little at a
    # load of 6 (7 s went by before the check): the margin follows what this host just took
    margin = launch_margin(lambda stamp: ["run", *hosts["h1"].args("many_hosts", *SMALL, "--allow-cached", "-t", "1",
                                                                   "--start-at", stamp)])
    window_at = time.time() + WARMUP + 10 + margin
    stamp = datetime.fromtimestamp(window_at, timezone.utc).isoformat()
    directories, docs = {}, {}
    with Lateness() as late:  # how late this host wakes a waiting process meanwhile: the bounds below allow for it
        procs = {name: _launch(inst, name, stamp) for name, inst in hosts.items()}
        outputs = {name: proc.communicate(timeout=RUN_TIMEOUT) for name, proc in procs.items()}
    for name, proc in procs.items():
        out, err = outputs[name]
        assert proc.returncode == 0, out + err
        directories[name] = result_dir(Done(proc.returncode, out, err))
        docs[name] = load_result(directories[name])
        assert docs[name]["status"] == "complete"

    # Every release wrote the agreed start and every window opened at the agreed instant, so within
    # a second of each other.
    for name, doc in docs.items():
        timeline = doc["timeline"]
        assert datetime.fromisoformat(timeline["start"]).timestamp() == pytest.approx(window_at - WARMUP, abs=0.002)
        assert 0 <= timeline["released_late_seconds"] < late.allow(0.3), (name, timeline, late.worst)
        assert abs(timeline["clock_offset_seconds"]) < 0.1  # one host: the server's clock is this host's
    opened = {n: datetime.fromisoformat(d["timeline"]["window_start"]).timestamp() for n, d in docs.items()}
    assert max(opened.values()) - min(opened.values()) < late.allow(1.0), (opened, late.worst)
    assert all(abs(t - window_at) < late.allow(0.3) for t in opened.values()), (window_at, opened, late.worst)

    out = workdir / "many-hosts" / "merged"
    merged = dbio("merge", *(str(directories[n]) for n in HOSTS), "--out", str(out))
    assert merged.code == 0, merged.text
    assert "their windows overlap for" in merged.out  # the overlap it used, stated
    doc = load_result(out)
    assert doc["format_version"] == 2
    assert [n["name"] for n in doc["nodes"]] == list(HOSTS)
    assert [m["name"] for m in doc["merged_from"]] == list(HOSTS)
    timeline = doc["timeline"]
    assert 1.0 < timeline["overlap_seconds"] <= timeline["window_seconds"] + 0.01
    assert f"overlap for {timeline['overlap_seconds']:.1f} s" in doc["events"][0]["message"]

    # The total: each node's reads over its own window add up to the total's reads over the mean window.
    nodes_reads = [_node_reads(n) for n in doc["nodes"]]
    assert all(r > 0 for r in nodes_reads)
    total = doc["figures"]["load_profile"]["physical_reads_per_s"] * doc["figures"]["window_seconds"]
    assert total == pytest.approx(sum(nodes_reads), rel=1e-6)
    assert doc["totals"]["selects"] == sum(d["totals"]["selects"] for d in docs.values())
    assert [s["node"] for s in doc["sessions"]] == [n for n, k in HOSTS.items() for _ in range(k)]
    assert "\nNodes\n" in (out / "report.txt").read_text()
