"""A signal after the measured window closed never costs the window its result: SIGINT or SIGTERM (once or
twice) while the external script's post call hangs, while the result is assembled or while the HTML report is
made. Each case is a real process (tests/signalled_run.py: a run on the fake engine) sent a real signal at a
known moment: it ends within seconds, exits 130 or 143, and its result.json holds the whole window and says
what the signal stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbio import result as results
from dbio import signals
from dbio.collect import fio
from dbio.errors import UsageError
from dbio.jobs import baseline as baselines
from dbio.jobs import external_script
from dbio.run import abandoned
from dbio.ui import UI

ROOT = Path(__file__).resolve().parents[2]
RUN_TIME = 1
CODES = {"SIGINT": 130, "SIGTERM": 143}


def _hanging_post(tmp_path: Path) -> tuple[Path, Path]:
    """A script whose post call hangs (and says when it began, and its process group, in the marker)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(mode=0o755)
    marker = tmp_path / "post-started"
    script = bin_dir / "array-stats"
    script.write_text(f'#!/bin/sh\nif [ "$1" = post ]; then echo $$ > {marker}.tmp; mv {marker}.tmp {marker}; '
                      "sleep 60; fi\nexit 0\n")
    script.chmod(0o700)
    return script, marker


def _launch(tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.signalled_run", str(tmp_path / "results"),
                             f"run_time={RUN_TIME}", *options], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"{path.name} never appeared: {out}{err}")
        time.sleep(0.02)


def _ended(proc: subprocess.Popen, sent: float) -> tuple[int, str, str, float]:
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"still running 60 s after the signal: {out}{err}")
    return proc.returncode, out, err, time.monotonic() - sent


def _whole_window(proc_out: str) -> tuple[Path, dict]:
    """The run's directory (as it printed it) and its result, checked to hold the whole window."""
    directory = Path(next(line for line in proc_out.splitlines() if line.startswith("result: "))[len("result: "):])
    doc = results.read(directory)
    assert doc["status"] == "complete", doc["status_reason"]
    assert doc["figures"]["window_seconds"] == pytest.approx(RUN_TIME, abs=0.3)
    assert doc["figures"]["load_profile"]["statements_per_s"] > 0
    assert abandoned.abandoned(directory.parent) == []  # nothing for the next run to rebuild as lost
    return directory, doc


def _html_left_out(directory: Path, doc: dict, why: str) -> None:
    assert doc["files"]["html"] is None and not (directory / "report.html").exists()
    assert (directory / "report.txt").exists()
    (event,) = [e for e in doc["events"] if e["kind"] == "report_left_out"]
    assert event["file"] == "report.html" and why in event["message"]
    assert f"dbio report {directory} --format html --out {directory / 'report.html'}" in event["message"]


