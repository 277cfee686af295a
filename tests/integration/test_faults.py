"""Faults injected while real work runs: every case ends within seconds, with a clear status, no dbio
backend left, the partial result kept and marked, the next command starting cleanly, and dbio's
tables and indexes passing amcheck."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.conftest import (BRIEF, SMALL, dbio, dbio_backends, load_result, over, result_dir, wait_for,
                                        within_seconds)
from tests import small_fs
from tests.small_fs import fill



def start(instance, command, db, *extra, env=None):
    args = [sys.executable, "-m", "dbio", command, *instance.args(db, *over(SMALL, *extra))]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200", **(env or {})})
    proc.launched = time.monotonic()  # when it began: how slow this host is, for within_seconds
    return proc


def since_launch(proc) -> float:
    return time.monotonic() - proc.launched


def measuring(results: Path, label: str):
    def check():
        for d in results.glob(f"*{label}"):
            samples = d / "samples.jsonl"
            if samples.exists() and samples.read_text().count('"phase":"measured"') >= 2:
                return d
        return None
    return check


def finish(proc, timeout=30.0):
    t0 = time.monotonic()
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err, time.monotonic() - t0


def amcheck(instance, db, schemas=1):
    with instance.connect(db) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        for i in range(1, schemas + 1):
            assert conn.execute(f"SELECT count(*) FROM verify_heapam('dbio_{i}.cf1')").fetchone()[0] == 0
            conn.execute(f"SELECT bt_index_check('dbio_{i}.cf1_custid', true)")


def no_dbio_backends(instance):
    wait_for(lambda: dbio_backends(instance) == [], timeout=15, what="dbio's backends to end")


def postmaster_pid(instance) -> int:
    return int((instance.data_dir / "pgdata" / "postmaster.pid").read_text().splitlines()[0])


def test_server_killed_and_restarted_mid_run(instance, loaded_db):
    proc = start(instance, "run", loaded_db, "-t", "2", "--run-time", "60s", "--label", "killed")
    directory = wait_for(measuring(instance.results, "killed"), what="the measured window")
    reached = since_launch(proc)
    os.kill(postmaster_pid(instance), signal.SIGKILL)
    code, out, err, seconds = finish(proc)
    assert within_seconds(seconds, reached, 15, run_time=60) and code == 1, (seconds, reached, out + err)
    doc = load_result(directory)
    assert doc["status"] == "failed" and "session" in doc["status_reason"]
    assert doc["figures"]["window_seconds"] > 0  # the window is cut at the last sample the server answered
    assert any(e["kind"] == "window_cut" for e in doc["events"])
    assert "FAILED" in (directory / "report.txt").read_text()
    # starts the server again
    again = dbio("run", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "after-kill"))
    assert again.code == 0, again.text
    no_dbio_backends(instance)
    amcheck(instance, loaded_db)


def test_server_stopped_fast_mid_run(instance, loaded_db):
    proc = start(instance, "run", loaded_db, "--run-time", "60s", "--label", "fast-stop")
    directory = wait_for(measuring(instance.results, "fast-stop"), what="the measured window")
    reached = since_launch(proc)
    # SIGINT is PostgreSQL's fast shutdown (dbio instance stop is refused while the run holds the instance)
    os.kill(postmaster_pid(instance), signal.SIGINT)
    code, out, err, seconds = finish(proc)
    assert within_seconds(seconds, reached, 15, run_time=60) and code == 1, (seconds, reached, out + err)
    doc = load_result(directory)
    assert doc["status"] == "failed" and doc["figures"]["window_seconds"] > 0
    assert dbio("run", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "after-stop")).code == 0
    no_dbio_backends(instance)
    amcheck(instance, loaded_db)


def test_client_killed_then_the_next_command_recovers_its_result(instance, loaded_db):
    proc = start(instance, "run", loaded_db, "-t", "2", "--run-time", "60s", "--update-pct", "20",
                 "--label", "sigkilled")
    directory = wait_for(measuring(instance.results, "sigkilled"), what="the measured window")
    time.sleep(1.5)
    proc.kill()
    proc.communicate(timeout=10)
    no_dbio_backends(instance)  # the sessions end at their next slice boundary
    assert not (directory / "result.json").exists()
    nxt = dbio("run", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "next"))
    assert nxt.code == 0, nxt.text
    assert f"recovered the result of a run whose dbio process ended early: {directory}" in nxt.text
    doc = load_result(directory)
    assert doc["status"] == "lost" and "ended before the run finished" in doc["status_reason"]
    assert doc["figures"]["window_seconds"] > 1 and doc["totals"]["updates"] > 0
    assert "LOST" in (directory / "report.txt").read_text()
    with instance.connect(loaded_db) as conn:
        assert conn.execute("SELECT count(*) FROM dbio.run_control").fetchone()[0] == 0
    amcheck(instance, loaded_db)


@pytest.mark.parametrize("point", ["load.create", "load.copy", "load.index"])
def test_load_interrupted_at_each_step_resumes(instance, point):
    db = f"stop_{point.split('.')[1]}"
    marker = instance.root / f"{db}.marker"
    proc = start(instance, "setup", db, "--schemas", "2", "--load-parallel-degree", "1",
                 env={"DBIO_FAULT": point, "DBIO_FAULT_MARKER": str(marker)})
    wait_for(marker.exists, what=f"the load to reach {point}")
    reached = since_launch(proc)
    proc.send_signal(signal.SIGINT)
    code, out, err, seconds = finish(proc)
    assert within_seconds(seconds, reached, 10) and code == 130, (seconds, reached, out + err)
    assert "load interrupted: 0 of 3 tables are complete and kept" in err and "dbio setup again" in err
    no_dbio_backends(instance)
    resumed = dbio("setup", *instance.args(db, *SMALL, "--schemas", "2"), "--verify")
    assert resumed.code == 0, resumed.text
    assert "resuming the interrupted load" in resumed.out and "verified: all" in resumed.out
    amcheck(instance, db, schemas=2)


def test_a_load_whose_dbio_was_killed_resumes_with_the_direct_io_the_run_has(instance):
    """A dbio killed inside the load leaves the instance running the load's profile (buffered I/O). setup again
    judged the data set against that server's page cache ("fits in shared_buffers (16 MiB) plus the available page
    cache (19.9 GiB; the server does not use direct I/O)") and would not resume the load without --allow-cached;
    the load and the runs after it read with the direct I/O the command asks for."""
    db = "stop_killed"
    marker = instance.root / f"{db}.marker"
    proc = start(instance, "setup", db, env={"DBIO_FAULT": "load.copy", "DBIO_FAULT_MARKER": str(marker)})
    wait_for(marker.exists, what="the load to reach load.copy")
    proc.kill()
    proc.communicate(timeout=30)
    no_dbio_backends(instance)
    with instance.connect(db) as conn:
        assert conn.execute("SHOW debug_io_direct").fetchone()[0] == ""  # the load's profile, still running
    resumed = dbio("setup", *instance.args(db, *SMALL))
    assert resumed.code == 0, resumed.text
    assert "resuming the interrupted load" in resumed.out
    with instance.connect(db) as conn:
        assert conn.execute("SHOW debug_io_direct").fetchone()[0] == "data"


@pytest.fixture()
def small_filesystem(workdir):
    with small_fs.mounted("320m", workdir) as mount:
        yield mount
        dbio("instance", "destroy", "--yes", "--data-dir", str(mount / "inst"))


def test_disk_full_during_load_keeps_what_is_done_and_resumes(small_filesystem):
    data = small_filesystem / "inst"
    args = ["--data-dir", str(data), "--shared-buffers", "16MiB", "--scale", "48MiB", "--scan-table-size", "0",
            "--schemas", "2", "--load-parallel-degree", "1"]
    assert dbio("instance", "init", "--data-dir", str(data), "--shared-buffers", "16MiB").code == 0
    marker = small_filesystem.parent / "diskfull.marker"
    proc = subprocess.Popen([sys.executable, "-m", "dbio", "setup", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "DBIO_FAULT": "load.copy", "DBIO_FAULT_MARKER": str(marker),
                                 "DBIO_FAULT_SECONDS": "4"})
    try:
        wait_for(marker.exists, what="the load to start copying")
        marker.unlink()
        filler = small_filesystem / "filler"
        fill(filler, leave=3 << 20)
        code, out, err, _ = finish(proc, timeout=60)
    finally:
        if proc.poll() is None:  # never leave the load running into the fixture's cleanup
            proc.kill()
            proc.communicate()
    assert code == 1, out + err
    assert "ran out of disk space" in err and "run dbio setup again to resume" in err
    filler.unlink()
    resumed = dbio("setup", *args, "--verify")
    assert resumed.code == 0, resumed.text
    assert "verified: all" in resumed.out


def test_an_update_run_cannot_fill_the_disk_that_setup_accepted(small_filesystem, workdir):
    """On a 320 MiB filesystem a 130 MiB load fits; its WAL, at PostgreSQL's default max_wal_size
    (1 GB), would not: dbio bounds max_wal_size to the free space, and refuses a run whose own
    max_wal_size could fill the disk."""
    data = small_filesystem / "inst"
    args = ["--data-dir", str(data), "--shared-buffers", "16MiB", "--scale", "130MiB", "--scan-table-size", "0",
            "--results-dir", str(workdir / "wal-results"), "--warmup", "1s"]
    setup = dbio("setup", *args)
    assert setup.code == 0, setup.text
    refused = dbio("run", *args, "--update-pct", "50", "--run-time", "5s", "--pg-setting", "max_wal_size=1GB")
    assert refused.code == 2, refused.text
    # the fix offers the largest max_wal_size that fits the room left (64 MB, or 32 MB when the load took more)
    assert "the run could fill the disk" in refused.err and re.search(r"max_wal_size=(64|32)MB\)", refused.err)
    run = dbio("run", *args, "--update-pct", "50", "--redo-stress", "HEAVY", "--run-time", "12s", "-t", "2")
    # complete; or, where the WAL outran the server's checkpoints (max_wal_size is a soft limit: a host starved of
    # CPU), stopped by dbio before the disk filled, its result kept
    assert run.code == 0 or (run.code == 1 and "stopped before the disk filled" in run.text), run.text
    assert "max_wal_size set to" in setup.text + run.text
    assert shutil.disk_usage(small_filesystem).free > 16 << 20
    assert dbio("instance", "stop", "--data-dir", str(data)).code == 0
    assert dbio("instance", "start", "--data-dir", str(data), "--shared-buffers", "16MiB").code == 0


@pytest.fixture()
def results_filesystem(workdir):
    with small_fs.mounted("16m", workdir) as mount:
        yield mount


def test_results_directory_becoming_unwritable_mid_run(instance, loaded_db, results_filesystem):
    where = over(instance.args(loaded_db, *over(SMALL, "--run-time", "60s")), "--results-dir", str(results_filesystem))
    args = [sys.executable, "-m", "dbio", "run", *where, "--label", "rofs"]
    launched = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    wait_for(measuring(results_filesystem, "rofs"), what="the measured window")
    reached = time.monotonic() - launched
    fill(results_filesystem / "filler", leave=0)  # a full filesystem: the next sample cannot be written
    code, out, err, seconds = finish(proc)
    assert within_seconds(seconds, reached, 15, run_time=60) and code == 1, (seconds, reached, out + err)
    assert "the results directory cannot be written" in err
    rescued = Path(next(line for line in err.splitlines() if "the result is in" in line).split("the result is in ")[1])
    doc = json.loads((rescued / "result.json").read_text())
    assert doc["status"] == "failed" and "cannot be written" in doc["status_reason"]
    assert doc["figures"]["window_seconds"] > 0 and (rescued / "samples.jsonl").stat().st_size > 0
    no_dbio_backends(instance)
    shutil.rmtree(rescued)
    amcheck(instance, loaded_db)


def test_a_full_results_filesystem_leaves_one_result_that_names_the_report_it_could_not_write(
        instance, loaded_db, results_filesystem, workdir):
    args = over(instance.args(loaded_db, *over(SMALL, *BRIEF)), "--results-dir", str(results_filesystem))
    sizes = result_dir(dbio("run", *args, "--label", "roomy"))
    # room for the result and the text report (and a quarter more), not for the HTML
    room = sum(3 * 4096 + (sizes / name).stat().st_size * 5 // 4 for name in ("result.json", "report.txt"))
    shutil.rmtree(sizes)
    marker = workdir / "results-full.marker"
    proc = subprocess.Popen([sys.executable, "-m", "dbio", "run", *args, "--label", "full"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200", "DBIO_FAULT": "run.results",
                                 "DBIO_FAULT_MARKER": str(marker), "DBIO_FAULT_SECONDS": "4"})
    wait_for(marker.exists, what="the run about to write its result")
    fill(results_filesystem / "filler", leave=room)
    code, out, err, _ = finish(proc)
    (directory,) = results_filesystem.glob("*-full")
    html = directory / "report.html"
    assert code == 1, out + err
    assert f"html:   {html} could not be written (No space left on device); once there is room: dbio report " \
           f"{directory} --format html --out {html}" in out
    assert sorted(p.name for p in directory.iterdir()) == ["report.txt", "result.json", "run.json", "samples.jsonl"]
    doc = load_result(directory)  # the one result: the run was complete, its HTML is missing
    assert doc["status"] == "complete" and doc["files"]["html"] is None
    assert [e["file"] for e in doc["events"] if e["kind"] == "report_unwritten"] == ["report.html"]
    assert "the result is in" not in err  # nothing rescued elsewhere
    no_dbio_backends(instance)
