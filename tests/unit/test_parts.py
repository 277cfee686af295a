"""The parts of one run: i/N read, one identity every part derives alike (dbio/parts.py)."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from tests.unit.test_dsn_sweep_markdown import run_cli

from dbio import parts

WORKLOAD = {"scale": 4096, "schemas": 1, "threads_per_schema": 2, "sessions": 2, "update_pct": 0}


def test_part_is_read_as_i_of_n_and_refused_outside_one_to_n():
    assert parts.parse("2/3") == (2, 3)
    assert parts.parse(" 1 / 2 ") == (1, 2)
    for bad, why in (("3", "is not i/N"), ("0/3", "numbered 1 to 3"), ("4/3", "numbered 1 to 3"),
                     ("1/1", "2 to 1000"), ("1/1001", "2 to 1000"), ("a/b", "is not i/N")):
        with pytest.raises(ValueError, match=why):
            parts.parse(bad)


def test_every_part_derives_one_identity_whatever_sessions_it_runs():
    one = parts.run_identity(1_800_000_000.0, 3, WORKLOAD)
    other_sessions = parts.run_identity(1_800_000_000.0, 3, {**WORKLOAD, "threads_per_schema": 5, "sessions": 5})
    assert one == other_sessions and one.startswith("run-")
    assert parts.run_identity(1_800_000_001.0, 3, WORKLOAD) != one  # another start
    assert parts.run_identity(1_800_000_000.0, 4, WORKLOAD) != one  # another number of parts
    assert parts.run_identity(1_800_000_000.0, 3, {**WORKLOAD, "update_pct": 10}) != one  # another workload
    assert parts.run_identity(1_800_000_000.0, 3, WORKLOAD, "nightly-42") == "nightly-42"


def test_a_runs_lock_key_is_a_positive_int4_above_dbios_own_keys():
    keys = {parts.lock_key(f"run-{i}") for i in range(2000)}
    assert all(parts.FIRST_RUN_KEY <= k < 2**31 for k in keys)
    assert len(keys) == 2000
    assert parts.lock_key("nightly-42") == parts.lock_key("nightly-42")


def test_a_results_part_is_read_back_and_a_whole_run_has_none():
    part = parts.of_config("2/3", None, 1_800_000_000.0, WORKLOAD)
    assert part is not None and (part.index, part.of) == (2, 3)
    assert parts.part_of({"part": part.to_dict()}) == part
    assert parts.part_of({}) is None and parts.part_of({"part": {"index": "x"}}) is None
    assert parts.of_config(None, None, 1_800_000_000.0, WORKLOAD) is None


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    import os

    for name in [n for n in os.environ if n.startswith(("DBIO_", "PG", "MYSQL"))]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


AHEAD = datetime.fromtimestamp(time.time() + 86400, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")  # a day ahead


@pytest.mark.parametrize("argv, fragment", [
    (["run", "--dsn", "host=db1 dbname=x", "--part", "2/3"], "--part = 2/3: needs the start every part agrees on"),
    (["run", "--part", "2/3", "--start-at", AHEAD], "runs against one server that every part reaches"),
    (["run", "--dsn", "host=db1 dbname=x", "--dsn", "host=db2 dbname=x", "--part", "1/2", "--start-at", AHEAD],
     "runs against one server that every part reaches"),
    (["run", "--dsn", "host=db1 dbname=x", "--part", "4/3", "--start-at", AHEAD], "parts are numbered 1 to 3"),
    (["run", "--dsn", "host=db1 dbname=x", "--run-id", "nightly"], "this run is not a part"),
    (["run", "--dsn", "host=db1 dbname=x", "--part", "1/2", "--run-id", "a b", "--start-at", AHEAD],
     "is not 1 to 64 letters"),
    (["setup", "--dsn", "host=db1 dbname=x", "--part", "1/2"], "--part"),
    (["sweep", "--part", "1/2"], "--part"),
])
def test_a_part_badly_given_is_refused_in_one_line_before_anything(argv, fragment, capsys, clean_env):
    code, out, err = run_cli(argv, capsys)
    assert code == 2, err
    assert fragment in err and len(err.strip().splitlines()) == 1, err


def test_mysql_takes_parts_and_goes_on_to_its_server(capsys, clean_env):
    """--part on the mysql engine passes the checks: what stops it here is the server it cannot reach."""
    code, out, err = run_cli(["run", "--engine", "mysql", "--dsn", "mysql://dbio@db1.invalid/x", "--part", "1/2",
                              "--start-at", AHEAD], capsys)
    assert "cannot connect to MySQL at db1.invalid" in err and "part" not in err
    assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_in_an_indexed_job_s_pod_the_part_is_its_completion_index_plus_one():
    """Kubernetes numbers an Indexed Job's pods from 0 (JOB_COMPLETION_INDEX); parts are numbered from 1."""
    assert parts.parse("job-index/3", {"JOB_COMPLETION_INDEX": "0"}) == (1, 3)
    assert parts.parse("job-index/3", {"JOB_COMPLETION_INDEX": "2"}) == (3, 3)
    assert parts.parse("job-index+3/6", {"JOB_COMPLETION_INDEX": "1"}) == (5, 6)  # a second target's Job
    for text, env, why in (("job-index/3", {}, "JOB_COMPLETION_INDEX, which is not set"),
                           ("job-index/3", {"JOB_COMPLETION_INDEX": "3"}, "part 4 of 3"),
                           ("job-index/3", {"JOB_COMPLETION_INDEX": "-1"}, "not a completion index"),
                           ("job-index/3", {"JOB_COMPLETION_INDEX": "x"}, "not a completion index"),
                           ("job-index+3/6", {"JOB_COMPLETION_INDEX": "3"}, "part 7 of 6"),
                           ("jobindex/3", {"JOB_COMPLETION_INDEX": "0"}, "is not i/N")):
        with pytest.raises(ValueError, match=why):
            parts.parse(text, env)


@pytest.mark.parametrize("index, fragment", [(None, "JOB_COMPLETION_INDEX, which is not set"),
                                             ("3", "names part 4 of 3")])
def test_a_pods_part_that_its_index_cannot_give_is_refused_in_one_line(index, fragment, capsys, clean_env,
                                                                       monkeypatch):
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    if index is not None:
        monkeypatch.setenv("JOB_COMPLETION_INDEX", index)
    code, out, err = run_cli(["run", "--dsn", "host=db1 dbname=x", "--part", "job-index/3", "--start-at", AHEAD],
                             capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1, err
