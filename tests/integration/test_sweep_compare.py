"""Sweeps (restart ordering, interrupt and resume, until-peak) and comparisons, on the embedded instance."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.integration.conftest import BRIEF, SMALL, dbio, over, result_dir

FAST = BRIEF  # steps and runs whose assertions hold for any window length


def sweep_dir(done) -> Path:
    line = next(ln for ln in done.out.splitlines() if ln.startswith("sweep: "))
    return Path(line.split(": ", 1)[1]).parent


def test_sweep_two_knobs_restart_settings_outermost(instance):
    done = dbio("sweep", *instance.args("sweep", *over(SMALL, *FAST), "--label", "knobs", shared_buffers=None),
                "--sessions", "1,2",
                "--vary", "shared_buffers=16MiB,20MiB")
    assert done.code == 0, done.text
    directory = sweep_dir(done)
    doc = json.loads((directory / "sweep.json").read_text())
    assert [s["name"] for s in doc["steps"]] == ["01-sb16MiB-t1", "02-sb16MiB-t2", "03-sb20MiB-t1", "04-sb20MiB-t2"]
    assert all(s["status"] == "complete" for s in doc["steps"])
    step = json.loads((directory / "03-sb20MiB-t1" / "result.json").read_text())
    assert step["environment"]["server"]["settings"]["shared_buffers"]["setting"] == str(20 * 128)
    steps_output = done.out.split("sweep of 4 steps")[1]  # (the load before it restarts the instance too)
    assert steps_output.count("restarting the embedded server") == 1  # once, between the shared_buffers values
    text = (directory / "sweep.txt").read_text()
    assert "Summary" in text and "shared_buffers" in text and "Knees and peaks" in text
    assert (directory / "sweep.html").read_text().count("<svg") == 3
    again = dbio("report", str(directory), "--format", "md")
    assert again.code == 0 and again.out.startswith("# dbio sweep")


def _sweep_reaching(instance, label: str, sessions: str, run_time: str, step: str, measured: int):
    """A sweep started in the background, and its directory once the step has written samples (with at least
    `measured` of its window's); None when it does not within 90 s."""
    args = instance.args("sweep", *over(SMALL, "--run-time", run_time, "--warmup", "1s"), "--label", label)
    proc = subprocess.Popen([sys.executable, "-m", "dbio", "sweep", *args, "--sessions", sessions],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        found = list(instance.results.glob(f"*sweep-{label}"))  # results/ appears when the sweep starts
        samples = found[0] / step / "samples.jsonl" if found else None
        if samples and samples.exists() and samples.read_text().count('"phase":"measured"') >= measured:
            return proc, found[0]
        time.sleep(0.2)
    return proc, None


def test_interrupted_sweep_keeps_its_steps_and_resumes(instance):
    proc, directory = _sweep_reaching(instance, "resume", "1,2,4", "3s", "02-t2", measured=0)
    assert directory is not None, "the sweep never reached its second step"
    time.sleep(1.5)  # inside its 4 s of warm-up and window
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "dbio sweep --resume" in err
    doc = json.loads((directory / "sweep.json").read_text())
    assert [s["status"] for s in doc["steps"]] == ["complete", "interrupted", "pending"]
    assert doc["status"] == "interrupted"
    assert "INTERRUPTED" in (directory / "sweep.txt").read_text()
    resumed = dbio("sweep", "--resume", str(directory))
    assert resumed.code == 0, resumed.text
    doc = json.loads((directory / "sweep.json").read_text())
    assert [s["status"] for s in doc["steps"]] == ["complete"] * 3 and doc["status"] == "complete"
    assert doc["steps"][1]["earlier_attempts"][0].startswith("02-t2.interrupted-")
    assert (directory / doc["steps"][1]["earlier_attempts"][0] / "result.json").exists()  # the partial run is kept
    refused = dbio("sweep", "--resume", str(directory), "--update-pct", "5")
    assert refused.code == 2 and "takes no other options" in refused.err


def test_until_peak_doubles_sessions_until_reads_stop_growing(instance):
    done = dbio("sweep", *instance.args("sweep", *over(SMALL, *FAST), "--label", "peak"), "--until-peak",
                "--peak-gain", "100")  # a step must double reads/s to count: the second step is the peak
    assert done.code == 0, done.text
    doc = json.loads((sweep_dir(done) / "sweep.json").read_text())
    assert [s["values"]["threads_per_schema"] for s in doc["steps"]] == ["1", "2"]
    peaks = [s for s in doc["steps"] if s.get("peak")]
    best = max(doc["steps"], key=lambda s: s["headline"]["reads_per_s"])
    assert peaks == [best]  # the peak is the best step, not the one that failed to add enough
    assert f"peak: {best['name']}" in (sweep_dir(done) / "sweep.txt").read_text()


def test_compare_two_results(instance):
    assert dbio("setup", *instance.args("sweep", *SMALL)).code == 0  # the sweeps' load, if they have not made it
    first = dbio("run", *instance.args("sweep", *over(SMALL, *FAST), "--label", "one-session"))
    second = dbio("run", *instance.args("sweep", *over(SMALL, *FAST), "-t", "2", "--label", "two-sessions"))
    assert first.code == 0 and second.code == 0
    out = instance.root / "compare.html"
    done = dbio("compare", str(result_dir(first)), str(result_dir(second)), "--format", "html", "--out", str(out))
    assert done.code == 0, done.text
    html = out.read_text()
    assert "one-session" in html and "two-sessions" in html and html.count("<svg") == 3
    text = dbio("compare", str(result_dir(first)), str(result_dir(second)))
    assert text.code == 0
    assert "workload.threads_per_schema" in text.out.split("Headline figures")[0]  # what differs comes first
    assert "two-sessions vs one-session: reads/s" in text.out
    mixed = dbio("compare", str(result_dir(first)), str(instance.results / "nope"))
    assert mixed.code == 2


def test_a_failed_step_is_named_with_why_and_a_later_attempt_that_completes_keeps_no_error(instance):
    """A step whose session was terminated fails the sweep, whose last line says which step and why; resumed,
    the step completes, and its record keeps no error of the attempt before it (the failure's stayed beside a
    'complete')."""
    # a 5 s window: the session is ended a second into it, with 4 s to spare on a loaded host; the resumed sweep
    # then runs both steps whole
    proc, directory = _sweep_reaching(instance, "failing", "2,3", "5s", "01-t2", measured=1)
    assert directory is not None, "the sweep's first step never reached its window"
    with instance.connect("sweep") as conn:
        pid = conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'dbio:%:2'").fetchone()[0]
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 1, out + err
    assert f"sweep failed after 0 of 2 steps: step 01-t2 session 2 (pid {pid}, schema 1) ended at" in err, err
    resumed = dbio("sweep", "--resume", str(directory))
    assert resumed.code == 0, resumed.text
    doc = json.loads((directory / "sweep.json").read_text())
    assert [s["status"] for s in doc["steps"]] == ["complete"] * 2
    assert doc["steps"][0]["earlier_attempts"][0].startswith("01-t2.failed-") and "error" not in doc["steps"][0]


def test_a_bad_sweep_grid_is_refused_before_a_stopped_instance_starts(instance):
    # --sessions 1,0 or --vary update_pct=0,200 were refused only after the stopped instance was started
    data_dir = instance.root / "sweepstopped"
    made = dbio("instance", "init", "--data-dir", str(data_dir), "--shared-buffers", "16MiB")
    assert made.code == 0, made.text
    try:
        assert dbio("instance", "stop", "--data-dir", str(data_dir)).code == 0
        args = ["--data-dir", str(data_dir), "--results-dir", str(instance.root / "sweepstopped-results"), *FAST]
        for bad, fragment in ((["--sessions", "1,0"], "'0' is not a number of sessions"),
                              (["--sessions", "1,2", "--vary", "threads_per_schema=1,2"], "varied twice"),
                              (["--vary", "update_pct=0,200"], "above the maximum 100"),
                              (["--vary", "update_pct=0,20", "--update-pct", "50"], "is also varied by --vary"),
                              (["--vary", "shared_buffers=16MiB,1x"], "unknown size unit")):
            refused = dbio("sweep", *args, *bad)
            assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1, refused.text
            assert fragment in refused.err, refused.err
            status = dbio("instance", "status", "--data-dir", str(data_dir))
            assert status.code == 3 and "stopped" in status.out, (bad, status.text)  # still stopped
        assert not (instance.root / "sweepstopped-results").exists()
    finally:
        dbio("instance", "destroy", "--yes", "--data-dir", str(data_dir))
