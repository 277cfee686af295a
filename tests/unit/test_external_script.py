"""--external-script: called with pre and post and the run directory, its output kept and its exit
status recorded; refused in one line when another user could change it. Runs on the fake engine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dbio import result as results
from dbio.commands import external_script
from dbio.errors import UsageError
from tests.fake_engine import FakeEngine
from tests.unit.test_run_pipeline import _run


def _script(tmp_path: Path, body: str, mode: int = 0o700) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir(mode=0o755, exist_ok=True)
    path = directory / "array-stats"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(mode)
    return path


def test_the_script_runs_before_and_after_and_is_recorded(tmp_path):
    script = _script(tmp_path, 'echo "phase $1 in $2"\n[ "$1" = post ] && exit 3\nexit 0\n')
    outcome = _run(tmp_path, FakeEngine(), run_time=1, warmup=0, external_script=str(script))
    assert outcome.status == "complete"
    directory = outcome.directory
    assert (directory / "external-pre.log").read_text() == f"phase pre in {directory}\n"
    assert (directory / "external-post.log").read_text() == f"phase post in {directory}\n"
    recorded = results.read(directory)["external_script"]
    assert recorded["path"] == str(script)
    assert [(c["phase"], c["exit_status"], c["output"]) for c in recorded["calls"]] == \
        [("pre", 0, "external-pre.log"), ("post", 3, "external-post.log")]
    assert "external_script" in json.loads((directory / "result.json").read_text())


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
    from dbio.config import Sources, load_config

    script = _script(tmp_path, "exit 0\n")
    conf = tmp_path / "slob.conf"
    conf.write_text("UPDATE_PCT=0\nEXTERNAL_SCRIPT=bin/array-stats\n")
    conf.chmod(0o600)
    config = load_config(Sources(slob_conf=conf, cli={"allow_cached": True}, cwd=tmp_path, discover=False))
    assert config.run.external_script == str(script)
    assert not any("EXTERNAL_SCRIPT" in notice for notice in config.notices)
    assert external_script.check(config.run.external_script) == script
    script.chmod(0o777)
    with pytest.raises(UsageError, match="refusing to run"):
        external_script.check(config.run.external_script)


def test_the_script_is_still_refused_in_dbio_toml_and_the_environment(tmp_path):
    from dbio.config import Sources, load_config
    from dbio.errors import ConfigErrors

    toml = tmp_path / "dbio.toml"
    toml.write_text('[run]\nexternal_script = "/bin/true"\n')
    toml.chmod(0o600)
    with pytest.raises(ConfigErrors, match="taken only from the command line"):
        load_config(Sources(config_file=toml, cwd=tmp_path))
    config = load_config(Sources(env={"DBIO_EXTERNAL_SCRIPT": "/bin/true"}, cli={"allow_cached": True}, cwd=tmp_path,
                                 discover=False))
    assert config.run.external_script is None
