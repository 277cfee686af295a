"""An invalid result's headline quotes no figure as the storage's, in every report and wherever a
comparison or a sweep quotes it (on recorded results)."""

import copy
import json
import re
from pathlib import Path

import pytest

from dbio import report
from dbio import result as results
from dbio.sweep.document import load_steps
from dbio.report import compare_model, sweep_model, verdict
from dbio.sweep import document
from dbio.result_records import of
from dbio.sweep_records import of as typed_sweep

FIXTURES = Path(__file__).parent.parent / "fixtures"
STORAGE_RATE = re.compile(r"physical reads/s|MiB/s|reads per host-CPU-second|us avg read")


def load(name):
    return results.completed(json.loads((FIXTURES / f"result_{name}.json").read_text()))


def headline_lines(doc):
    """The headline as each renderer shows it: text, Markdown, HTML (its line and its cards), JSON."""
    text = next(line for line in report.render(of(doc), "text").splitlines() if line.startswith("Headline: "))
    md = next(line for line in report.render(of(doc), "md").splitlines() if line.startswith("**Headline:** "))
    html = report.render(of(doc), "html")
    sub = re.search(r'<p class="sub">([^<]*)</p>', html).group(1)
    cards = re.search(r'<section class="cards" id="headline">.*?</section>', html).group(0)
    model = json.loads(report.render(of(doc), "json"))
    return {"text": text, "md": md, "html": sub, "cards": cards, "json": model["headline_text"]}, model


def assert_not_a_storage_result(doc, reads):
    shown, model = headline_lines(doc)
    for form, line in shown.items():
        assert "not a storage result" in line, form
        assert not STORAGE_RATE.search(line), (form, line)
    for form in ("text", "md", "html", "json"):
        assert f"the engine counted {reads} reads/s as physical, but storage was not shown to serve them" \
            in shown[form], form
    assert model["headline"] == []  # no figure card that reads as the storage's
    assert "INVALID" in shown["cards"]


def test_a_valid_result_keeps_its_figures():
    doc = load("complete")
    assert not verdict.invalid(of(doc))
    shown, model = headline_lines(doc)
    assert shown["text"] == "Headline: 8,569 physical reads/s, 133 us avg read, 120.4 MiB/s, " \
                            "12,616 reads per host-CPU-second"
    assert shown["json"] == shown["text"].removeprefix("Headline: ") == shown["html"]
    assert [h["label"] for h in model["headline"]][0] == "Physical reads/s" and "Physical reads/s" in shown["cards"]


def test_reads_the_page_cache_served_are_no_storage_rate():
    """PostgreSQL 15 without direct I/O: 218,805 reads/s the engine called physical, 0.0% of them on the device."""
    doc = load("pg15")
    assert {f.code for f in verdict.invalid(of(doc))} == {"page_cache", "small_data_set"}
    assert_not_a_storage_result(doc, "218,805")


def test_rows_the_buffer_cache_served_are_no_storage_rate():
    doc = load("cached")
    assert "rows_from_cache" in {f.code for f in verdict.invalid(of(doc))}
    assert_not_a_storage_result(doc, "0")


def test_each_invalid_rule_alone_makes_the_headline_say_so():
    """One rule at a time on the valid recorded run, so that no other finding carries the test."""
    base = load("complete")
    served = copy.deepcopy(base)
    served["figures"]["validity"]["device_reads"] = 0.2 * served["figures"]["validity"]["db_reads"]  # page_cache
    rows = copy.deepcopy(base)
    rows["figures"]["validity"]["blocks_read_per_row"] = 0.1  # rows_from_cache
    small = copy.deepcopy(base)
    small["figures"]["validity"]["data_bytes"] = small["figures"]["validity"]["cache_bytes"]  # small_data_set
    for doc, code in ((served, "page_cache"), (rows, "rows_from_cache"), (small, "small_data_set")):
        assert [f.code for f in verdict.invalid(of(doc))] == [code]
        assert_not_a_storage_result(doc, "8,569")


