"""A run over a primary and its hot standby (a real streaming replica of an embedded instance): the
standby's sessions only read, UPDATEs run on the primary alone, one start agreed in advance for
both; update pct > 0 on read-only servers alone is refused before anything starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import dbio, load_result, result_dir, wait_for
from tests.integration.standby import DATABASE, destroy, make_primary, make_standby

WORKLOAD = ["--scale", "32MiB", "--warmup", "1s", "--run-time", "2s", "-t", "4"]


@pytest.fixture(scope="module")
def cluster(workdir):
    root = workdir / "replication"
    root.mkdir()
    primary = make_primary(root)
    standby = None
    try:
        standby = make_standby(primary, root / "standby")  # after dbio setup, which installed the loop too
        yield primary, standby
    finally:
        destroy(primary, standby)


def _run(primary, standby, *extra: str):
    return dbio("run", "--dsn", primary.conninfo(DATABASE), "--dsn", standby.conninfo(), "--results-dir",
                str(primary.results), *WORKLOAD, *extra)


def test_a_standby_alone_runs_the_read_only_loop(cluster):
    """First in this module: no run has been on the primary, so the loop came with dbio setup."""
    primary, standby = cluster
    done = dbio("run", "--dsn", standby.conninfo(), "--results-dir", str(primary.results), *WORKLOAD,
                "--label", "standby-alone")
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert doc["status"] == "complete", doc["status_reason"]
    assert doc["nodes"][0]["role"] == "standby" and doc["cluster"]["update_capable_sessions"] == 0
    assert doc["cluster"]["start_agreed"] == "nodes"
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] > 0
    assert all(s["updates"] == 0 for s in doc["sessions"])


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
    assert (sum(primary_updates) > 0) == (update_pct > 0) and (max(primary_updates) == 0) == (update_pct == 0), \
        (doc["sessions"], doc["events"], doc["timeline"])
    with primary.connect(DATABASE) as conn:  # nothing of the run is left on the primary
        assert conn.execute("SELECT count(*) FROM dbio.run_control").fetchone()[0] == 0
    # replication, read on the standby in every sample: WAL received and replay lag, per node and in the report
    import json

    samples = [json.loads(line) for line in (result_dir(done) / "samples.jsonl").read_text().splitlines()]
    # a node that did not answer in time is left out of a sample (None: a gap of its own, on a loaded host)
    taken = [s for s in samples if not s.get("missing") and s.get("nodes")]
    standby_read = [s for s in taken if s["nodes"].get("node2") is not None]
    primary_read = [s for s in taken if s["nodes"].get("node1") is not None]
    assert standby_read and primary_read
    assert all("replication" in s["nodes"]["node2"] for s in standby_read)
    assert all("replication" not in s["nodes"]["node1"] for s in primary_read)
    replication = by_node["node2"]["figures"]["replication"]
    assert replication["wal_received_mib_per_s"] is not None and replication["replay_lag_seconds_max"] is not None
    assert by_node["node1"]["figures"]["replication"] is None
    measured = [r for r in by_node["node2"]["series"] if r.get("phase") == "measured"]
    answered = [r for r in measured if r.get("reads_per_s") is not None]
    assert answered and all("replay_lag_mib" in r for r in answered)
    if update_pct:  # the primary's UPDATEs reach the standby as WAL
        assert replication["wal_received_mib_per_s"] > 0
    report = (result_dir(done) / "report.txt").read_text()
    assert "standby" in report and "Replication (each standby" in report


def test_updates_on_read_only_servers_alone_are_refused(cluster):
    primary, standby = cluster
    done = dbio("run", "--dsn", standby.conninfo(), "--results-dir", str(primary.results), *WORKLOAD,
                "--update-pct", "20", "--label", "refused")
    assert done.code == 2, done.text
    assert "read-only" in done.err and "update_pct = 0" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert not list(primary.results.glob("*refused*"))


def _start(primary, standby, *extra: str) -> subprocess.Popen:
    """A run over the primary and its standby, in the background (a test acts on a server meanwhile)."""
    return subprocess.Popen([sys.executable, "-m", "dbio", "run", "--dsn", primary.conninfo(DATABASE), "--dsn",
                             standby.conninfo(), "--results-dir", str(primary.results), "--scale", "32MiB",
                             "--warmup", "1s", "-t", "4", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_standby_stopped_mid_run_is_reported_and_the_primary_finishes(cluster):
    """pg_ctl stop -m immediate of the standby inside the window: the run exits with a result, the
    primary's figures cover the whole window, the standby's up to its stop, the totals marked partial."""
    import time

    primary, standby = cluster
    proc = _start(primary, standby, "--run-time", "5s", "--label", "standby-stops")
    try:
        deadline = time.monotonic() + 90
        run_dirs = []
        while time.monotonic() < deadline:  # inside the window: a measured sample was written
            run_dirs = list(primary.results.glob("*standby-stops"))
            samples = run_dirs[0] / "samples.jsonl" if run_dirs else None
            if samples is not None and samples.exists() and '"phase":"measured"' in samples.read_text():
                break
            time.sleep(0.2)
        time.sleep(1.5)
        standby.stop("immediate")
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        standby.start()  # for the tests after this one
    assert proc.returncode == 0, out + err
    doc = load_result(run_dirs[0])
    assert doc["status"] == "complete", doc["status_reason"]
    by_node = {n["name"]: n for n in doc["nodes"]}
    stopped = by_node["node2"]["stopped"]
    assert stopped["since_start"] > 1.0 and stopped["at"]
    assert by_node["node1"]["figures"]["window_seconds"] == pytest.approx(5.0, abs=0.5)
    covers = stopped["figures_cover_seconds"]
    assert covers is None or covers < 4.5
    assert "stopped" not in by_node["node1"]
    assert doc["cluster"]["stopped_nodes"] == ["node2"] and doc["cluster"]["partial"]
    assert all(s["state"] == "done" for s in doc["sessions"] if s["node"] == "node1")
    report = (run_dirs[0] / "report.txt").read_text()
    assert "node2 stopped" in report and "totals are partial" in report


def test_a_standby_frozen_mid_run_is_lost_within_seconds_and_the_primary_finishes(cluster):
    """Every process of the standby stopped (SIGSTOP: its sockets accept, nothing answers) 1 s into a 4 s
    window: dbio hung for ever. Now the standby is lost once silent for liveness.SILENT_AFTER, the run ends
    seconds later with the primary's figures over the whole window (its end reading at the deadline, not at
    the loss), the standby's up to its last reading, each read counted once, and no stall claimed."""
    from dbio.run.liveness import SILENT_AFTER
    from tests.integration.test_faults import measuring
    from tests.integration.test_stall import frozen

    primary, standby = cluster
    proc = _start(primary, standby, "--run-time", "4s", "--label", "standby-frozen")
    try:
        directory = wait_for(measuring(primary.results, "standby-frozen"), timeout=90, what="the measured window")
        with frozen(pgdata=standby.pgdata) as freeze:
            # it hung for ever: given the silence, the result and its reports (HTML charts take seconds)
            out, err = proc.communicate(timeout=SILENT_AFTER + 30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out + err
    doc = load_result(directory)
    # lost SILENT_AFTER after its last answer, then the run ended at once (its deadline had passed)
    ended = next(e["t"] for e in doc["events"] if e["kind"] == "end")
    assert ended - freeze["stopped_at"] < SILENT_AFTER + 2, (doc["events"], freeze)
    assert doc["status"] == "complete", doc["status_reason"]
    by_node = {n["name"]: n for n in doc["nodes"]}
    stopped = by_node["node2"]["stopped"]
    assert f"answered nothing for {SILENT_AFTER:.0f} s: frozen, or unreachable" in stopped["reason"], stopped
    window = doc["figures"]["window_seconds"]
    assert window == pytest.approx(4.0, abs=0.5), (doc["events"], doc["timeline"], freeze, doc["cluster"])
    assert by_node["node1"]["figures"]["window_seconds"] == pytest.approx(window)
    assert by_node["node1"]["figures"]["load_profile"]["physical_reads_per_s"] > 0
    covers = stopped["figures_cover_seconds"]
    assert covers is None or covers < window - 1.0, (covers, window)
    reads = [n["normalized"]["end"]["data"]["reads"] - n["normalized"]["begin"]["data"]["reads"]
             for n in doc["nodes"]]
    total = doc["normalized"]["end"]["data"]["reads"] - doc["normalized"]["begin"]["data"]["reads"]
    assert total == pytest.approx(sum(reads))
    assert doc["stalls"] == [], doc["stalls"]
    assert doc["cluster"]["stopped_nodes"] == ["node2"] and doc["cluster"]["partial"]
    assert all(s["state"] == "done" for s in doc["sessions"] if s["node"] == "node1")
    with standby.connect() as conn:  # continued, the standby answers again: its abandoned backends are gone
        wait_for(lambda: conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'dbio:%' "
                                      "AND pid <> pg_backend_pid()").fetchone()[0] == 0,
                 timeout=15, what="the standby's dbio backends to end")


