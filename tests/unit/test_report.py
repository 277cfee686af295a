"""Reports from recorded results: golden outputs, HTML structure, the report model's arithmetic."""

import functools
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dbio import report
from dbio.report import model as report_model
from dbio import result as results
from dbio.result_records import of
from dbio.sweep_records import of as typed_sweep

FIXTURES = Path(__file__).parent.parent / "fixtures"
GOLDEN = Path(__file__).parent.parent / "golden"
SCENARIOS = ("complete", "interrupted", "cached", "pg15", "format2")  # format2: result format 2, the rest 1
EXTENSIONS = {"text": "txt", "md": "md", "json": "json"}


def load(name):
    """A recorded result as `dbio report` reads it (checked, completed, format 1 shown as format 2)."""
    return results.read(FIXTURES / f"result_{name}.json")


@functools.cache
def html_of(name):
    """A recorded result's HTML report, rendered once for the tests that only read it (its charts take
    about a second each time)."""
    return report.render(of(load(name)), "html")


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("form", sorted(EXTENSIONS))
def test_golden(request, scenario, form):
    out = report.render(of(load(scenario)), form)
    golden = GOLDEN / f"{scenario}.{EXTENSIONS[form]}"
    if request.config.getoption("--update-golden"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(out)
    assert out == golden.read_text(), f"{golden} differs: review, then re-record with --update-golden"


class _Structure(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tags, self.external = set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            if value and not value.startswith("#"):
                self.external.append(f"{tag} {name}={value}")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_html_is_one_self_contained_file(scenario):
    html = html_of(scenario)
    parsed = _Structure()
    parsed.feed(html)
    assert parsed.external == []  # nothing to fetch: no images, styles, fonts or scripts from elsewhere
    assert "script" not in parsed.tags and "link" not in parsed.tags
    assert all(target.startswith("#") for target in re.findall(r"url\(([^)]*)\)", html))  # in-file references only
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert {"headline", "charts", "run", "load_profile", "io_profile", "latency", "cpu", "time_series",
            "verdict"} <= parsed.ids
    assert "@media print" in html


def test_html_keeps_a_sub_row_s_indent():
    """A row under another ("  SELECT (range)" under Statements, "    of which waiting for a CPU" under the read)
    keeps its leading spaces in the browser, as in the text report."""
    html = html_of("complete")
    assert '<td class="t">  SELECT (range)</td>' in html
    assert re.search(r"td\.t, th\.t \{[^}]*white-space: pre;", html)


def test_html_charts_and_verdict_order():
    html = html_of("complete")
    charts = re.findall(r'<figure id="chart-([a-z_]+)">\s*<svg', html)
    assert charts == ["series_iops", "series_latency", "latency_histogram", "events", "cpu"]
    # headline figures come first, then charts, then the tables
    assert html.index('id="headline"') < html.index('id="charts"') < html.index('id="load_profile"')
    bad = html_of("pg15")
    assert '<li class="invalid"><b>invalid</b>only 0.0% of the engine' in bad
    assert bad.index('class="findings"') < bad.index('id="headline"')


def test_text_and_html_carry_the_same_figures():
    text, html = report.render(of(load("complete")), "text"), html_of("complete")
    for figure in ("8,569", "133 us", "2,390 us", "12,616", "57,877", "54 us"):
        assert figure in text and figure in html


def test_the_sessions_wait_for_a_cpu_shows_beside_the_read_latency_only_when_measured():
    doc = load("complete")
    assert "waiting for a CPU" not in report.render(of(doc), "text")  # recorded before it was read
    doc["figures"]["cpu"].update(cpu_wait_us_per_read=40.2, cpu_wait_pct=23.5)
    text = report.render(of(doc), "text")
    assert re.search(r"\n  Physical read \(sessions\) +133 us\n    of which waiting for a CPU +40 us\n", text)
    assert re.search(r"\n  Sessions' time waiting for a CPU +23\.5%\n", text)
    # the read took 133 us, the device's own 80 us: a wait of more than the 53 us between is not all in the read
    doc["figures"]["cpu"]["cpu_wait_us_per_read"] = 61.4
    assert "of which waiting for a CPU" not in report.render(of(doc), "text")
    # with I/O workers doing the reads (io_method = worker), their wait is a part of the read's too
    doc["figures"]["cpu"].update(cpu_wait_us_per_read=20.0, io_worker_cpu_wait_seconds=1.5,
                                 io_worker_cpu_wait_us_per_read=25.0)
    text = report.render(of(doc), "text")
    assert re.search(r"\n  Physical read \(sessions\) +133 us\n    of which waiting for a CPU +45 us\n", text)
    assert "It holds the I/O workers' wait (25 us a read)" in text
    assert re.search(r"\n  I/O workers' wait for a CPU, seconds +1\.5\n    per physical read +25 us\n", text)
    doc["figures"]["cpu"]["cpu_wait_us_per_read"] = 61.4  # the sessions' does not fit in the read: the workers' does
    text = report.render(of(doc), "text")
    assert re.search(r"\n  Physical read \(sessions\) +133 us\n    of which waiting for a CPU +25 us\n", text)
    assert "Waiting for a CPU: the I/O workers' time ready to run" in text  # not the sessions', not counted
    assert "Waiting for a CPU: the sessions' time" not in text
    doc["figures"]["validity"]["device_to_db_read_ratio"] = 1.2  # others read from the device: the read's time
    assert "of which waiting for a CPU" not in report.render(of(doc), "text")  # beyond the device's is not known
    doc["figures"]["validity"]["device_to_db_read_ratio"] = 1.0
    doc["figures"]["cpu"].update(cpu_wait_us_per_read=61.4, io_worker_cpu_wait_seconds=None,
                                 io_worker_cpu_wait_us_per_read=None)
    assert "Other work's CPU seconds" not in text  # recorded before the servers' CPU was read
    doc["figures"]["cpu"].update(server_cpu_seconds=9.5, other_cpu_seconds=3.25, other_cpu_pct=21.0)
    text = report.render(of(doc), "text")
    assert re.search(r"\n  Background processes CPU seconds +[0-9.]+\n  Database server CPU seconds \(all its "
                     r"processes\) +9\.5\n  Other work's CPU seconds +3\.2\n    share of the host's busy CPU +21\.0%\n",
                     text)
    events = text.split("Top Events")[1].split("\nCPU\n")[0]
    assert "(The sessions waited for a CPU 23.5% of their time (/proc schedstat)." in events


def test_model_per_statement_and_per_transaction_follow_per_second():
    doc = load("complete")
    m = report_model.build(of(doc))
    table = next(t for s in m["sections"] for t in s.get("tables", []) if t["id"] == "load_profile")
    rows = {r[0].strip(): r for r in table["rows"]}
    lp = doc["figures"]["load_profile"]
    assert rows["Physical read requests"][2] == pytest.approx(lp["physical_reads_per_s"] / lp["statements_per_s"])
    assert rows["Physical read requests"][3] == pytest.approx(lp["physical_reads_per_s"] / lp["commits_per_s"])
    assert rows["UPDATE"][3] == pytest.approx(1.0)  # one UPDATE per transaction


def test_model_of_a_read_only_run_has_no_per_transaction_figures():
    doc = load("cached")
    m = report_model.build(of(doc))
    table = next(t for s in m["sections"] for t in s.get("tables", []) if t["id"] == "load_profile")
    assert all(row[3] is None for row in table["rows"])


def test_time_series_stats_name_the_interval_of_min_and_max_after_warmup():
    doc = load("complete")  # warm-up 2 s, intervals of 1 s; the last interval's readings are 0.5 s apart
    m = report_model.build(of(doc))
    table = next(t for s in m["sections"] for t in s.get("tables", []) if t["id"] == "series_stats")
    reads = next(r for r in table["rows"] if r[0] == "Physical reads/s")
    whole = [r for r in doc["series"] if r["phase"] == "measured"][:-1]
    low = min(whole, key=lambda r: r["reads_per_s"])
    assert reads[4]["value"] == low["reads_per_s"]
    assert reads[5] == f"{low['k'] - 3}-{low['k'] - 2} s"  # k counts seconds from the common start
    assert reads[-1] == len(whole)
    assert "Left out, here and in the charts: 4-5 s" in table["notes"][0]


def test_series_points_carry_interval_labels_and_the_partial_mark():
    points = report_model.build(of(load("complete")))["series"]
    assert points["from_s"] == [-2, -1, 0, 1, 2, 3, 4]
    assert points["to_s"] == [-1, 0, 1, 2, 3, 4, 5]
    assert points["partial"] == [False] * 6 + [True]


def test_json_report_is_the_model():
    data = json.loads(report.render(of(load("interrupted")), "json"))
    assert data["format"] == "dbio-report" and data["run"]["status"] == "interrupted"
    assert any(f["code"] == "status" for f in data["findings"])


def test_unknown_format_is_refused():
    with pytest.raises(ValueError):
        report.render(of(load("complete")), "pdf")


def test_sweep_curves_order_values_with_units_by_size():
    from dbio import sweep_records
    from dbio.report import sweep_model

    doc = {"vary": [["scale", ["100000", "1GiB", "4096"]]], "steps": [], "until_peak": False}
    step_docs = {}
    for i, (raw, blocks) in enumerate((("100000", 100000), ("1GiB", 131072), ("4096", 4096))):
        name = f"0{i + 1}-scale{raw}"
        doc["steps"].append({"name": name, "status": "complete", "values": {"scale": raw}})
        step_docs[name] = {"config": {"workload": {"scale": blocks, "sessions": 1}, "instance": {}},
                           "figures": {"window_seconds": 5, "load_profile": {"physical_reads_per_s": 1000.0 + i},
                                       "latency": {"avg_read_us": 100.0}}}
    rows = [sweep_model.step_row(s, of(step_docs[s.name])) for s in sweep_records.of(doc).steps]
    (curve,) = sweep_model.curves(typed_sweep(doc), rows)
    assert [p["x"] for p in curve["points"]] == [4096, 100000, 131072]  # by size, not as text


def test_a_statement_kind_without_buckets_has_no_histogram_to_draw():
    """A document this dbio built (typed as it is, unchecked) whose statement kind has no buckets: the
    model leaves the kind out of its histograms, and the HTML report draws the others."""
    doc = load("complete")
    doc["figures"]["latency"]["statements"]["select"]["awr_buckets"] = None
    model = report_model.build(of(doc))
    assert "select" not in model["histograms"] and "update" in model["histograms"]
    assert "<svg" in report.render_model(model, "html")
