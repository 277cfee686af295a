"""The raw-device baseline on the embedded instance: fio reads the instance's own data files at
the run's sessions, right before the run, and the result and report carry it (tiny data, short runs)."""

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from tests.integration.conftest import BRIEF, SMALL, dbio, load_result, over, result_dir, within_seconds

needs_fio = pytest.mark.skipif(shutil.which("fio") is None,
                               reason="fio is not installed (Debian package fio, optional: dbio baseline needs it)")


@needs_fio
def test_dbio_baseline_reads_the_instance_files_read_only_and_writes_only_scratch_files(instance, loaded_db,
                                                                                       tmp_path):
    """With updates, one baseline has both sides: fio reads the instance's own files read-only, and
    the write side runs on scratch files it removes."""
    files = sorted(p for p in (instance.data_dir / "pgdata" / "base").rglob("*") if p.is_file())
    before = {p: p.stat().st_mtime_ns for p in files}
    out = tmp_path / "baseline.json"
    done = dbio("baseline", *instance.args(loaded_db, *SMALL, "-t", "2", "--update-pct", "20"),
                "--out", str(out))
    assert done.code == 0, done.text
    assert "synchronous job(s)" in done.out and "device ceiling" in done.out
    record = json.loads(out.read_text())
    sync, deep = record["runs"]["sync"], record["runs"]["deep"]
    assert record["version"].startswith("fio-") and record["files"] >= 2 and not record["scratch"]
    assert sync["jobs"] == 2 and sync["reads"] > 0 and sync["reads_per_s"] > 0 and sync["avg_read_us"] > 0
    assert "--readonly" in sync["options"] and "--direct=1" in sync["options"] and "--bs=8k" in sync["options"]
    assert any(str(instance.data_dir / "pgdata" / "base") in o for o in sync["options"] if o.startswith("--filename="))
    assert deep["iodepth"] == 32 and deep["reads_per_s"] > 0
    # fio never wrote the files it read (the server's own catalog files may change meanwhile: autovacuum)
    read = {Path(name) for o in sync["options"] if o.startswith("--filename=")
            for name in o.split("=", 1)[1].split(":")}
    assert read and read <= set(before)
    assert {p: p.stat().st_mtime_ns for p in read} == {p: before[p] for p in read}
    side = record["write_side"]
    writes, redo = side["writes"], side["redo_sync"]
    assert writes["writes_per_s"] > 0 and "--rw=randwrite" in writes["options"]
    assert "--readonly" not in writes["options"]
    assert redo["method"] == "fdatasync" and redo["syncs_per_s"] > 0 and redo["tool"] == "pg_test_fsync"
    assert "redo log sync (pg_test_fsync, fdatasync)" in done.out
    assert not list(instance.data_dir.rglob("*.scratch"))  # both scratch files removed


@needs_fio
def test_run_with_baseline_records_both_and_reports_efficiency(instance, loaded_db):
    done = dbio("run", *instance.args(loaded_db, *over(SMALL, *BRIEF), "-t", "2", "--label", "with-baseline"),
                "--baseline", "--baseline-seconds", "2")  # 1 s before, 1 s after: what is checked holds for any length
    assert done.code == 0, done.text
    assert "Database efficiency at 2 sessions:" in done.out
    directory = result_dir(done)
    doc = load_result(directory)
    record, f = doc["baseline"], doc["figures"]
    assert record["sessions"] == 2 and record["runs"]["sync"]["jobs"] == 2
    # both times are recorded: fio ran right before the run started (the same host's clock)
    started = datetime.fromisoformat(doc["timeline"]["start"]).timestamp()
    assert record["started_at"] < record["ended_at"] <= started + 0.5 and started - record["ended_at"] < 30
    # and again right after the window: the raw synchronous figures pool both, their ratio is the drift
    before, after = record["runs"]["sync"], record["runs"]["sync_after"]
    assert after["jobs"] == 2 and after["reads"] > 0 and "--readonly" in after["options"]
    assert datetime.fromisoformat(doc["timeline"]["window_end"]).timestamp() <= after["started_at"] + 0.5
    rounds = [before, after, *(record["runs"][n] for n in sorted(record["runs"]) if n.startswith("sync_more_"))]
    assert f["baseline"]["reads_per_s"] == pytest.approx(sum(r["reads"] for r in rounds)  # more rounds when they
                                                         / sum(r["seconds"] for r in rounds))  # disagreed
    assert f["baseline"]["drift"] == pytest.approx(after["reads_per_s"] / before["reads_per_s"])
    text = (directory / "report.txt").read_text()
    head = text.split("\n\n")[0].splitlines()  # the report's first block: verdicts, headline, efficiency
    assert any(line.startswith("Database efficiency at 2 sessions:") for line in head), head
    assert "Baseline (raw device, fio)" in text and "right before the database's run" in text
    assert "right after it" in text and "synchronous (psync), after" in text
    rerender = dbio("report", str(directory))
    assert rerender.code == 0 and rerender.out == text