def test_setup_over_a_primary_and_its_standby_loads_the_primary_only(cluster):
    primary, standby = cluster
    done = dbio("setup", "--dsn", primary.conninfo(DATABASE), "--dsn", standby.conninfo(), "--scale", "32MiB",
                "--scan-table-size", "0")
    assert done.code == 0, done.text
    assert "read-only server (hot standby)" in done.out and "replicated from its primary" in done.out


def test_teardown_of_a_standby_drops_nothing_there(cluster):
    primary, standby = cluster
    done = dbio("teardown", "--yes", "--dsn", standby.conninfo())
    assert done.code == 0, done.text
    assert "read-only server (hot standby): nothing dropped" in done.out
    with standby.connect() as conn:  # the load is still there, as on its primary
        assert conn.execute("SELECT count(*) FROM dbio.setup").fetchone()[0] == 1


def test_weights_and_names_spread_the_sessions(cluster):
    primary, standby = cluster
    done = _run(primary, standby, "--weights", "3,1", "--node-names", "east,west", "--label", "weighted")
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert [n["name"] for n in doc["nodes"]] == ["east", "west"]
    assert [s["node"] for s in doc["sessions"]].count("east") == 3
    by_node = {n["name"]: n for n in doc["nodes"]}
    assert by_node["east"]["weight"] == 3.0 and len(by_node["west"]["sessions"]["numbers"]) == 1
    report = (result_dir(done) / "report.txt").read_text()
    assert "(weight 3)" in report