def _gone(group: int, timeout: float = 5.0) -> bool:
    """Whether every process of the group has ended (a zombie waiting for init to reap it has ended)."""
    deadline = time.monotonic() + timeout
    while _living(group):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _living(group: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            state, _, pgrp = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # not a process, or ended meanwhile
        if int(pgrp) == group and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_while_the_post_call_hangs_keeps_the_whole_window(tmp_path, name):
    script, marker = _hanging_post(tmp_path)
    proc = _launch(tmp_path, f"external_script={script}")
    _wait_for(marker, proc)
    time.sleep(0.5)  # the run's end, its sessions closed (a signal then is the run's own: "run"), is a moment
    sent = time.monotonic()
    proc.send_signal(getattr(signal, name))
    code, out, err, seconds = _ended(proc, sent)
    assert code == CODES[name], out + err
    # the call had its SIGNAL_WAIT_SECONDS, then was stopped (a script that takes SIGTERM ends at once)
    assert external_script.SIGNAL_WAIT_SECONDS - 0.5 < seconds < external_script.SIGNAL_WAIT_SECONDS + 6, seconds
    directory, doc = _whole_window(out)
    assert doc["signal"]["name"] == name and doc["signal"]["count"] == 1
    assert doc["signal"]["during"] in ("run", "post_call")  # as the run ended, or once it had
    post = next(c for c in doc["external_script"]["calls"] if c["phase"] == "post")
    assert post["stopped"] == f"still running {external_script.SIGNAL_WAIT_SECONDS:g} s after {name}"
    assert post["signal"] == name and post["ended"] is not None
    assert f"the external script was stopped (still running 5 s after {name}) at post" in err
    assert _gone(int(marker.read_text()))  # the script and its sleep
    _html_left_out(directory, doc, f"{name} came before it was made")


def test_a_second_signal_stops_the_post_call_at_once(tmp_path):
    script, marker = _hanging_post(tmp_path)
    proc = _launch(tmp_path, f"external_script={script}")
    _wait_for(marker, proc)
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    second = time.time()
    proc.send_signal(signal.SIGINT)
    code, out, err, seconds = _ended(proc, sent)
    assert code == 130, out + err
    directory, doc = _whole_window(out)
    assert doc["signal"]["name"] == "SIGINT" and doc["signal"]["count"] == 2
    assert doc["signal"]["during"] in ("run", "post_call")
    post = next(c for c in doc["external_script"]["calls"] if c["phase"] == "post")
    assert post["stopped"] == "SIGINT came after SIGINT: stopped at once"
    assert post["ended"] - second < external_script.STOP_SECONDS, post  # not the SIGNAL_WAIT_SECONDS
    assert seconds < external_script.SIGNAL_WAIT_SECONDS + 3
    _html_left_out(directory, doc, "SIGINT came before it was made")


@pytest.mark.parametrize("point, name, during, why", [
    ("run.results", "SIGINT", "result", "SIGINT came before it was made"),  # as the result is assembled
    ("run.html", "SIGTERM", "reports", "SIGTERM came while it was made"),  # the text report is written already
])
def test_a_signal_while_the_result_or_its_reports_are_made_keeps_the_whole_window(tmp_path, point, name, during,
                                                                                 why):
    marker = tmp_path / "at-the-point"
    proc = _launch(tmp_path, env={"DBIO_FAULT": point, "DBIO_FAULT_MARKER": str(marker), "DBIO_FAULT_SECONDS": "3"})
    _wait_for(marker, proc)
    sent = time.monotonic()
    proc.send_signal(getattr(signal, name))
    code, out, err, seconds = _ended(proc, sent)
    assert code == CODES[name], out + err
    assert seconds < 3 + 5  # the point's own wait, at most, then the result
    directory, doc = _whole_window(out)
    assert doc["signal"] == {"name": name, "count": 1, "during": during}
    _html_left_out(directory, doc, why)


def test_run_repeat_keeps_the_run_a_signal_came_after(tmp_path):
    script, marker = _hanging_post(tmp_path)
    proc = _launch(tmp_path, f"external_script={script}", "repeat=3")
    _wait_for(marker, proc)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code, out, err, _ = _ended(proc, sent)
    assert code == 143, out + err
    directory = Path(next(line for line in out.splitlines() if line.startswith("result: "))[len("result: "):])
    repeat = json.loads((directory / "repeat.json").read_text())
    assert repeat["status"] == "interrupted"
    assert [m["status"] for m in repeat["members"]] == ["complete", "pending", "pending"]
    assert repeat["spread"]["reads_per_s"]["n"] == 1  # the run whose window was whole counts
    doc = results.read(directory / "r1")
    assert doc["status"] == "complete" and doc["signal"]["name"] == "SIGTERM"
    assert not (directory / "r2").exists()


# -- the parts, in this process ------------------------------------------------------------------------------

def test_signals_received_are_raised_until_shielded_then_only_noted():
    with signals.received() as came:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)  # as Ctrl-C: the caller tells them apart by name
        assert came.first == "SIGTERM"
        came.shield()
        came.step("reports")
        began = time.monotonic()
        signal.raise_signal(signal.SIGINT)  # noted, not raised
        came.wait(5)  # a signal that came already does not end a wait: only one more does
        assert time.monotonic() - began >= 5
    assert came.names == ["SIGTERM", "SIGINT"]
    assert came.record() == {"name": "SIGTERM", "count": 2, "during": None}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handlers before it, again


def test_signals_routed_come_back_to_the_handlers_before():
    taken: list[int] = []
    with signals.received() as came:
        came.shield()
        with signals.routed(taken.append):
            signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGTERM)
    assert taken == [signal.SIGINT] and came.names == ["SIGTERM"]


def test_fio_is_stopped_as_soon_as_it_is_told(tmp_path):
    """fio's wait stops it when asked (a signal came after the window): a real program in fio's place, asked
    to stop 0.5 s after its start, ends within fio's stop time, its process group gone."""
    pid_file = tmp_path / "pid"
    began = time.monotonic()
    with pytest.raises(fio.Stopped, match="stopped before its end"):
        fio.run_counting_cpu([sys.executable, "-c", f"import os, time; open({str(pid_file)!r}, 'w').write("
                              "str(os.getpid())); time.sleep(60)"], 30, "sleeper",
                             stop=lambda: time.monotonic() - began > 0.5)
    assert time.monotonic() - began < 0.5 + fio.STOP_SECONDS + 1
    assert _gone(int(pid_file.read_text()))


def test_no_fio_after_the_run_once_a_signal_came(tmp_path):
    """A signal before fio's run after the database's: it is not begun, and the record says so."""
    place = baselines.Place((str(tmp_path / "data"),), "the data files", 1 << 20)
    record = {"after_seconds": 3, "sessions": 2, "runs": {"sync": {}}, "seconds": 3.0}
    came = signals.Received()
    came.note("SIGINT")
    baselines.measure_after("/nonexistent/fio", place, record, UI(quiet=True), came)
    assert record["after_skipped"] == "not run: SIGINT came before it" and "sync_after" not in record["runs"]


def test_a_result_s_signal_record_is_checked_as_it_is_read(tmp_path):
    doc = json.loads((ROOT / "tests/fixtures/result_format2.json").read_text())
    (tmp_path / "result.json").write_text(json.dumps({**doc, "signal": {"name": "SIGINT", "count": 2,
                                                                       "during": "post_call"}}))
    assert results.read(tmp_path)["signal"]["count"] == 2
    (tmp_path / "result.json").write_text(json.dumps({**doc, "signal": {"name": "SIGINT"}}))
    with pytest.raises(UsageError, match="signal lacks count"):
        results.read(tmp_path)
