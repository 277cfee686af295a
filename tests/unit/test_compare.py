import copy
import json
from pathlib import Path

import pytest

from dbio import report
from dbio.report import compare_model
from dbio.stats import catalogue, compare
from dbio import result as results
from dbio.result_records import of
from tests.result_builder import a_document, a_result

FIXTURES = Path(__file__).parent.parent / "fixtures"


def load(name):
    return results.completed(json.loads((FIXTURES / f"result_{name}.json").read_text()))


def test_delta():
    d = compare.Delta(200.0, 150.0)
    assert d.absolute == -50.0 and d.pct == -25.0
    assert compare.Delta(0.0, 5.0).pct is None and compare.Delta(None, 5.0).absolute is None
    assert compare.Delta(-10.0, -5.0).pct == 50.0


def test_judge_real_noise_unstable_and_too_few():
    wobble = [10, -10, 5, -5, 0, 7, -7, 3, -3, 0] * 3
    steady_a = compare.sample([1000 + w for w in wobble])
    steady_b = compare.sample([1200 + w for w in wobble])
    assert compare.judge(steady_a, steady_b) == "real"
    close = compare.sample([1001 + w for w in reversed(wobble)])
    assert compare.judge(steady_a, close) == "noise"
    wild = compare.sample([1000 + 40 * w for w in wobble])
    assert compare.judge(steady_a, wild) == "unstable"
    assert compare.judge(compare.sample([1, 2, 3, 4, 5, 6]), steady_b) == "too few samples"
    assert compare.judge(None, steady_b) == "too few samples"
    assert compare.sample([]) is None


def test_differences_list_only_what_differs():
    rows = compare.differences([("a", {"x": 1, "y": {"z": 2, "w": 3}}), ("b", {"x": 1, "y": {"z": 5, "w": 3}})])
    assert rows == [("y.z", [2, 5])]


def test_compare_model_puts_differences_first_and_judges_noise():
    a, b = load("complete"), copy.deepcopy(load("complete"))
    b["config"]["instance"]["shared_buffers"] = 1 << 30
    for row in b["series"]:
        if row.get("reads_per_s") is not None:
            row["reads_per_s"] *= 0.5
    b["figures"]["load_profile"]["physical_reads_per_s"] *= 0.5
    model = compare_model.build([("a", of(a)), ("b", of(b))])
    assert [s["id"] for s in model["sections"]][:2] == ["differences", "figures"]
    diff = model["sections"][0]["tables"][0]["rows"]
    assert ["instance.shared_buffers", str(16 << 20), str(1 << 30)] in diff
    figures = model["sections"][1]["tables"][0]["rows"]
    reads = next(r for r in figures if r[0] == "Physical reads/s")
    assert reads[4] == pytest.approx(-50.0)
    assert reads[5] == "too few samples"  # 5 intervals: not enough to tell noise from a difference
    assert "b vs a: reads/s -50.0%" in model["headline_text"]


def test_the_wait_for_a_cpu_is_compared_beside_the_latency_when_every_result_measured_it():
    labels = [r[0] for r in compare_model.build([("a", a_result()), ("b", a_result())])["sections"][1]["tables"][0]
              ["rows"]]
    assert "Wait for a CPU per read (sessions)" not in labels  # recorded before it was measured
    a, b = a_result(figures__cpu__cpu_wait_us_per_read=20.0), a_result(figures__cpu__cpu_wait_us_per_read=50.0)
    rows = compare_model.build([("a", a), ("b", b)])["sections"][1]["tables"][0]["rows"]
    labels = [r[0] for r in rows]
    at = labels.index("Wait for a CPU per read (sessions)")
    assert labels[at - 1] == catalogue.figure("avg_read_us").label
    assert rows[at][4] == pytest.approx(150.0)  # +150%
    assert "I/O workers' wait for a CPU per read" not in labels  # io_method sync: no workers, no figure
    a = a_result(figures__cpu__cpu_wait_us_per_read=20.0, figures__cpu__io_worker_cpu_wait_us_per_read=10)
    b = a_result(figures__cpu__cpu_wait_us_per_read=50.0, figures__cpu__io_worker_cpu_wait_us_per_read=5)
    rows = compare_model.build([("a", a), ("b", b)])["sections"][1]["tables"][0]["rows"]
    assert [r[4] for r in rows if r[0] == "I/O workers' wait for a CPU per read"] == [pytest.approx(-50.0)]


def test_compare_renders_in_every_format():
    model = compare_model.build([("complete", of(load("complete"))), ("interrupted", of(load("interrupted")))])
    text = report.render_model(model, "text")
    assert text.startswith("dbio compare: complete vs interrupted") and "What differs" in text
    assert "interrupted: run INTERRUPTED" in text  # each run's own warnings travel with it
    html = report.render_model(model, "html")
    assert html.count("<svg") == 3
    assert json.loads(report.render_model(model, "json"))["kind"] == "compare"


def test_the_compare_page_names_the_command_that_makes_it_again():
    # the footer said "Re-render with: dbio report RESULT --format html", which renders one run, not the comparison
    model = compare_model.build([("complete", of(load("complete"))), ("format2", of(load("format2")))])
    footer = report.render_model(model, "html").split("<footer>")[1]
    assert "dbio compare RESULT RESULT... --format html" in footer and "dbio report" not in footer
    assert "dbio report RESULT --format html" in report.render(of(load("complete")), "html").split("<footer>")[1]