def test_a_standby_tells_this_dbio_s_loop_from_another_s(cluster):
    """A loop whose body differs from this dbio's (an older or newer dbio installed it on the primary)
    is not taken for it; the primary's next setup or run brings this one back."""
    from dbio.engines.postgres import workload

    primary, standby = cluster
    with standby.connect() as conn:
        assert workload.has_workload(conn)
    with primary.connect(DATABASE) as conn:
        body = workload.loop_body()
        text = (Path(workload.__file__).parent / "sql" / "slice.sql").read_text()
        conn.execute(text.replace(body, body.replace("BEGIN", "BEGIN\n  -- another dbio's loop", 1)))
        lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        assert not workload.has_workload(conn)
    with standby.connect() as conn:
        wait_for(lambda: conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()[0],
                 timeout=30, what="the standby to replay the changed loop")
        assert not workload.has_workload(conn)
    done = dbio("setup", "--dsn", primary.conninfo(DATABASE), "--scale", "32MiB", "--scan-table-size", "0")
    assert done.code == 0, done.text  # already loaded: the loop is installed again all the same
    with primary.connect(DATABASE) as conn:
        assert workload.has_workload(conn)
        lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    with standby.connect() as conn:
        wait_for(lambda: conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()[0],
                 timeout=30, what="the standby to replay this dbio's loop")
        assert workload.has_workload(conn)


def _frozen_run(primary, standby, label: str, when, *, run_time: str = "4s"):
    """A run whose standby is frozen (every process SIGSTOPped) once when(directory) is true, and thawed only
    after the run ended: its exit, output, run directory and the freeze's span."""
    from dbio.run.liveness import SILENT_AFTER
    from tests.integration.test_stall import frozen

    proc = _start(primary, standby, "--run-time", run_time, "--label", label)
    try:
        directory = wait_for(lambda: next(iter(primary.results.glob(f"*{label}")), None), timeout=90,
                             what="the run directory")
        wait_for(lambda: when(directory), timeout=90, what="the instant to freeze the standby")
        with frozen(pgdata=standby.pgdata) as freeze:
            out, err = proc.communicate(timeout=SILENT_AFTER + 40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    with standby.connect() as conn:  # thawed, the standby answers again and its abandoned backends end
        wait_for(lambda: conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'dbio:%' "
                                      "AND pid <> pg_backend_pid()").fetchone()[0] == 0,
                 timeout=15, what="the standby's dbio backends to end")
    return proc.returncode, out, err, directory, freeze


def _after(seconds: float):
    """True from seconds after the first call (the run directory appeared)."""
    import time

    at: list[float] = []

    def check(directory) -> bool:
        at.append(time.monotonic())
        return at[-1] - at[0] >= seconds
    return check


