"""sweep --baseline and compare with baselines, from recorded results: the raw curve in the sweep's
rows, table and charts; efficiency deltas in comparisons when every input has a baseline."""

import copy
import json
from pathlib import Path

import pytest

from dbio import jsondoc, report, file_formats
from dbio import result as results
from dbio.commands import sweep as sweep_command
from dbio.sweep import steps as sweep_steps
from dbio.report import compare_model, sweep_model
from dbio.stats import catalogue
from tests.unit.test_baseline import baseline_record, with_baseline
from dbio.result_records import of
from dbio.sweep_records import of as typed_sweep

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture
def complete():
    return results.completed(json.loads((FIXTURES / "result_complete.json").read_text()))


def sweep_of(complete, raw_reads=(10_000.0, 16_000.0)):
    """A two-step sweep over sessions, each step the recorded result with its reads scaled and a baseline."""
    doc = {"format": "dbio-sweep", "format_version": 1, "status": "complete", "base": {}, "vary":
           [["threads_per_schema", ["1", "2"]]], "until_peak": False, "steps": []}
    steps = {}
    for i, raw in enumerate(raw_reads):
        name = f"0{i + 1}-t{i + 1}"
        doc["steps"].append({"index": i + 1, "name": name, "status": "complete", "values": {"threads_per_schema":
                                                                                             str(i + 1)}})
        step = copy.deepcopy(complete)
        step["config"]["workload"]["sessions"] = i + 1
        step["figures"]["load_profile"]["physical_reads_per_s"] *= (1 + i)
        steps[name] = with_baseline(step, baseline_record(sync_reads=raw)) if raw else step
    return doc, steps


def test_the_raw_curve_is_in_the_rows_the_table_and_the_charts(complete):
    doc, steps = sweep_of(complete)
    model = sweep_model.build(typed_sweep(doc), steps)
    [curve] = model["curves"]["lines"]
    assert [p["raw_iops"] for p in curve["points"]] == [10_000.0, 16_000.0]
    summary = next(s for s in model["sections"] if s["id"] == "summary")["tables"][0]
    assert summary["columns"][-3:] == ["Raw reads/s", "Efficiency", "Status"]
    reads = catalogue.value(catalogue.figures_of(steps["02-t2"]), "reads_per_s")
    assert summary["rows"][1][-2] == pytest.approx(reads / 16_000.0)
    html = report.render_model(model, "html")
    assert html.count("raw (fio)") >= 2


def test_a_sweep_without_baseline_has_no_raw_columns(complete):
    doc, steps = sweep_of(complete, raw_reads=(None, None))
    model = sweep_model.build(typed_sweep(doc), steps)
    summary = next(s for s in model["sections"] if s["id"] == "summary")["tables"][0]
    assert "Raw reads/s" not in summary["columns"] and "raw (fio)" not in report.render_model(model, "html")


def test_sweep_json_keeps_the_baseline_request_and_resume_finds_fio_again(complete, monkeypatch, tmp_path):
    doc, _ = sweep_of(complete)
    doc["baseline"] = {"path": "/srv/scratch"}
    jsondoc.check(doc, file_formats.sweep(1))
    monkeypatch.setenv("PATH", str(tmp_path))  # no fio: resume says so before anything runs
    with pytest.raises(Exception, match="fio"):
        sweep_command.baseline_request(doc)
    assert sweep_command.baseline_request({"steps": []}) is None


def test_compare_shows_efficiency_deltas_only_when_both_results_have_a_baseline(complete):
    first = with_baseline(complete, baseline_record(sync_reads=10_000.0))
    second = with_baseline(complete, baseline_record(sync_reads=20_000.0))
    model = compare_model.build([("a", of(first)), ("b", of(second))])
    rows = next(s for s in model["sections"] if s["id"] == "figures")["tables"][0]["rows"]
    efficiency = next(r for r in rows if r[0] == "Database efficiency (reads/s / raw)")
    reads = catalogue.value(catalogue.figures_of(complete), "reads_per_s")
    assert efficiency[1]["value"] == pytest.approx(reads / 10_000) and efficiency[3]["value"] == pytest.approx(
        reads / 20_000 - reads / 10_000)
    assert f"efficiency {reads / 10_000:.2f} -> {reads / 20_000:.2f}" in model["headline_text"]
    plain = compare_model.build([("a", of(first)), ("b", of(complete))])
    assert "efficiency" not in json.dumps(plain).lower()


def test_compare_sweeps_adds_efficiency_columns_when_both_have_baselines(complete):
    one, one_steps = sweep_of(complete)
    two, two_steps = sweep_of(complete, raw_reads=(20_000.0, 32_000.0))
    model = compare_model.build_sweeps([("one", typed_sweep(one), one_steps), ("two", typed_sweep(two), two_steps)])
    steps = model["sections"][0]["tables"][0]
    assert steps["columns"][-3:] == ["one efficiency", "two efficiency", "delta"]
    row = steps["rows"][0]
    assert row[-1] == pytest.approx(row[-2] - row[-3]) and row[-2] == pytest.approx(row[-3] / 2)
    bare, bare_steps = sweep_of(complete, raw_reads=(None, None))
    model = compare_model.build_sweeps([("one", typed_sweep(one), one_steps), ("bare", typed_sweep(bare), bare_steps)])
    assert "efficiency" not in " ".join(model["sections"][0]["tables"][0]["columns"])


def test_a_sweep_whose_steps_measured_the_wait_for_a_cpu_shows_it_after_the_average_read(complete):
    doc, steps = sweep_of(complete, raw_reads=(None, None))
    model = sweep_model.build(typed_sweep(doc), steps)
    summary = next(s for s in model["sections"] if s["id"] == "summary")["tables"][0]
    assert "CPU wait in read" not in summary["columns"]  # recorded before it was measured
    assert "waiting for a CPU" not in report.render_model(model, "html")
    # the recorded read: 133 us, the device's own 80 us; a wait of 60 us at the second step lies outside it
    for wait, step in zip((10.0, 60.0), steps.values()):
        step["figures"]["cpu"]["cpu_wait_us_per_read"] = wait
    model = sweep_model.build(typed_sweep(doc), steps)
    assert "all steps: of which waiting for a CPU" in report.render_model(model, "html")  # the latency chart's line
    summary = next(s for s in model["sections"] if s["id"] == "summary")["tables"][0]
    at = summary["columns"].index("CPU wait in read")
    assert summary["columns"][at - 1] == catalogue.figure("avg_read_us").short
    assert [row[at] for row in summary["rows"]] == [10.0, None]


def test_a_failed_sweep_says_which_step_failed_and_why(complete, tmp_path):
    doc, _ = sweep_of(complete)
    doc["status"] = "failed"
    doc["steps"][0].update(status="failed", error="stopped before the disk filled: 40 MiB left on the filesystem "
                           "of /srv/db, where the server writes")
    doc["steps"][1]["status"] = "pending"
    jsondoc.check(doc, file_formats.sweep(1))
    from dbio.errors import DbioError
    from dbio.ui import UI

    with pytest.raises(DbioError, match="^sweep failed after 0 of 2 steps: step 01-t1 stopped before the disk "
                                        "filled: 40 MiB left on the filesystem of /srv/db"):
        sweep_steps._finish(tmp_path, doc, UI(quiet=True), None)
