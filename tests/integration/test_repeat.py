"""Repeated runs on the embedded instance: run --repeat, sweep --repeat interleaved, compare of repeat sets."""

import json
from pathlib import Path

from tests.integration.conftest import BRIEF, SMALL, dbio, load_result, over


def _set_dir(done) -> Path:
    line = next(ln for ln in done.out.splitlines() if ln.startswith("repeat set: "))
    return Path(line.split(": ", 1)[1]).parent


def test_run_repeat_writes_ordinary_runs_and_their_spread(instance, loaded_db):
    done = dbio("run", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "rep"), "--repeat", "3")
    assert done.code == 0, done.text
    directory = _set_dir(done)
    assert directory.name.endswith("-repeat-rep")
    doc = json.loads((directory / "repeat.json").read_text())
    assert doc["status"] == "complete" and [m["name"] for m in doc["members"]] == ["r1", "r2", "r3"]
    reads = [load_result(directory / name)["figures"]["load_profile"]["physical_reads_per_s"]
             for name in ("r1", "r2", "r3")]
    assert all(load_result(directory / name)["status"] == "complete" for name in ("r1", "r2", "r3"))
    spread = doc["spread"]["reads_per_s"]
    assert (spread["min"], spread["median"], spread["max"]) == tuple(sorted(reads))
    assert "Physical reads/s: median of 3 runs" in done.out
    # compared with itself: the same runs on both sides overlap
    same = dbio("compare", str(directory), str(directory), "--names", "a,b")
    assert same.code == 0, same.text
    assert "median reads/s +0.0% (3 vs 3 runs), within the noise" in same.out
    assert "Run-to-run spread" in same.out
    # a single run: the interval-noise test, which says what it cannot see
    single = dbio("compare", str(directory / "r1"), str(directory / "r2"))
    assert single.code == 0 and "repeat with --repeat 3 to judge run-to-run noise" in single.out


def test_sweep_repeat_runs_its_steps_interleaved(instance, loaded_db):
    done = dbio("sweep", *instance.args(loaded_db, *over(SMALL, *BRIEF), "--label", "srep"), "--sessions", "1,2",
                "--repeat", "2")
    assert done.code == 0, done.text
    line = next(ln for ln in done.out.splitlines() if ln.startswith("sweep: "))
    directory = Path(line.split(": ", 1)[1]).parent
    doc = json.loads((directory / "sweep.json").read_text())
    steps = sorted(doc["steps"], key=lambda s: s["started_at"])
    assert [s["name"] for s in steps] == ["01-t1-r1", "02-t2-r1", "01-t1-r2", "02-t2-r2"]
    assert all(s["status"] == "complete" for s in steps)
    text = (directory / "sweep.txt").read_text()
    assert "Run-to-run spread" in text and "2 of 2" in text


def test_repeat_refused_before_anything(instance, loaded_db, tmp_path):
    results = tmp_path / "none"
    for args, fragment in ((["run", "--repeat", "0"], "--repeat 0"),
                           (["sweep", "--sessions", "1,2", "--repeat", "0"], "--repeat 0"),
                           (["sweep", "--until-peak", "--repeat", "2"], "--until-peak")):
        done = dbio(*args, "--data-dir", str(instance.data_dir), "--dbname", loaded_db, "--results-dir", str(results))
        assert done.code == 2, done.text
        assert fragment in done.err and len(done.err.strip().splitlines()) == 1, done.err
        assert not results.exists()