def test_noise_allows_for_runs_that_drift():
    import math

    # two runs of the same platform: slow waves (checkpoints) make neighbouring seconds alike
    base = [10_000 + 600 * math.sin(i / 15) for i in range(300)]
    other = [v * 1.01 for v in base[37:]] + [v * 1.01 for v in base[:37]]  # 1% apart, out of phase
    assert compare.judge(compare.sample(base), compare.sample(other)) == "noise"
    clear = [v * 1.25 for v in base]
    assert compare.judge(compare.sample(base), compare.sample(clear)) == "real"


def test_a_format_1_result_compares_with_a_format_2_result():
    """The same command recorded by a dbio writing format 1 and by one writing format 2."""
    old, new = results.read(FIXTURES / "result_complete.json"), results.read(FIXTURES / "result_format2.json")
    assert (old["format_version"], new["format_version"]) == (1, 2)
    model = compare_model.build([("format1", of(old)), ("format2", of(new))])
    figures = model["sections"][1]["tables"][0]["rows"]
    reads = next(r for r in figures if r[0] == "Physical reads/s")
    assert [cell["value"] for cell in reads[1:3]] == [old["figures"]["load_profile"]["physical_reads_per_s"],
                                                      new["figures"]["load_profile"]["physical_reads_per_s"]]
    differences = [row[0] for row in model["sections"][0]["tables"][0]["rows"]]
    assert not any(d.startswith(("nodes", "capabilities")) for d in differences)  # the format is no difference
    for form in report.FORMATS:
        report.render_model(model, form)


def test_each_row_uses_one_unit():
    """A latency and its delta read in one unit: "39.2 ms" beside "-1.5 ms", never "-1,513 us"."""
    from dbio.report import fmt

    a = a_result(figures__latency__statements__select__p99_us=39_200.0)
    b = a_result(figures__latency__statements__select__p99_us=37_687.0)
    model = compare_model.build([("a", a), ("b", b)])
    row = next(r for r in model["sections"][1]["tables"][0]["rows"] if r[0] == "SELECT p99")
    shown = [fmt.cell(c, "mixed") for c in row[1:4]]
    assert shown == ["39.2 ms", "37.7 ms", "-1.5 ms"]
    text = report.render_model(model, "text")
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("SELECT p99 "))
    assert " us" not in line and line.count(" ms") == 3


def test_results_whose_host_cpu_was_counted_differently_are_flagged():
    old = a_result()  # recorded before busy time counted what no tick saw
    new = a_result(figures__cpu__host__busy_method="elapsed less idle")

    def flagged(*results):
        model = compare_model.build([(f"r{i}", r) for i, r in enumerate(results)])
        return [f for f in model["findings"] if f["code"] == "cpu_counted_differently"]

    [found] = flagged(old, new)
    assert found["level"] == "warning" and "r0 summed the kernel's ticks" in found["message"]
    assert not flagged(old, a_result())
    assert not flagged(new, a_result(figures__cpu__host__busy_method="elapsed less idle"))


def test_compare_says_what_differed_besides_the_settings():
    """+57% reads/s was called 'real' between two runs of the same settings on a busy host: the runs'
    conditions (steal, other work, the cache's state, device sharing, the storage's own speed) are shown
    and, where they differ, named first."""
    a = a_result()
    b = a_result(figures__cpu__host__steal_pct=a_document()["figures"]["cpu"]["host"]["steal_pct"] + 25.0)
    model = compare_model.build([("a", a), ("b", b)])
    [found] = [f for f in model["findings"] if f["code"] == "conditions_differ"]
    assert "Host CPU steal" in found["message"] and "(a) vs" in found["message"] and "(b)" in found["message"]
    assert "not from the settings" in found["message"]
    section = next(s for s in model["sections"] if s["id"] == "conditions")
    assert section["tables"][0]["rows"][0][0] == "Host CPU steal"
    same = compare_model.build([("a", a), ("c", a_result())])
    assert not [f for f in same["findings"] if f["code"] == "conditions_differ"]
    text = report.render_model(model, "text")
    assert "Conditions besides the settings" in text


def test_two_runs_at_a_committed_rate_compare_the_rate_achieved_and_the_latency_from_the_intended_start():
    labels = [r[0] for r in compare_model.build([("a", a_result()), ("b", a_result())])["sections"][1]["tables"][0]
              ["rows"]]
    assert catalogue.figure("intended_p99_us").label not in labels  # closed loops: no rate to compare

    def at_rate(achieved, p99):
        return a_result(figures__rate={"asked_per_s": 2000.0, "achieved_per_s": achieved, "intended_p50_us": 900.0,
                                       "intended_p99_us": p99, "lag_p99_us": p99 - 2000})
    rows = compare_model.build([("a", at_rate(1990.0, 4000.0)), ("b", at_rate(1500.0, 900_000.0))])["sections"][1][
        "tables"][0]["rows"]
    by_label = {r[0]: r for r in rows}
    assert by_label[catalogue.figure("rate_achieved_per_s").label][4] == pytest.approx(-24.6, abs=0.1)
    assert by_label[catalogue.figure("intended_p99_us").label][4]["value"] == "225 times as much"  # the queue shows
