"""Setup, verify and run against the embedded PostgreSQL 18: the SLOB semantics, end to end."""

import json
from datetime import datetime
from pathlib import Path

import pytest

from tests.integration.conftest import BRIEF, SMALL, dbio, load_result, over, result_dir


def setup_ok(instance, db, *extra):
    done = dbio("setup", *instance.args(db, *over(SMALL, *extra)), "--verify")
    assert done.code == 0, done.text
    assert "verified: all" in done.out
    return done


def run_ok(instance, db, label, *extra):
    done = dbio("run", *instance.args(db, *over(SMALL, "--label", label, *extra)))
    assert done.code == 0, done.text
    directory = result_dir(done)
    return directory, load_result(directory)


def test_single_schema_read_only(instance, loaded_db):
    again = dbio("setup", *instance.args(loaded_db, *SMALL, "-t", "2"))
    assert again.code == 0 and "already loaded" in again.out
    # 3 s: a 2 s window's second sample can fall on its end on a loaded host (its first came 0.5 s late)
    directory, doc = run_ok(instance, loaded_db, "readonly", "-t", "2", "--html-report", "--run-time", "3s")
    assert doc["status"] == "complete"
    assert (directory / "report.txt").read_text().split("\n", 1)[1].startswith("dbio report")
    html = (directory / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") >= 4
    assert doc["plans"]["select"]["nodes"] == ["Aggregate", "Index Scan"]
    assert [s["state"] for s in doc["sessions"]] == ["done", "done"]
    assert {s["schema"] for s in doc["sessions"]} == {1}
    totals = doc["totals"]
    assert totals["updates"] == 0 and totals["selects"] > 0
    assert totals["rows"] == totals["selects"] * 8  # every range holds work_unit rows
    f = doc["figures"]
    assert f["load_profile"]["physical_reads_per_s"] > 0
    assert 2.5 < f["window_seconds"] < 4.0
    assert f["latency"]["avg_read_us"] > 0
    assert f["latency"]["statements"]["select"]["count"] == totals["selects"]
    # each session's wait for a CPU (/proc schedstat) at both ends of the window, per read and as a share
    waited = [doc["snapshots"][end]["os"]["session_run_delay"] for end in ("begin", "end")]
    assert len(waited[0]) == len(waited[1]) == 2 and all(waited[1][p] >= waited[0][p] for p in waited[0])
    assert f["cpu"]["cpu_wait_seconds"] == pytest.approx(sum(waited[1][p] - waited[0][p] for p in waited[0]))
    assert f["cpu"]["cpu_wait_us_per_read"] >= 0 and 0 <= f["cpu"]["cpu_wait_pct"] <= 100
    assert "read_helper_run_delay" not in doc["snapshots"]["end"]["os"]  # io_method sync: the sessions read
    assert f["cpu"]["io_worker_cpu_wait_seconds"] is None
    # the whole server's CPU (the postmaster and every process of it) holds the sessions'; the rest is others'
    cpu = f["cpu"]
    # (read a few milliseconds apart, in clock ticks of 10 ms: within a few ticks)
    assert cpu["server_cpu_seconds"] >= cpu["db_cpu_seconds"] - 0.05 and cpu["db_cpu_seconds"] > 0
    # the servers' process trees and dbio's client, each counted once, fit in the host's busy time (the kernel's
    # interrupt ticks may overlap the processes' own time: what is left of other work is never below nothing)
    beyond = cpu["host"]["busy_seconds"] - cpu["server_cpu_seconds"] - cpu["dbio_client_cpu_seconds"]
    assert beyond > -0.05 * cpu["host"]["busy_seconds"], cpu
    assert cpu["other_cpu_seconds"] == pytest.approx(max(0.0, beyond - cpu["kernel_cpu_seconds"]))
    caps = doc["capabilities"]
    assert caps["direct_io"] and caps["local"]
    # the facts PostgreSQL's probe declares, which reports and verdicts word themselves with
    assert caps["times_data_io"] and caps["times_redo_io"]  # the embedded instance turns both timings on
    assert caps["cache_name"] == "shared_buffers" and caps["maintenance_process"] == "autovacuum worker"
    assert caps["redo_directory"] == str(Path(caps["data_directory"]) / "pg_wal")
    assert caps["settings_shown"][0] == "shared_buffers" and "max_wal_size" in caps["settings_shown"]
    assert f["validity"]["cache_bytes"] == 16 << 20 and "shared_buffers_bytes" not in f["validity"]
    assert doc["environment"]["storage"]["wal"]["path"] == caps["redo_directory"]  # the WAL's own filesystem
    assert "checkpoints" in doc["normalized"]["end"]
    assert doc["setup"]["status"] == "ready" and doc["setup"]["mb_per_s"] > 0
    assert len([r for r in doc["series"] if r["phase"] == "measured"]) >= 2
    assert (directory / "samples.jsonl").stat().st_size > 0
    assert "password" not in (directory / "result.json").read_text().lower().replace("sslpassword", "")
    rerender = dbio("report", str(directory))
    assert rerender.code == 0 and rerender.out == (directory / "report.txt").read_text()
    markdown = dbio("report", str(directory / "result.json"), "--format", "md", "--out", str(directory / "r.md"))
    assert markdown.code == 0 and (directory / "r.md").read_text().split("\n\n", 1)[1].startswith("# dbio report")


def test_a_run_without_its_html_report_says_none_and_dbio_report_makes_it_later(instance, loaded_db):
    done = dbio("run", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "text-only", "--no-html-report"),
                env={"DBIO_HTML_REPORT": "true"})  # the flag over the environment
    assert done.code == 0, done.text
    directory = result_dir(done)
    assert sorted(p.name for p in directory.iterdir() if p.name.startswith("report")) == ["report.txt"]
    assert "report:" in done.out and "html:" not in done.out  # nothing asked for, nothing said missing
    doc = load_result(directory)
    assert doc["config"]["run"]["html_report"] is False and "html" not in (doc.get("files") or {})
    made = dbio("report", str(directory), "--format", "html", "--out", str(directory / "report.html"))
    assert made.code == 0, made.text
    assert (directory / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_update_pct_is_exact_and_updates_commit(instance, loaded_db):
    _, doc = run_ok(instance, loaded_db, "upd20", "-t", "2", "--update-pct", "20", "--redo-stress", "HEAVY", *BRIEF)
    for session in doc["sessions"]:
        assert abs(session["updates"] - 0.2 * session["iterations"]) <= 1, session
    f = doc["figures"]["load_profile"]
    assert f["commits_per_s"] >= f["updates_per_s"] * 0.95  # each UPDATE is committed
    assert f["wal_bytes_per_s"] > 0
    assert doc["plans"]["update"]["nodes"][-1] == "Index Scan"


def test_updates_touch_their_own_range_when_update_work_unit_is_set(instance, loaded_db):
    """pgio's and SLOB's UPDATE_WORK_UNIT: every UPDATE changes exactly its own number of rows."""
    _, doc = run_ok(instance, loaded_db, "upd-own-range", "-t", "2", "--update-pct", "50", "--work-unit", "8",
                    "--update-work-unit", "2", *BRIEF)
    totals = doc["totals"]
    assert totals["updates"] > 0 and totals["selects"] > 0
    assert totals["rows"] == 8 * totals["selects"] + 2 * totals["updates"]
    assert doc["config"]["workload"]["update_work_unit"] == 2


def test_multiple_schemas_with_scans(instance):
    setup_ok(instance, "multi", "--schemas", "2")
    _, doc = run_ok(instance, "multi", "scans", "--schemas", "2", "-t", "2", "--scan-pct", "10")
    assert sorted(s["schema"] for s in doc["sessions"]) == [1, 1, 2, 2]
    for session in doc["sessions"]:
        reads = session["selects"] + session["scans"]
        assert session["scans"] > 0 and abs(session["scans"] - 0.1 * reads) <= 1, session
    assert "scan" in doc["figures"]["latency"]["statements"]


def test_hot_spot_concentrates_reads_in_cache(instance, loaded_db):
    _, cold = run_ok(instance, loaded_db, "cold", *BRIEF)
    hot_dir, hot = run_ok(instance, loaded_db, "hotspot", "--hotspot", "--hotspot-size", "1MiB", "--hotspot-offset",
                          "4MiB", "--hotspot-frequency", "1")
    # Every statement goes to 128 blocks that stay in shared buffers: almost nothing is read.
    assert hot["figures"]["validity"]["blocks_read_per_row"] < 0.2
    assert cold["figures"]["validity"]["blocks_read_per_row"] > 0.3
    report = (hot_dir / "report.txt").read_text()
    assert "INVALID" in report and "this measures memory" in report


def test_a_hot_spot_s_parts_are_reported_apart(instance, loaded_db):
    """SLOB's default hot spot (every 3rd statement to 1 MiB that stays cached): its SELECTs are timed apart
    from the cold ones, which wait for the reads the whole run's read figures hold."""
    directory, doc = run_ok(instance, loaded_db, "hotparts", "--hotspot", "--hotspot-size", "1MiB",
                            "--hotspot-offset", "4MiB", "--hotspot-frequency", "3")
    totals, statements = doc["totals"], doc["figures"]["latency"]["statements"]
    hot, cold = statements["hot"], statements["select"]
    assert hot["count"] + cold["count"] == totals["selects"]  # each SELECT timed once, in one part
    assert abs(hot["count"] / totals["selects"] - 1 / 3) < 0.02
    assert totals["hot_rows"] == 8 * hot["count"]  # every hot range holds work_unit rows
    parts = doc["figures"]["hotspot"]
    assert parts["hot"]["mean_us"] == hot["mean_us"] and parts["cold"]["mean_us"] == cold["mean_us"]
    assert parts["cold"]["rows"] == totals["rows"] - totals["hot_rows"]
    # the storage part: its reads are the run's (the hot spot's blocks stay in shared buffers), one a cold row
    # but for those shared buffers hold (16 MiB of 32: about half; 0.497 was seen), and a cold SELECT waits for
    # its rows' reads; the hot SELECT reads nothing and is the faster
    reads = doc["figures"]["load_profile"]["physical_reads_per_s"] * doc["figures"]["window_seconds"]
    assert 0.3 < reads / parts["cold"]["rows"] < 1.2
    avg_read = doc["figures"]["latency"]["avg_read_us"]
    assert cold["mean_us"] > 0.5 * 8 * avg_read * reads / parts["cold"]["rows"]
    assert hot["mean_us"] < cold["mean_us"]
    report = (directory / "report.txt").read_text()
    assert "Hot spot: 33% of statements, avg" in report and "(memory); cold rows: avg" in report
    assert "SELECT (hot spot)" in report


def test_work_loop_and_think_time(instance, loaded_db):
    _, doc = run_ok(instance, loaded_db, "workloop", "-t", "2", "--run-time", "0", "--warmup", "0",
                    "--work-loop", "150", "--think-time-frequency", "50", "--think-time-min", "0.01",
                    "--think-time-max", "0.02")
    assert doc["status"] == "complete"
    assert [s["iterations"] for s in doc["sessions"]] == [150, 150]
    assert all(s["think_seconds"] > 0 for s in doc["sessions"])


def test_a_slob_conf_s_work_loop_counts_the_warm_up_and_its_script_brackets_the_window(instance, loaded_db, tmp_path):
    """SLOB's WORK_LOOP bounds each session's iterations from its start; its EXTERNAL_SCRIPT is called as the
    window opens (pre) and closes (post). Think time paces the loop (5 ms an iteration): about 200 of a
    session's 400 iterations fall in the 1 s warm-up, the rest in the window."""
    times = tmp_path / "times"
    script = tmp_path / "array-stats"
    script.write_text(f'#!/bin/sh\necho "$1 $(date +%s.%N)" >> {times}\n')
    script.chmod(0o700)
    conf = tmp_path / "slob.conf"
    conf.write_text("RUN_TIME=0\nWORK_LOOP=400\nTHREADS_PER_SCHEMA=2\nTHINK_TM_FREQUENCY=1\nTHINK_TM_MIN=.005\n"
                    f"THINK_TM_MAX=.005\nEXTERNAL_SCRIPT={script}\n")
    conf.chmod(0o600)
    done = dbio("run", *instance.args(loaded_db, "--scale", "32MiB", "--scan-table-size", "8MiB", "--warmup", "1s",
                                      "--label", "slobconf", "--slob-conf", str(conf)))
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert doc["status"] == "complete" and doc["config"]["workload"]["work_loop_scope"] == "session"
    assert [s["warmup_iterations"] + s["iterations"] for s in doc["sessions"]] == [400, 400]
    assert all(s["warmup_iterations"] > 0 and s["iterations"] > 0 for s in doc["sessions"])
    called = dict(line.split() for line in times.read_text().splitlines())
    timeline = doc["timeline"]
    for phase, end in (("pre", "window_start"), ("post", "window_end")):
        assert 0 <= float(called[phase]) - datetime.fromisoformat(timeline[end]).timestamp() < 0.5, (called, timeline)
    assert [(c["phase"], c["exit_status"]) for c in doc["external_script"]["calls"]] == [("pre", 0), ("post", 0)]


def test_setup_with_another_configuration_explains_and_reloads(instance):
    setup_ok(instance, "change")
    other = dbio("setup", *instance.args("change", "--scale", "40MiB", "--scan-table-size", "8MiB"))
    assert other.code == 2
    assert "different load (scale 4096 -> 5120)" in other.err and "--reload" in other.err
    reloaded = dbio("setup", *instance.args("change", "--scale", "40MiB", "--scan-table-size", "8MiB", "--reload"))
    assert reloaded.code == 0, reloaded.text
    bigger = dbio("run", *instance.args("change", *over(SMALL, "--scale", "48MiB"), "--label", "toobig"))
    assert bigger.code == 2 and "--scale = 6144 blocks (48 MiB): larger than the 5,120 rows loaded" in bigger.err


def test_interrupted_load_resumes(instance):
    setup_ok(instance, "resume", "--schemas", "3")
    with instance.connect("resume") as conn:  # make it look as if the load stopped before dbio_2 was done
        conn.execute("DROP TABLE dbio_2.cf1")
        conn.execute("DELETE FROM dbio.setup_tables WHERE schema_name = 'dbio_2'")
        conn.execute("UPDATE dbio.setup SET status = 'loading'")
    blocked = dbio("run", *instance.args("resume", *SMALL, "--schemas", "3", "--label", "blocked"))
    assert blocked.code == 2 and "was interrupted" in blocked.err
    done = dbio("setup", *instance.args("resume", *SMALL, "--schemas", "3"), "--verify")
    assert done.code == 0, done.text
    assert "resuming the interrupted load" in done.out and "3 of 4 tables were complete" in done.out
    assert "loading 1 of 4 tables" in done.out


def test_setup_again_without_its_options_finishes_an_interrupted_load(instance):
    # the interruption says "run dbio setup again to resume": that must work without repeating --scale
    loaded = dbio("setup", *instance.args("resumeplain", "--scale", "40MiB", "--scan-table-size", "8MiB"))
    assert loaded.code == 0, loaded.text
    with instance.connect("resumeplain") as conn:  # as if the load stopped before dbio_1 was done
        conn.execute("DROP TABLE dbio_1.cf1")
        conn.execute("DELETE FROM dbio.setup_tables WHERE schema_name = 'dbio_1'")
        conn.execute("UPDATE dbio.setup SET status = 'loading'")
    blocked = dbio("run", *instance.args("resumeplain", *BRIEF, "--label", "blocked"))
    assert blocked.code == 2 and "was interrupted" in blocked.err and "dbio setup again" in blocked.err
    assert "using the loaded data set" not in blocked.out, blocked.text  # there is none to use
    swept = dbio("sweep", *instance.args("resumeplain", *BRIEF), "--sessions", "1")
    assert swept.code == 2 and "interrupted" in swept.err and "dbio setup again" in swept.err, swept.text
    assert "--reload" not in swept.err
    done = dbio("setup", *instance.args("resumeplain"))
    assert done.code == 0, done.text
    assert "resuming the interrupted load" in done.out and "5,120 rows" in done.out
    with instance.connect("resumeplain") as conn:
        status, spec = conn.execute("SELECT status, spec FROM dbio.setup").fetchone()
    assert status == "ready" and spec["scale"] == 5120
    ran = dbio("run", *instance.args("resumeplain", *BRIEF, "--label", "finished"))
    assert ran.code == 0, ran.text
    gone = dbio("teardown", "--yes", *instance.server_args("resumeplain"))
    assert gone.code == 0, gone.text


def test_run_before_setup_and_bad_input_fail_cleanly(instance):
    instance.create_database("empty")
    before = dbio("run", *instance.args("empty", *SMALL, "--label", "nosetup"))
    assert before.code == 2 and "nothing is loaded" in before.err and "dbio setup" in before.err
    assert len(before.err.strip().splitlines()) == 1
    bad = dbio("run", *instance.args("empty", *SMALL, "--update-pct", "120"))
    assert bad.code == 2 and "--update-pct = 120" in bad.err and len(bad.err.strip().splitlines()) == 1
    assert not (instance.results.exists() and any(p.name.endswith("nosetup") for p in instance.results.iterdir()))


@pytest.mark.parametrize("access_path, node", [("bitmap", "Bitmap Heap Scan")])
def test_batched_access_path_is_explicit_and_recorded(instance, loaded_db, access_path, node):
    _, doc = run_ok(instance, loaded_db, "bitmap", "--access-path", access_path, *BRIEF)
    assert node in doc["plans"]["select"]["nodes"]
    assert doc["config"]["workload"]["access_path"] == access_path
    # io_method auto is worker on this path: the I/O workers' wait for a CPU, read at both ends, lies in the reads
    assert doc["nodes"][0]["server"]["settings"]["io_method"]["setting"] == "worker"
    waited = [doc["snapshots"][end]["os"]["read_helper_run_delay"] for end in ("begin", "end")]
    assert len(waited[0]) == len(waited[1]) == int(doc["nodes"][0]["server"]["settings"]["io_workers"]["setting"])
    cpu = doc["figures"]["cpu"]
    assert cpu["io_worker_cpu_wait_seconds"] == pytest.approx(sum(waited[1][p] - waited[0][p] for p in waited[0]))
    assert cpu["io_worker_cpu_wait_us_per_read"] >= 0


def test_sustained_run_with_intervals_is_sampled_per_interval(instance, loaded_db):
    directory, doc = run_ok(instance, loaded_db, "sustained", "--duration", "8s", "--interval", "2s",
                            "--warmup", "1s")
    measured = [r for r in doc["series"] if r["phase"] == "measured"]
    assert [r["since_start"] // 1 for r in measured] == [3, 5, 7, 9]  # intervals end 2, 4, 6, 8 s into the window
    assert doc["timeline"]["interval_seconds"] == 2
    samples = [json.loads(line) for line in (directory / "samples.jsonl").read_text().splitlines()]
    assert [s["k"] for s in samples] == [0, 1, 3, 5, 7, 9]  # written as they were taken, fsynced
    in_window = sum(s["statements"]["selects"] for s in samples if s.get("statements"))
    assert in_window == doc["totals"]["selects"]  # the per-interval counts add up to the window's
    report = (directory / "report.txt").read_text()
    # the last interval's end reading is taken when the sessions stop, 1.5 s after the one before:
    # partial, it is left out of the statistics
    assert "Stability (3 intervals of 2 s)" in report and "took 1 ms or longer" in report
    assert "Left out, here and in the charts: 6-8 s" in report


RUN_SHORT = BRIEF


def test_the_loaded_data_set_is_remembered(instance):
    loaded = dbio("setup", *instance.args("remember", "--scale", "40MiB", "--schemas", "2", "--scan-table-size",
                                          "8MiB"))
    assert loaded.code == 0, loaded.text
    done = dbio("run", *instance.args("remember", *RUN_SHORT, "--label", "remembered"))
    assert done.code == 0, done.text
    assert "using the loaded data set" in done.out and "5,120 rows" in done.out and "x 2 schemas" in done.out
    workload = load_result(result_dir(done))["config"]["workload"]
    assert (workload["scale"], workload["schemas"], workload["sessions"]) == (5120, 2, 2)
    verified = dbio("setup", *instance.args("remember"), "--verify")
    assert verified.code == 0 and "verified: all" in verified.out, verified.text
    bigger = dbio("run", *instance.args("remember", *RUN_SHORT, "--scale", "48MiB"))
    assert bigger.code == 2 and "--scale = 6144 blocks (48 MiB): larger than the 5,120 rows loaded" in bigger.err
    swept = dbio("sweep", *instance.args("remember", *RUN_SHORT, "--label", "remembered"), "--sessions", "4")
    assert swept.code == 0, swept.text  # 4 sessions over the 2 loaded schemas
    assert "using the loaded data set" in swept.out
    gone = dbio("teardown", "--yes", *instance.server_args("remember"))
    assert gone.code == 0 and "dropped" in gone.out, gone.text


def test_setup_refuses_a_data_set_the_cache_holds_before_loading(instance):
    instance.create_database("cachedsn")
    args = ["--dsn", instance.conninfo("cachedsn"), "--scale", "8MiB", "--scan-table-size", "0"]
    refused = dbio("setup", *args)
    assert refused.code == 2 and "fits in shared_buffers (16 MiB)" in refused.err and "--allow-cached" in refused.err
    with instance.connect("cachedsn") as conn:
        assert not conn.execute("SELECT 1 FROM pg_namespace WHERE nspname LIKE 'dbio%'").fetchall()
    allowed = dbio("setup", *args, "--allow-cached")
    assert allowed.code == 0, allowed.text


def test_quickstart_reloads_when_told_and_says_the_server_runs_on(instance):
    first = dbio("quickstart", *instance.args("quick", *over(SMALL, *BRIEF)))
    assert first.code == 0, first.text
    assert f"the embedded server is still running in {instance.data_dir}" in first.out
    assert f"dbio instance stop --data-dir {instance.data_dir}" in first.out
    other = dbio("quickstart", *instance.args("quick", *over(SMALL, "--scale", "40MiB")))
    assert other.code == 2 and "dbio quickstart --reload" in other.err
    again = dbio("quickstart", *instance.args("quick", *over(SMALL, *BRIEF, "--scale", "40MiB")), "--reload")
    assert again.code == 0, again.text
