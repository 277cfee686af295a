"""--external-script: called with pre and post and the run directory, its output kept and its exit
status recorded; refused in one line when another user could change it. Runs on the fake engine."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path

import pytest

from dbio import result as results
from dbio.jobs import external_script
from dbio.errors import UsageError
from tests.fake_engine import FakeEngine
from dbio.ui import UI
from tests.fake_runs import STATEMENTS_PER_S, run_loaded as _run
from tests.unit.test_slobconf import load_slob_conf, private_file


def _script(tmp_path: Path, body: str, mode: int = 0o700) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir(mode=0o755, exist_ok=True)
    path = directory / "array-stats"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(mode)
    return path


def test_the_script_runs_at_the_window_s_ends_and_is_recorded(tmp_path):
    script = _script(tmp_path, 'echo "phase $1 in $2"\n[ "$1" = post ] && exit 3\nexit 0\n')
    outcome = _run(tmp_path, FakeEngine(), run_time=1, warmup=0, external_script=str(script))
    assert outcome.status == "complete"
    directory = outcome.directory
    assert (directory / "external-pre.log").read_text() == f"phase pre in {directory}\n"
    assert (directory / "external-post.log").read_text() == f"phase post in {directory}\n"
    recorded = results.read(directory)["external_script"]
    assert recorded["path"] == str(script)
    assert [(c["phase"], c["window"], c["exit_status"], c["output"]) for c in recorded["calls"]] == \
        [("pre", "opened", 0, "external-pre.log"), ("post", "closed", 3, "external-post.log")]
    for call in recorded["calls"]:
        assert call["started"] <= call["ended"] and call["seconds"] >= 0 and abs(call["offset_s"]) < 0.5
    assert "external_script" in json.loads((directory / "result.json").read_text())


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def test_pre_is_called_as_the_window_opens_after_warm_up_and_post_as_it_closes(tmp_path):
    """SLOB's users bracket the array's own statistics with the script: pre must come when the measured
    window opens (after the warm-up, not before it), post when it closes; the sessions run on meanwhile."""
    times = tmp_path / "times"
    script = _script(tmp_path, f'echo "$1 $(date +%s.%N)" >> {times}\n[ "$1" = pre ] && sleep 1.5\nexit 0\n')
    outcome = _run(tmp_path, FakeEngine(), run_time=3, warmup=2, external_script=str(script))
    assert outcome.status == "complete", outcome.document["status_reason"]
    called = dict(line.split() for line in times.read_text().splitlines())
    timeline = outcome.document["timeline"]
    opened, closed = _epoch(timeline["window_start"]), _epoch(timeline["window_end"])
    assert 0 <= float(called["pre"]) - opened < 0.5, (called, timeline)
    assert 0 <= float(called["post"]) - closed < 0.5, (called, timeline)
    # the 1.5 s pre did not hold the sessions: every measured second has the engine's full rate
    figures = outcome.document["figures"]
    assert figures["window_seconds"] == pytest.approx(3.0, abs=0.3)
    assert figures["load_profile"]["statements_per_s"] == pytest.approx(STATEMENTS_PER_S, rel=0.1)
    calls = {c["phase"]: c for c in outcome.document["external_script"]["calls"]}
    assert 0 <= calls["pre"]["offset_s"] < 0.5 and 0 <= calls["post"]["offset_s"] < 0.5
    assert calls["pre"]["seconds"] >= 1.5


def test_a_slow_post_does_not_delay_the_window_s_end_and_is_waited_for(tmp_path):
    script = _script(tmp_path, '[ "$1" = post ] && sleep 2\necho done\nexit 0\n')
    outcome = _run(tmp_path, FakeEngine(), run_time=1, warmup=0, external_script=str(script))
    figures = outcome.document["figures"]
    assert figures["window_seconds"] == pytest.approx(1.0, abs=0.3)
    post = next(c for c in outcome.document["external_script"]["calls"] if c["phase"] == "post")
    assert post["exit_status"] == 0 and post["seconds"] >= 2  # the result waited for it, within its timeout
    assert (outcome.directory / "external-post.log").read_text() == "done\n"


def test_a_script_still_running_after_a_signal_is_stopped_within_seconds(tmp_path, monkeypatch):
    monkeypatch.setattr(external_script, "SIGNAL_WAIT_SECONDS", 0.5)
    script = _script(tmp_path, "sleep 60\n")
    hook = external_script.Hook(script, tmp_path, UI(quiet=True))
    hook.window("open")
    time.sleep(0.2)
    began = time.monotonic()
    hook.finish(interrupted=True)
    assert time.monotonic() - began < external_script.SIGNAL_WAIT_SECONDS + external_script.STOP_SECONDS + 1
    (call,) = hook.record()["calls"]
    assert call["stopped"] == "the run was interrupted" and call["ended"] is not None


def test_a_script_others_may_change_is_refused(tmp_path):
    script = _script(tmp_path, "exit 0\n", mode=0o777)
    with pytest.raises(UsageError, match="refusing to run --external-script .* writable by every user"):
        external_script.check(str(script))
    with pytest.raises(UsageError, match="not an executable file"):
        external_script.check(str(_script(tmp_path, "exit 0\n", mode=0o600)))
    with pytest.raises(UsageError, match="No such file"):
        external_script.check(str(tmp_path / "missing"))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs another owner")
def test_a_script_owned_by_another_user_is_refused(tmp_path):
    script = _script(tmp_path, "exit 0\n")
    os.chown(script, 65534, 65534)
    with pytest.raises(UsageError, match="owned by"):
        external_script.check(str(script))


def test_a_slob_conf_names_the_script_as_slob_s_does(tmp_path):
    """EXTERNAL_SCRIPT in a (trusted) slob.conf is taken, relative to the file as runit.sh runs it; still checked."""
    script = _script(tmp_path, "exit 0\n")
    config = load_slob_conf(tmp_path, "UPDATE_PCT=0\nEXTERNAL_SCRIPT=bin/array-stats\n")
    assert config.run.external_script == str(script)
    assert not any("EXTERNAL_SCRIPT" in notice for notice in config.notices)
    assert external_script.check(config.run.external_script) == script
    script.chmod(0o777)
    with pytest.raises(UsageError, match="refusing to run"):
        external_script.check(config.run.external_script)


def test_the_script_is_still_refused_in_dbio_toml_and_the_environment(tmp_path):
    from dbio.config import Sources, load_config
    from dbio.errors import ConfigErrors

    toml = private_file(tmp_path, "dbio.toml", '[run]\nexternal_script = "/bin/true"\n')
    with pytest.raises(ConfigErrors, match="taken only from the command line"):
        load_config(Sources(config_file=toml, cwd=tmp_path))
    with pytest.raises(ConfigErrors, match="external_script is not read from the environment"):
        load_config(Sources(env={"DBIO_EXTERNAL_SCRIPT": "/bin/true"}, cli={"allow_cached": True}, cwd=tmp_path,
                            discover=False))


def test_a_script_that_cannot_start_is_recorded_with_why(tmp_path):
    script = _script(tmp_path, "exit 0\n")
    hook = external_script.Hook(script, tmp_path / "gone", UI(quiet=True))  # its log has nowhere to go
    hook.window("open")
    hook.finish()
    (call,) = hook.record()["calls"]
    assert call["exit_status"] is None and call["output"] is None and "No such file" in call["error"]