def test_without_fio_one_line_names_the_package_and_nothing_runs(instance, loaded_db, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    before = set(instance.results.iterdir()) if instance.results.exists() else set()
    for command in (["run", *instance.args(loaded_db, *SMALL, "-t", "2"), "--baseline"],
                    ["baseline", *instance.args(loaded_db, *SMALL)]):
        done = dbio(*command, env={"PATH": str(empty)})
        assert done.code == 2, done.text
        lines = done.err.strip().splitlines()
        assert len(lines) == 1 and "fio is not installed" in lines[0] and "apt-get install fio" in lines[0]
    after = set(instance.results.iterdir()) if instance.results.exists() else set()
    assert after == before  # no run directory: nothing ran


@needs_fio
def test_sweep_with_baseline_measures_fio_at_each_steps_sessions(instance, loaded_db):
    done = dbio("sweep", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "raw-curve"),
                "--sessions", "1,2", "--baseline", "--baseline-seconds", "2", "--target-iops", "100000000",
                "--latency-slo", "p99<1s",
                "--price", "instance=100/month")
    assert done.code == 0, done.text
    assert "beyond the measured range" in done.out  # the capacity statements close the sweep's summary
    line = next(ln for ln in done.out.splitlines() if ln.startswith("sweep: "))
    directory = Path(line.split(": ", 1)[1]).parent
    assert json.loads((directory / "sweep.json").read_text())["baseline"] == {"path": None}
    for step, sessions in (("01-t1", 1), ("02-t2", 2)):
        record = load_result(directory / step)["baseline"]
        assert record["sessions"] == sessions and record["runs"]["sync"]["jobs"] == sessions
    text = (directory / "sweep.txt").read_text()
    assert "Raw reads/s" in text and "Efficiency" in text
    assert "Capacity and queueing" in text and "Cost of the measured rates" in text
    assert json.loads((directory / "sweep.json").read_text())["capacity"]["target_iops"] == 1e8
    rerendered = dbio("report", str(directory), "--target-iops", "1")
    assert rerendered.code == 0 and "met at 1 session," in rerendered.out
    assert (directory / "sweep.html").read_text().count("raw (fio)") >= 2  # beside reads/s and latency
    other = dbio("sweep", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "raw-again"),
                 "--sessions", "1", "--baseline", "--baseline-seconds", "2")  # one step is enough to compare with
    assert other.code == 0, other.text
    again = Path(next(ln for ln in other.out.splitlines() if ln.startswith("sweep: ")).split(": ", 1)[1]).parent
    compared = dbio("compare", str(directory), str(again))
    assert compared.code == 0, compared.text
    assert "raw-curve efficiency" in compared.out and "raw-again efficiency" in compared.out
    runs = dbio("compare", str(directory / "01-t1"), str(directory / "02-t2"))
    assert runs.code == 0 and "Database efficiency (reads/s / raw)" in runs.out and "efficiency " in runs.out


@needs_fio
def test_sigterm_during_fio_stops_fio_and_its_jobs_and_ends_at_once(instance, loaded_db):
    """fio runs its jobs as processes of its own: a stopped dbio stops them too, before and after the run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.integration.conftest import wait_for

    def fio_pids() -> list[int]:
        found = subprocess.run(["pgrep", "-f", f"fio --name=dbio-sync.*{instance.data_dir}"], capture_output=True,
                               text=True).stdout.split()
        return [int(p) for p in found]

    args = instance.args(loaded_db, *over(SMALL, "--run-time", "60s"), "-t", "2", "--baseline", "--label", "stopped")
    launched = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "dbio", "run", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(fio_pids()) >= 3, timeout=60, what="fio and its 2 jobs")  # fio and its forked jobs
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        seconds = time.monotonic() - t0
        assert within_seconds(seconds, t0 - launched, 5) and proc.returncode == 143, (seconds, out, err)
        assert "SIGTERM during the baseline's fio runs: fio stopped, nothing measured" in err
        time.sleep(0.3)
        assert fio_pids() == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for pid in fio_pids():
            os.kill(pid, signal.SIGKILL)
