"""Repeated runs: the spread of a figure over runs, the judgement of two sets of runs against it (pure, on
recorded numbers), the repeat loop on the fake engine, and compare with repeat sets."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from dbio import repeat_set
from dbio import result as results
from dbio.commands import compare as compare_command
from dbio.commands import repeat as repeats
from dbio.jobs import run as run_job
from dbio.config import Sources, load_config
from dbio.errors import UsageError
from dbio.report import compare_model
from dbio.run.plan import make_plan
from dbio.stats import spread
from dbio.target import Target
from dbio.ui import UI
from tests import fake_engine
from tests.virtual_time import VirtualTime
from tests.fake_engine import FakeEngine
from dbio.result_records import of
from dbio.sweep_records import of as typed_sweep

FIXTURES = Path(__file__).parent.parent / "fixtures"

# reads/s of repeated 3 s runs on a 2-core VM shared with other work (bench/RESULTS.md, "Repeated runs"):
# the same settings three times, then four sessions instead of one.
SAME_A = [2712.0, 2985.0, 2630.0]
SAME_B = [2874.0, 2561.0, 2790.0]
MORE_SESSIONS = [6120.0, 5874.0, 6398.0]


def test_spread_is_median_min_max_and_how_far_apart():
    s = spread.spread([2712.0, None, 2985.0, 2630.0])
    assert (s.n, s.median, s.low, s.high) == (3, 2712.0, 2630.0, 2985.0)
    assert s.spread_pct == pytest.approx(100 * 355 / 2712)
    assert spread.spread([4.0, 1.0, 3.0, 2.0]).median == 2.5
    assert spread.spread([None, float("nan")]) is None


def test_chance_of_a_complete_separation():
    assert spread.chance_of_separation(3, 3) == pytest.approx(0.1)
    assert spread.chance_of_separation(4, 4) == pytest.approx(2 / 70)
    assert spread.chance_of_separation(5, 5) == pytest.approx(2 / 252)
    assert spread.chance_of_separation(1, 1) == 1.0


def test_runs_that_do_not_overlap_differ_beyond_the_noise():
    judged = spread.judge(SAME_A, MORE_SESSIONS)
    assert judged.verdict == spread.BEYOND
    assert judged.chance == pytest.approx(0.1)
    assert judged.median_pct == pytest.approx(100 * (6120 - 2712) / 2712)
    assert "by chance 0.1" in judged.words()


def test_runs_that_overlap_are_within_the_noise_however_far_their_medians():
    judged = spread.judge(SAME_A, SAME_B)
    assert judged.verdict == spread.WITHIN
    assert judged.median_pct == pytest.approx(100 * (2790 - 2712) / 2712)
    # one run inside three runs' range is within their noise
    assert spread.judge([2700.0], SAME_A).verdict == spread.WITHIN


@pytest.mark.parametrize("a, b", [([1.0], [2.0]), ([1.0, 1.1], [2.0, 2.1]), ([1.0], [2.0, 2.1, 2.2]), ([], [1.0])])
def test_too_few_runs_judge_nothing(a, b):
    """A separation that chance alone makes often (2 against 2: 1 in 3) is no verdict, nor is one run a side."""
    assert spread.judge(a, b).verdict == spread.TOO_FEW
    assert "--repeat 3" in spread.judge(a, b).words()


def _doc(reads: float, latency: float) -> dict:
    doc = json.loads((FIXTURES / "result_format2.json").read_text())
    doc["figures"]["load_profile"]["physical_reads_per_s"] = reads
    doc["figures"]["latency"]["avg_read_us"] = latency
    return doc


def _cells(model: dict, table_id: str) -> list[list]:
    return next(t for s in model["sections"] for t in s.get("tables", []) if t["id"] == table_id)["rows"]


def test_compare_of_repeat_sets_shows_medians_and_judges_against_the_spread():
    a = [of(_doc(r, 300.0)) for r in SAME_A]
    b = [of(_doc(r, 160.0)) for r in MORE_SESSIONS]
    model = compare_model.build([("one", a[0]), ("four", b[0])], {"one": a, "four": b})
    reads = next(row for row in _cells(model, "compare_figures") if row[0] == "Physical reads/s")
    assert reads[1]["value"] == 2712.0 and reads[2]["value"] == 6120.0  # medians, not the runs shown
    assert reads[5].startswith(spread.BEYOND)
    assert "median reads/s +125.7% (3 vs 3 runs), beyond the noise" in model["headline_text"]
    spread_rows = _cells(model, "compare_repeats")
    assert spread_rows[0][:3] == ["one", "Physical reads/s", 3]
    same = compare_model.build([("a", a[0]), ("b", a[1])], {"a": a, "b": [of(_doc(r, 300.0)) for r in SAME_B]})
    assert "within the noise" in same["headline_text"]


def test_compare_of_single_runs_says_it_cannot_see_run_to_run_noise():
    model = compare_model.build([("a", of(_doc(2712.0, 300.0))), ("b", of(_doc(2985.0, 300.0)))])
    notes = next(t for s in model["sections"] for t in s.get("tables", []) if t["id"] == "compare_figures")["notes"]
    assert any("repeat with --repeat 3 to judge run-to-run noise" in n for n in notes)
    assert not any(s["id"] == "repeats" for s in model["sections"])


def _config(tmp_path: Path, **cli):
    options = {"schemas": 1, "threads_per_schema": 2, "scale": 2000, "run_time": 2, "warmup": 1,
               "results_dir": str(tmp_path / "results"), "allow_cached": True, "work_unit": 8, **cli}
    return load_config(Sources(env={}, cli=options, cwd=tmp_path))


def _loaded(engine: FakeEngine, config) -> None:
    from dbio.engines.base import SetupSpec

    conn = engine.connect("fake:", application_name="test")
    record = engine.begin_setup(conn, SetupSpec(2000, 1, 0, config.workload.key_order), setup_id="s1",
                                server_version=engine.version)
    engine.finish_setup(conn, record)
    engine.close(conn)


@pytest.fixture(scope="module")
def repeated(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("repeat")
    engine = FakeEngine(time=VirtualTime())  # three runs one after the other, in virtual time (dbio/run/clock.py)
    config = _config(tmp_path)
    _loaded(engine, config)
    plan = make_plan(config.workload, 1)

    def run_one(directory: Path) -> run_job.RunResult:
        return run_job.run_on([Target(engine, "fake:", None)], config, UI(quiet=True), directory, plan,
                                  unique=False, clock=engine.time)

    return repeats.run(config, UI(quiet=True), 3, run_one=run_one)


def test_a_repeat_set_is_three_ordinary_runs_and_their_spread(repeated):
    assert repeated.status == "complete"
    assert [p.name for p in sorted(repeated.directory.iterdir()) if p.is_dir()] == ["r1", "r2", "r3"]
    doc = repeat_set.read(repeated.directory)  # its shape checked
    assert [m["status"] for m in doc["members"]] == ["complete"] * 3
    reads = doc["spread"]["reads_per_s"]
    members = [results.read(repeated.directory / f"r{i}") for i in (1, 2, 3)]
    values = sorted(m["figures"]["load_profile"]["physical_reads_per_s"] for m in members)
    assert (reads["n"], reads["min"], reads["median"], reads["max"]) == (3, values[0], values[1], values[2])
    expected = 2 * fake_engine.ITERATIONS_PER_SECOND * 8
    assert reads["median"] == pytest.approx(expected, rel=0.15)
    lines = repeats.summary_lines(repeated)
    assert lines[0] == "complete: 3 of 3 runs complete"
    assert lines[1].startswith("Physical reads/s: median of 3 runs")


def test_compare_reads_a_repeat_set_as_all_its_runs(repeated, tmp_path):
    labels = ["first", "second"]
    model = compare_command._build_runs(labels, [repeated.directory, repeated.directory])
    assert "median reads/s +0.0% (3 vs 3 runs), within the noise" in model["headline_text"]
    # a single run against the set: its one run is judged against the set's range
    single = compare_command._build_runs(labels, [repeated.directory / "r1", repeated.directory])
    assert "(3 vs 1 runs)" in single["headline_text"]


def test_repeat_is_checked_before_anything(tmp_path):
    config = _config(tmp_path)
    assert repeats.check(None, config) == 1
    with pytest.raises(UsageError, match="--repeat 0"):
        repeats.check(0, config)
    soon = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat(timespec="seconds")
    timed = _config(tmp_path, start_at=soon)
    assert repeats.check(1, timed) == 1
    with pytest.raises(UsageError, match="--start-at"):
        repeats.check(2, timed)


def test_a_repeat_set_whose_first_run_is_refused_leaves_nothing(tmp_path):
    config = _config(tmp_path)
    (tmp_path / "results").mkdir()

    def refused(directory: Path) -> run_job.RunResult:
        raise UsageError("nothing is loaded")

    with pytest.raises(UsageError):
        repeats.run(config, UI(quiet=True), 3, run_one=refused)
    assert list((tmp_path / "results").iterdir()) == []


# -- sweep --repeat ------------------------------------------------------------------------------

def test_a_repeated_sweep_interleaves_its_rounds():
    from dbio.commands import sweep as sweep_command

    steps = sweep_command.rounds([{"threads_per_schema": "1"}, {"threads_per_schema": "4"}], 3)
    assert [s["name"] for s in steps] == ["01-t1-r1", "02-t4-r1", "01-t1-r2", "02-t4-r2", "01-t1-r3", "02-t4-r3"]
    assert [s["index"] for s in steps] == [1, 2, 3, 4, 5, 6]
    assert {s["group"] for s in steps} == {"01-t1", "02-t4"}
    assert [s["name"] for s in sweep_command.rounds([{"threads_per_schema": "1"}])] == ["01-t1"]


def _sweep(reads: dict[str, list[float]], status: str = "complete") -> tuple[dict, dict]:
    """A repeated sweep of 1 and 4 sessions, each step's rounds with the reads/s given."""
    from dbio.commands import sweep as sweep_command

    combos = [{"threads_per_schema": "1"}, {"threads_per_schema": "4"}]
    steps = sweep_command.rounds(combos, 3)
    docs = {}
    for step in steps:
        step["status"] = status
        doc = _doc(reads[step["group"]][step["round"] - 1],
                   300.0 if step["group"] == "01-t1" else 180.0 + step["round"])
        doc["config"]["workload"]["threads_per_schema"] = int(step["values"]["threads_per_schema"])
        doc["config"]["workload"]["sessions"] = int(step["values"]["threads_per_schema"])
        docs[step["name"]] = doc
    sweep = {"format": "dbio-sweep", "format_version": 1, "status": "complete", "base": {"schemas": 1},
             "vary": [["threads_per_schema", ["1", "4"]]], "steps": steps, "repeat": 3, "label": "r"}
    return sweep, docs


