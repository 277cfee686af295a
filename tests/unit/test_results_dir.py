"""The results directory is checked before anything is started or made, in one line; each run's own
directory is made for it alone, even for runs started in the same second with the same label."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from dbio import results_dir
from dbio.errors import UsageError
from tests import forked_dbio, small_fs
from tests.fake_engine import FakeEngine
from tests.fake_runs import run_config as _config, run_loaded as _run


def _claim(name: Path, start, out) -> None:
    start.wait(10)
    try:
        out.put(str(results_dir.claim(name, "the run's result")))
    except BaseException as exc:  # the parent asserts on it
        out.put(f"error: {type(exc).__name__}: {exc}")


def test_two_processes_claiming_one_name_at_once_both_get_a_directory_of_their_own(tmp_path):
    context = multiprocessing.get_context("fork")
    for attempt in range(10):
        name = tmp_path / f"20260101-120000-same-{attempt}"
        start, out = context.Barrier(2), context.Queue()
        processes = [context.Process(target=_claim, args=(name, start, out)) for _ in range(2)]
        for process in processes:
            process.start()
        got = sorted(out.get(timeout=20) for _ in processes)
        for process in processes:
            process.join(10)
        assert got == sorted([str(name), f"{name}-2"]), got
        assert all(Path(p).is_dir() for p in got)


def test_a_run_whose_name_is_taken_writes_its_result_under_the_next_free_name(tmp_path):
    config = _config(tmp_path, label="same")
    now = datetime.now()
    for second in range(-1, 30):  # whatever second the run starts in, another run took its name
        (config.run.results_dir / results_dir.run_name("same", now=now + timedelta(seconds=second))).mkdir(parents=True)
    outcome = _run(tmp_path, FakeEngine(), label="same", run_time=1, warmup=0)
    assert outcome.status == "complete"
    assert outcome.directory.name.endswith("-same-2") and (outcome.directory / "result.json").exists()
    assert not any(config.run.results_dir.glob("*-same/*"))  # the directories of the others stay as they were


def test_a_name_given_for_a_run_is_refused_when_taken(tmp_path):
    (tmp_path / "01-t1").mkdir()
    with pytest.raises(UsageError, match="already exists"):
        results_dir.check_new(tmp_path / "01-t1")
    with pytest.raises(UsageError, match="already exists"):
        results_dir.claim(tmp_path / "01-t1", "the run's result", unique=False)


def test_a_results_directory_that_cannot_take_results_is_refused_in_one_line(tmp_path):
    plain = tmp_path / "a-file"
    plain.write_text("")
    with pytest.raises(UsageError, match=f"^results_dir {plain} is not a directory; "):
        results_dir.check(plain)
    with pytest.raises(UsageError, match=f"^results_dir {plain / 'x'} is not a directory \\({plain} on the way"):
        results_dir.check(plain / "x")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UsageError, match=f"^results_dir {shared / 'new'}: {shared} is writable by every user"):
        results_dir.check(shared / "new")
    results_dir.check(tmp_path / "new" / "deeper")  # what does not exist yet is made


def test_a_read_only_results_filesystem_is_refused_before_anything(tmp_path):
    with small_fs.mounted("1m", tmp_path) as mount:
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        with pytest.raises(UsageError, match=f"^results_dir {mount} is not writable"):
            results_dir.check(mount)


def _dbio(*args: str) -> subprocess.CompletedProcess:
    return forked_dbio.completed(list(args), timeout=120, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("command", ["quickstart", "run", "ops", "sweep"])
@pytest.mark.parametrize("problem", ["unsafe", "a file"])
def test_every_command_that_writes_results_refuses_a_bad_results_directory_before_anything(tmp_path, command,
                                                                                           problem):
    results = tmp_path / "results"
    if problem == "unsafe":
        results.mkdir()
        results.chmod(0o777)
    else:
        results.write_text("")
    data = tmp_path / "instance"
    extra = {"quickstart": ["--shared-buffers", "16MiB", "--scale", "32MiB"], "ops": ["checkpoint"],
             "sweep": ["--vary", "threads_per_schema=1,2"]}.get(command, ["--scale", "1GiB"])
    try:
        done = _dbio(command, *extra, "--data-dir", str(data), "--results-dir", str(results))
        assert done.returncode == 2, done.stdout + done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and f"results_dir {results}" in done.stderr, done.stderr
        assert not data.exists()  # no instance made, nothing loaded
    finally:
        if data.exists():  # today's main makes and starts an instance first
            _dbio("instance", "destroy", "--yes", "--data-dir", str(data))
