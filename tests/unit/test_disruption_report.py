"""The report of a run with --event's (report/disruption_section.py): the Disruptions section right after the
verdict, the verdict's warning of an event not recovered from, the events' bands on the per-interval chart, and
dbio compare's events side by side. On a recorded result given the recorded stall's figures."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from dbio import report
from dbio import result as results
from dbio.report import charts, compare_model, verdict
from dbio.report import model as report_model
from dbio.stats import disruptions as d
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
STALL = json.loads((FIXTURES / "disruption_stall.json").read_text())


def _with_events(**changed) -> dict:
    """A recorded result holding the recorded stall's event and figures (changed: figures of its record)."""
    doc = copy.deepcopy(results.read(FIXTURES / "result_format2.json"))
    doc["disruptions"] = copy.deepcopy(STALL["events"])
    [found] = d.disruptions(STALL["events"], STALL["series"], STALL["window_offset"], STALL["window_seconds"])
    doc["figures"]["disruptions"] = [{**found, **changed}]
    return doc


def test_the_disruptions_section_comes_right_after_the_verdict():
    doc = _with_events()
    model = report_model.build(of(doc))
    ids = [s["id"] for s in model["sections"]]
    assert ids[:2] == ["verdict", "disruptions"]
    [reads] = model["sections"][1]["tables"]
    [row] = reads["rows"]
    found = doc["figures"]["disruptions"][0]
    assert row[0] == "10s=stall:3s" and row[3] == found["before_reads_per_s"] and row[5] == found["floor_reads_per_s"]
    assert row[7] == found["seconds_below_90pct"] and row[8] == found["recovery_seconds"]
    assert row[9] == found["reads_lost"]
    text = report.render(of(doc), "text")
    assert "Disruptions" in text and "10s=stall:3s" in text
    assert text.index("Disruptions") < text.index("Load Profile")


def test_a_run_without_events_has_no_such_section():
    model = report_model.build(of(results.read(FIXTURES / "result_format2.json")))
    assert "disruptions" not in [s["id"] for s in model["sections"]] and "bands" not in model["series"]


def test_the_verdict_names_an_event_not_recovered_from():
    assert "not_recovered" not in [f.code for f in verdict.findings(of(_with_events()))]
    late = _with_events(recovery_seconds=None, not_recovered=d.NOT_RECOVERED)
    [finding] = [f for f in verdict.findings(of(late)) if f.code == "not_recovered"]
    assert finding.level == "warning" and "10s=stall:3s" in finding.message
    assert d.NOT_RECOVERED in report.render(of(late), "text")


def test_the_chart_shades_each_event():
    plain = report_model.build(of(results.read(FIXTURES / "result_format2.json")))
    model = report_model.build(of(_with_events()))
    event = STALL["events"][0]
    assert model["series"]["bands"] == [[event["start_s"], event["end_s"], "10s=stall:3s"]]
    shaded = [len(fig.axes[0].patches) for fig in (charts.iops_figure(plain["series"]),
                                                   charts.iops_figure(model["series"]))]
    assert shaded[1] == shaded[0] + 1  # the measured window's shade, and the event's


def test_compare_shows_the_events_side_by_side():
    other = _with_events(floor_reads_per_s=1000.0, recovery_seconds=None, not_recovered=d.NOT_RECOVERED)
    model = compare_model.build([("array-a", of(_with_events())), ("array-b", of(other))])
    [section] = [s for s in model["sections"] if s["id"] == "disruptions"]
    [table] = section["tables"]
    assert table["columns"] == ["", "array-a", "array-b"]
    rows = {row[0]: row[1:] for row in table["rows"]}
    assert rows["Event"] == ["10s=stall:3s", "10s=stall:3s"]
    assert rows["Floor"][1]["value"] == 1000.0
    assert rows["Recovered"] == ["yes", "no"]


def test_compare_shows_the_fine_figures_of_a_short_event_beside_the_intervals():
    fine = {"source": "bytes read", "step_seconds": 0.25, "floor_pct": 0.0, "seconds_below_90pct": 1.1,
            "recovery_seconds": 0.3, "resolution_seconds": 0.26}
    plain = compare_model.build([("array-a", of(_with_events())), ("array-b", of(_with_events()))])
    [table] = next(s for s in plain["sections"] if s["id"] == "disruptions")["tables"]
    assert "Fine floor %" not in {row[0] for row in table["rows"]}  # neither side has fine samples
    model = compare_model.build([("array-a", of(_with_events(fine=fine))), ("array-b", of(_with_events()))])
    [table] = next(s for s in model["sections"] if s["id"] == "disruptions")["tables"]
    rows = {row[0]: row[1:] for row in table["rows"]}
    assert [c["value"] for c in rows["Fine floor %"]] == [0.0, None]  # the other side: absent, never 0
    assert [c["value"] for c in rows["Fine below 90%"]] == [1.1, None]
    assert rows["Fine resolution"][0]["value"] == 0.26
    text = report.render_model(model, "text")
    assert "Fine below 90%" in text and "Fine resolution" in text