def test_a_repeated_sweep_shows_each_step_s_median_and_spread():
    from dbio.report import charts, sweep_model

    sweep, docs = _sweep({"01-t1": SAME_A, "02-t4": MORE_SESSIONS})
    model = sweep_model.build(typed_sweep(sweep), docs)
    rows = _cells(model, "sweep_repeats")
    assert rows[0][:6] == ["01-t1", "3 of 3", 2712.0, 2630.0, 2985.0, pytest.approx(100 * 355 / 2712)]
    assert rows[1][2:5] == [6120.0, 5874.0, 6398.0]
    assert rows[1][6:9] == [182.0, 181.0, 183.0]  # the average read's median, min and max
    summary = _cells(model, "sweep_summary")
    assert [r[0] for r in summary] == ["01-t1", "02-t4"]  # one row per step, not per round
    points = model["curves"]["lines"][0]["points"]
    assert [(p["x"], p["iops"], p["iops_low"], p["iops_high"]) for p in points] == \
        [(1, 2712.0, 2630.0, 2985.0), (4, 6120.0, 5874.0, 6398.0)]
    assert "best 6,120 reads/s at 4 sessions (02-t4)" in model["headline_text"]
    svg = charts.sweep_iops(model["curves"])
    assert svg is not None and svg.count("<svg") == 1
    assert charts.sweep_latency(model["curves"]) is not None


def test_a_step_whose_round_did_not_complete_says_so():
    from dbio import sweep_records
    from dbio.report import sweep_model

    sweep, docs = _sweep({"01-t1": SAME_A, "02-t4": MORE_SESSIONS})
    sweep["steps"][-1]["status"] = "interrupted"
    steps = sweep_records.of(sweep).steps
    rows = sweep_model.repeated_rows([sweep_model.step_row(s, of(docs.get(s.name))) for s in steps])
    assert [(r["step"], r["status"], r["rounds_complete"]) for r in rows] == \
        [("01-t1", "complete", 3), ("02-t4", "interrupted", 2)]
    assert rows[1]["reads_per_s"] == (6120.0 + 5874.0) / 2  # the median of the rounds that completed
