"""Reports: pure functions of a recorded result (result.json); they never open a connection."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbio.result_records import Result

FORMATS = ("text", "md", "html", "json")


def render(doc: Result, form: str) -> str:
    """The report of one result (a Result as result.read_result gives it)."""
    from dbio.report import model as report_model

    return render_model(report_model.build(doc), form)


def render_model(model: dict[str, Any], form: str) -> str:
    """Any report model (a run's, a sweep's, a comparison's) in one of the formats."""
    if form == "text":
        from dbio.report import text

        return text.render(model)
    if form == "md":
        from dbio.report import markdown

        return markdown.render(model)
    if form == "json":
        return json.dumps(model, indent=1) + "\n"
    if form == "html":
        from dbio.report import html

        return html.render(model)
    raise ValueError(f"unknown report format {form!r}")