def test_a_standby_frozen_while_the_sessions_connect_is_lost_before_the_start(cluster):
    """Frozen 0.3 s after the run directory appeared (its sessions connecting or at the barrier): both nodes
    were declared stopped and dbio failed with the server's error, no result. The primary answered all along:
    the run ends with its figures over the whole window, the standby named as lost before the start."""
    primary, standby = cluster
    code, out, err, directory, freeze = _frozen_run(primary, standby, "frozen-at-connect", _after(0.3))
    assert code == 0, out + err
    doc = load_result(directory)
    assert doc["status"] == "complete", doc["status_reason"]
    by_node = {n["name"]: n for n in doc["nodes"]}
    assert "stopped" not in by_node["node1"], by_node["node1"].get("stopped")
    assert doc["cluster"]["stopped_nodes"] == ["node2"] and doc["cluster"]["partial"]
    assert "node2 stopped before the start" in out + err, out + err
    assert by_node["node1"]["figures"]["window_seconds"] == pytest.approx(4.0, abs=0.6), doc["events"]
    assert by_node["node1"]["figures"]["load_profile"]["physical_reads_per_s"] > 0
    assert all(s["state"] == "done" for s in doc["sessions"] if s["node"] == "node1")
    assert "measured window lasted" not in out, out  # no short window (the cache may hold part of 32 MiB)


def _warming_up(directory) -> bool:
    """The first sample (written at the release, RELEASE_AHEAD before the start) plus 1.3 s: in the warm-up."""
    import time

    samples = directory / "samples.jsonl"
    if not samples.exists() or not samples.read_text().strip():
        return False
    from dbio.run.agreed_start import RELEASE_AHEAD

    time.sleep(RELEASE_AHEAD + 0.3)
    return True


def test_a_standby_frozen_during_the_warm_up_does_not_hold_the_window(cluster):
    """Frozen in the warm-up: the window opened only when the standby was lost, past the deadline, and the run
    said VALID over 14 ms. Now it opens on time without the standby's sessions (its node silent since the
    window's planned opening), the primary's figures cover about the run time, the loss is said in words."""
    primary, standby = cluster
    code, out, err, directory, freeze = _frozen_run(primary, standby, "frozen-in-warmup", _warming_up)
    assert code == 0, out + err
    doc = load_result(directory)
    assert doc["status"] == "complete", doc["status_reason"]
    by_node = {n["name"]: n for n in doc["nodes"]}
    assert doc["cluster"]["stopped_nodes"] == ["node2"]
    assert "node2 stopped during the warm-up" in out + err, out + err
    window = by_node["node1"]["figures"]["window_seconds"]
    assert 2.5 <= window <= 4.6, (window, doc["events"])
    assert by_node["node1"]["figures"]["load_profile"]["physical_reads_per_s"] > 0
    assert all(s["state"] == "done" for s in doc["sessions"] if s["node"] == "node1")
    assert "measured window lasted" not in out, out  # no short window (the cache may hold part of 32 MiB)
    # the result as it was before (its window 0.014 s, opened at the loss): rendered again, it is NOT VALID
    import json

    doc["figures"]["window_seconds"] = by_node["node1"]["figures"]["window_seconds"] = 0.014
    doc["events"] = [{**e, "since_start": 8.3} if e["kind"] == "window_open" else e for e in doc["events"]]
    (directory / "result.json").write_text(json.dumps(doc))
    again = dbio("report", str(directory))
    assert again.code == 0, again.text
    assert again.out.startswith("NOT VALID: the measured window lasted 0.01 s of the 4 s asked: it opened +8.3 s "
                                "after the start, not after the 1 s warm-up; node2 stopped during the warm-up"), \
        again.out


def test_a_run_keeps_this_dbio_s_loop_where_it_is_already(cluster):
    """Each run on the primary dropped and made the loop again (another procedure): a standby's sessions that had
    found the one replaced failed when the drop was replayed ("cache lookup failed for function"). The loop
    there, this dbio's, is kept; the run over both nodes finds it on each."""
    primary, standby = cluster

    def loop_oid(conn) -> int:
        return conn.execute("SELECT 'dbio.slice'::regproc::oid").fetchone()[0]

    with primary.connect(DATABASE) as conn:
        before = loop_oid(conn)
    done = _run(primary, standby, "--label", "loop-kept")
    assert done.code == 0, done.text
    assert load_result(result_dir(done))["status"] == "complete"
    with primary.connect(DATABASE) as conn:
        assert loop_oid(conn) == before