def test_one_node_served_by_its_cache_makes_the_run_s_headline_say_so():
    """A run over two servers: the total's figures hold the node whose reads its buffer cache served."""
    doc = results.read(FIXTURES / "result_format2.json")
    other = copy.deepcopy(doc["nodes"][0])
    other["name"] = "node2"
    other["figures"]["validity"]["blocks_read_per_row"] = 0.1
    doc["nodes"].append(other)
    assert [f.code for f in verdict.invalid(of(doc))] == ["node_rows_from_cache"]
    shown, model = headline_lines(doc)
    assert shown["text"].startswith("Headline: not a storage result (INVALID)") and model["headline"] == []


def test_compare_marks_an_invalid_result_where_it_quotes_its_figures():
    valid, cached = load("complete"), load("pg15")
    model = compare_model.build([("disk", of(valid)), ("cached", of(cached))])
    assert model["headline_text"].startswith("cached vs disk: reads/s ")
    assert model["headline_text"].endswith("(cached INVALID: not a storage result)")
    table = next(s for s in model["sections"] if s["id"] == "figures")["tables"][0]
    assert table["columns"][1:3] == ["disk", "cached (INVALID)"]
    assert any("cached INVALID: not a storage result" in note for note in table["notes"])
    both = compare_model.build([("a", of(cached)), ("b", of(copy.deepcopy(cached)))])["headline_text"]
    assert both.endswith("(b, a INVALID: not storage results)")
    plain = compare_model.build([("a", of(valid)), ("b", of(copy.deepcopy(valid)))])
    assert "INVALID" not in plain["headline_text"] and "INVALID" not in json.dumps(plain["sections"])


@pytest.fixture()
def sweep():
    directory = FIXTURES / "sweep_capacity"
    doc = document.read(directory)
    return doc, load_steps(directory, typed_sweep(doc))


def _cached(step_doc):
    step_doc = copy.deepcopy(step_doc)
    step_doc["figures"]["validity"]["blocks_read_per_row"] = 0.1  # rows_from_cache: the buffer cache served them
    return step_doc


def test_a_sweep_s_best_step_is_a_storage_result_and_its_invalid_steps_are_marked(sweep):
    doc, steps = sweep
    headline = sweep_model.build(typed_sweep(doc), steps)["headline_text"]
    assert headline == "best 37,766 reads/s (the device did 140.1% of the " \
        "engine's reads: other work shared the device; host CPU 99% busy) at 8 sessions (04-t8)"
    steps["04-t8"] = _cached(steps["04-t8"])  # the step with the most reads/s
    model = sweep_model.build(typed_sweep(doc), steps)
    # 03-t4's reads/s with its caveats (issue 26, item 11), as its own headline gives them
    assert model["headline_text"] == "best 31,302 reads/s (the device did 102.9% of the engine's reads: other work " \
                                     "shared the device; host CPU 99% busy) at 4 sessions (03-t4), leaving out 04-t8 " \
                                     "INVALID: not a storage result"
    assert model["headline"][0]["value"] == pytest.approx(31302, abs=1)
    table = next(s for s in model["sections"] if s["id"] == "summary")["tables"][0]
    assert [row[-1] for row in table["rows"]] == ["complete"] * 3 + ["complete (INVALID)"]
    assert any(note.startswith("(INVALID): not a storage result") for note in table["notes"])
    for step in steps:
        steps[step] = _cached(steps[step])
    model = sweep_model.build(typed_sweep(doc), steps)
    assert model["headline_text"] == "no step is a storage result (01-t1, 02-t2, 03-t4, 04-t8 INVALID: " \
                                     "not storage results)"
    assert model["headline"] == []


def test_compared_sweeps_mark_the_steps_that_are_no_storage_result(sweep):
    doc, steps = sweep
    cached = {**steps, "02-t2": _cached(steps["02-t2"])}
    model = compare_model.build_sweeps([("disk", typed_sweep(doc), steps), ("cached", typed_sweep(doc), cached)])
    labels = [row[0] for row in model["sections"][0]["tables"][0]["rows"]]
    assert labels == ["threads_per_schema=1", "threads_per_schema=2 (cached INVALID: not a storage result)",
                      "threads_per_schema=4", "threads_per_schema=8"]


