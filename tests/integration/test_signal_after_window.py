"""dbio run and dbio sweep on the embedded PostgreSQL, sent SIGINT or SIGTERM after a window closed: while the
external script's post call hangs, or during fio's run after the database's. The window is whole, so its
result is written (status complete) and says what the signal stopped, and the command exits 130 or 143
within seconds, as the fake engine's tests check step by step (tests/unit/test_signal_after_window.py)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.conftest import BRIEF, SMALL, dbio_backends, load_result, over, wait_for, within_seconds

CODES = {"SIGINT": 130, "SIGTERM": 143}
WAIT_AND_STOP = 5 + 2  # the post call's SIGNAL_WAIT_SECONDS, then SIGTERM to SIGKILL of its process group


def hanging_post(where: Path) -> tuple[Path, Path]:
    """A script (root's, writable by no one else) whose post call hangs; it says when it began."""
    where.mkdir(mode=0o755, exist_ok=True)
    marker = where / "post-started"
    marker.unlink(missing_ok=True)
    script = where / "array-stats"
    script.write_text(f'#!/bin/sh\nif [ "$1" = post ]; then touch {marker}; sleep 60; fi\nexit 0\n')
    script.chmod(0o700)
    return script, marker


def launch(command: str, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "dbio", command, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"})
    proc.launched = time.monotonic()
    return proc


def printed_directory(out: str) -> Path:
    """The run directory a dbio run printed ("result: .../result.json")."""
    line = next(ln for ln in out.splitlines() if ln.startswith("result: "))
    return Path(line[len("result: "):]).parent


def signalled(proc: subprocess.Popen, name: str) -> tuple[int, str, str, float, float]:
    """Send the signal; the exit code, output, seconds from the signal to the end, and from the launch to it."""
    sent = time.monotonic()
    proc.send_signal(getattr(signal, name))
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err, time.monotonic() - sent, sent - proc.launched


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_while_the_post_call_hangs_keeps_the_run_s_result(instance, loaded_db, workdir, name):
    script, marker = hanging_post(workdir / f"post-{name}")
    proc = launch("run", *instance.args(loaded_db, *over(SMALL, *BRIEF), "-t", "2", "--label", f"post{name}",
                                        "--external-script", str(script)))
    wait_for(marker.exists, what="the post call")
    time.sleep(0.5)
    code, out, err, seconds, reached = signalled(proc, name)
    assert code == CODES[name], out + err
    assert within_seconds(seconds, reached, WAIT_AND_STOP + 5), (seconds, reached)
    directory = printed_directory(out)
    doc = load_result(directory)
    assert doc["status"] == "complete" and doc["figures"]["load_profile"]["physical_reads_per_s"] > 0
    assert doc["signal"]["name"] == name and doc["signal"]["during"] in ("run", "post_call")
    post = next(c for c in doc["external_script"]["calls"] if c["phase"] == "post")
    assert post["stopped"] == f"still running 5 s after {name}" and post["signal"] == name
    assert doc["files"]["html"] is None and not (directory / "report.html").exists()
    assert f"html:   not written (interrupted): dbio report {directory} --format html" in out
    assert "VALID storage result" in (directory / "report.txt").read_text()
    assert dbio_backends(instance) == []


def test_a_sweep_step_whose_window_was_whole_keeps_its_result(instance, loaded_db, workdir):
    script, marker = hanging_post(workdir / "post-sweep")
    proc = launch("sweep", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "postsweep",
                                          "--external-script", str(script)), "--sessions", "1,2")
    wait_for(marker.exists, what="the first step's post call")
    time.sleep(0.5)
    code, out, err, seconds, reached = signalled(proc, "SIGINT")
    assert code == 130 and "dbio sweep --resume" in err, out + err
    assert within_seconds(seconds, reached, WAIT_AND_STOP + 8), (seconds, reached)
    (directory,) = instance.results.glob("*sweep-postsweep")
    doc = json.loads((directory / "sweep.json").read_text())
    assert doc["status"] == "interrupted"
    assert [s["status"] for s in doc["steps"]] == ["complete", "pending"]  # the first step counts as measured
    step = load_result(directory / doc["steps"][0]["name"])
    assert step["status"] == "complete" and step["signal"]["name"] == "SIGINT"
    assert doc["steps"][0]["headline"]["reads_per_s"] > 0
    assert dbio_backends(instance) == []


needs_fio = pytest.mark.skipif(shutil.which("fio") is None,
                               reason="fio is not installed (Debian package fio, optional: run --baseline needs it)")


@needs_fio
def test_a_signal_during_fio_after_the_run_keeps_the_run_s_result(instance, loaded_db):
    def after_pids() -> list[int]:
        found = subprocess.run(["pgrep", "-f", f"fio --name=dbio-sync-after.*{instance.data_dir}"],
                               capture_output=True, text=True).stdout.split()
        return [int(p) for p in found]

    proc = launch("run", *instance.args(loaded_db, *SMALL, "-t", "2", "--baseline",
                                        "--baseline-seconds", "20", "--label", "fioafter"))
    try:
        wait_for(lambda: after_pids(), timeout=120, what="fio's run after the database's")
        code, out, err, seconds, reached = signalled(proc, "SIGTERM")
        assert code == 143, out + err
        assert within_seconds(seconds, reached, 8), (seconds, reached)
        doc = load_result(printed_directory(out))
        assert doc["status"] == "complete" and doc["signal"] == {"name": "SIGTERM", "count": 1,
                                                                 "during": "baseline_after"}
        assert doc["baseline"]["after_skipped"] == "SIGTERM during fio's run after the database's"
        assert "sync" in doc["baseline"]["runs"] and "sync_after" not in doc["baseline"]["runs"]
        time.sleep(0.3)
        assert after_pids() == []
    finally:
        for pid in after_pids():
            os.kill(pid, signal.SIGKILL)
