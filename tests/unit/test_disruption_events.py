"""--event AT=ACTION: each action parsed, every bad one refused in one line before anything runs (dbio/disruption.py,
config_checks.event_errors)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dbio import disruption


def dbio(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dbio", *args], capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.mark.parametrize("text, at, action, seconds, iops, path", [
    ("10s=stall:3s", 10.0, "stall", 3.0, None, None),
    ("1m30s=stall:500ms", 90.0, "stall", 0.5, None, None),
    ("10=throttle:500:10s", 10.0, "throttle", 10.0, 500, None),
    ("5s=checkpoint", 5.0, "checkpoint", None, None, None),
    ("20s=exec:/opt/migrate vm1", 20.0, "exec", None, None, "/opt/migrate vm1"),
    ("20s=exec:/x:y", 20.0, "exec", None, None, "/x:y"),
])
def test_each_action_parsed(text, at, action, seconds, iops, path):
    event = disruption.parse(text)
    assert (event.at, event.action, event.seconds, event.iops, event.path) == (at, action, seconds, iops, path)
    assert event.text == text


@pytest.mark.parametrize("text, says", [
    ("stall:3s", "is not AT=ACTION"),
    ("10s=", "is not AT=ACTION"),
    ("soon=stall:3s", "its offset AT soon is not a duration"),
    ("10s=stall", "gives no DURATION"),
    ("10s=stall:0s", "must be more than 0"),
    ("10s=throttle:many:3s", "IOPS many is not a whole number"),
    ("10s=throttle:0:3s", "is not between 1 and"),
    ("10s=throttle:100", "gives no DURATION"),
    ("10s=checkpoint:now", "checkpoint takes no argument"),
    ("10s=exec:", "names no program"),
    ("10s=reboot", "reboot is not an action"),
])
def test_a_bad_event_says_what_is_wrong(text, says):
    with pytest.raises(ValueError, match=says):
        disruption.parse(text)


def test_events_together_fit_the_window():
    events = tuple(disruption.parse(t) for t in ("10s=stall:3s", "12s=checkpoint", "29s=stall:3s", "40s=checkpoint"))
    found = disruption.problems(events, 30.0)
    assert found == ["29s=stall:3s ends after the window's end (30 s)",
                     "40s=checkpoint starts at or after the window's end (30 s)",
                     "12s=checkpoint begins before 10s=stall:3s ends: their dips could not be told apart"]
    assert disruption.problems(events[:1] + events[2:3], 0) == []  # a window bounded by work_loop: no end known


@pytest.mark.parametrize("args, says", [
    (["--event", "10s=stall"], "--event = 10s=stall: gives no DURATION (stall:DURATION)"),
    (["--event", "31s=checkpoint"], "31s=checkpoint starts at or after the window's end"),
    (["--event", "5s=stall:2s", "--event", "6s=checkpoint"], "6s=checkpoint begins before 5s=stall:2s ends"),
])
def test_the_run_refuses_a_bad_event_in_one_line_before_anything(tmp_path, args, says):
    results = tmp_path / "results"
    out = dbio("run", "--dsn", f"host={tmp_path}/nowhere", "--run-time", "30s", "--results-dir", str(results), *args,
               cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert says in out.stderr
    assert len([line for line in out.stderr.splitlines() if line.strip()]) == 1
    assert not results.exists()


def test_a_list_in_dbio_toml(tmp_path):
    (tmp_path / "dbio.toml").write_text('[run]\nevent = ["10s=stall:3s", "20s=stall"]\n')
    out = dbio("run", "--config", str(tmp_path / "dbio.toml"), "--dsn", f"host={tmp_path}/nowhere", "--run-time",
               "30s", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        "dbio: dbio.toml: run.event = 20s=stall: gives no DURATION (stall:DURATION); give AT=ACTION, e.g. "
        "10s=stall:3s, 10s=throttle:500:10s, 5s=checkpoint or 20s=exec:/path/to/program"]


def test_a_sweep_varies_the_event_one_a_step():
    from dbio.errors import UsageError
    from dbio.sweep import plan

    vary = plan.parse_vary("event=10s=stall:1s,10s=stall:3s,10s=throttle:500:5s")
    assert vary.values == ("10s=stall:1s", "10s=stall:3s", "10s=throttle:500:5s") and not vary.restarts
    assert [plan.step_name(i + 1, {"event": v}) for i, v in enumerate(vary.values)] == [
        "01-ev10sstall1s", "02-ev10sstall3s", "03-ev10sthrottle5005s"]
    with pytest.raises(UsageError, match="10s=stall: gives no DURATION"):
        plan.parse_vary("event=10s=stall:1s,10s=stall")