def test_a_sweep_s_knees_and_capacity_are_read_off_storage_results_only_and_its_charts_mark_the_rest(sweep):
    from dbio.report import charts

    doc, steps = sweep
    doc = {**doc, "capacity": {"target_iops": 35_000}}
    plain = sweep_model.build(typed_sweep(doc), steps)
    capacity = next(s for s in plain["sections"] if s["id"] == "capacity")["lines"]
    assert any("37,766" in line or "04-t8" in line or "8 sessions" in line for line in capacity), capacity
    steps = {**steps, "04-t8": _cached(steps["04-t8"])}  # the step with the most reads/s, served by a cache
    model = sweep_model.build(typed_sweep(doc), steps)
    points = model["curves"]["lines"][0]["points"]
    assert [p["invalid"] for p in points] == [False, False, False, True]
    assert all(line.startswith("leaving out 04-t8 INVALID: not a storage result: ") for line in model["knees"])
    capacity = next(s for s in model["sections"] if s["id"] == "capacity")["lines"]
    assert capacity != next(s for s in plain["sections"] if s["id"] == "capacity")["lines"]
    assert not any("04-t8" in line for line in capacity), capacity
    for draw in (charts.sweep_iops, charts.sweep_latency, charts.sweep_latency_vs_iops):
        assert "not a storage result (INVALID)" in draw(model["curves"])
        assert "not a storage result (INVALID)" not in draw(plain["curves"])


def test_compared_sweeps_say_which_did_not_finish_and_mark_its_partial_steps(sweep):
    # an interrupted sweep was compared step by step as if whole: no warning, its cut-short step unmarked
    doc, steps = sweep
    cut = copy.deepcopy(doc)
    cut["status"] = "interrupted"
    cut["steps"][1]["status"] = "interrupted"
    for step in cut["steps"][2:]:
        step["status"] = "pending"
    model = compare_model.build_sweeps([("whole", typed_sweep(doc), steps), ("cut", typed_sweep(cut), steps)])
    assert [f["message"] for f in model["findings"]] == [
        "cut: sweep INTERRUPTED: 1 of 4 steps complete; a step marked in the table covers only the part that ran"]
    labels = [row[0] for row in model["sections"][0]["tables"][0]["rows"]]
    assert labels == ["threads_per_schema=1", "threads_per_schema=2 (interrupted in cut)",
                      "threads_per_schema=4", "threads_per_schema=8"]
    assert report.render_model(model, "text").splitlines()[2].startswith("WARNING: cut: sweep INTERRUPTED")
    sweep = typed_sweep(doc)
    assert compare_model.build_sweeps([("whole", sweep, steps), ("again", sweep, steps)])["findings"] == []


def test_a_sweep_s_best_step_is_one_that_finished(sweep):
    # an interrupted sweep quoted its cut-short step as its best ("interrupted: best 10,512 reads/s at
    # 1 sessions (01-t1)") though its curves, knee and capacity leave such a step out
    doc, steps = sweep
    cut = copy.deepcopy(doc)
    cut["status"] = "interrupted"
    cut["steps"][3]["status"] = "interrupted"  # 04-t8, the step with the most reads/s
    headline = sweep_model.build(typed_sweep(cut), steps)["headline_text"]
    assert headline == "best 31,302 reads/s (the device did 102.9% of the " \
        "engine's reads: other work shared the device; host CPU 99% busy) at 4 sessions (03-t4)"
    for step in cut["steps"][1:]:
        step["status"] = "pending"
    assert sweep_model.build(typed_sweep(cut), steps)["headline_text"].endswith("at 1 session (01-t1)")
    cut["steps"][0]["status"] = "interrupted"
    assert sweep_model.build(typed_sweep(cut), steps)["headline_text"] == "no step completed"


def test_a_sweep_says_each_kind_of_finding_once_with_the_steps_it_applies_to(sweep):
    """A sweep's page opened with sixteen warning boxes before any chart: the same warning for each step."""
    doc, steps = sweep
    for name in ("02-t2", "04-t8"):
        steps[name] = _cached(steps[name])
    findings = sweep_model.build(typed_sweep(doc), steps)["findings"]
    cache = [f for f in findings if f["code"] == "rows_from_cache"]
    assert len(cache) == 1 and cache[0]["message"].startswith("steps 02-t2, 04-t8: only 10% of the rows")
    assert cache[0]["message"].endswith("(as 02-t2 said it; the others alike)") and findings[0] == cache[0]
    codes = [(f["level"], f["code"]) for f in findings]
    assert len(codes) == len(set(codes))
