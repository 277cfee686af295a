"""Reports people look at: the verdict and what could not be measured come first in every format;
Markdown is plain Markdown (no HTML entities for indentation)."""

import json
from pathlib import Path

import pytest

from dbio import report
from dbio import result as results
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
SCENARIOS = ("complete", "interrupted", "cached", "pg15", "format2")


def load(name):
    return results.read(FIXTURES / f"result_{name}.json")


@pytest.mark.parametrize("form", ["text", "md", "html"])
def test_what_was_not_measured_comes_before_the_figures(form):
    """PostgreSQL 15 has no pg_stat_io: the reader learns it before reading a figure."""
    out = report.render(of(load("pg15")), form)
    first = min(out.index(w) for w in ("NOT MEASURED", "not measured") if w in out)
    assert first < out.index("Headline" if form != "html" else 'id="headline"')
    assert first < out.index("Load Profile")
    assert out.index("PostgreSQL 15.20 has no pg_stat_io") < out.index("Load Profile")  # and why


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_verdict_is_the_first_section(scenario):
    model = json.loads(report.render(of(load(scenario)), "json"))
    assert [s["id"] for s in model["sections"]][0] == "verdict"
    keys = list(model)
    assert keys.index("findings") < keys.index("headline") and keys.index("not_measured") < keys.index("headline")
    for form, heading in (("text", "\nVerdict and warnings\n"), ("md", "## Verdict and warnings")):
        out = report.render(of(load(scenario)), form)
        assert out.index(heading) < out.index("Run\n"), (scenario, form)


def test_the_json_report_lists_what_was_not_measured_and_why():
    model = json.loads(report.render(of(load("pg15")), "json"))
    assert {"figure": "I/O by backend type (pg_stat_io)",
            "why": "PostgreSQL 15.20 has no pg_stat_io (16+)"} in model["not_measured"]
    assert json.loads(report.render(of(load("format2")), "json"))["not_measured"] == []


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_markdown_has_no_html_entities_for_indentation(scenario):
    md = report.render(of(load(scenario)), "md")
    assert "&nbsp;" not in md
    assert "| ↳ SELECT (range) |" in md  # a statement kind under Statements still reads as nested
