"""The report model as Markdown, for pasting into papers, tickets and pull requests (pure)."""

from __future__ import annotations

import html
from typing import Any

from dbio import controls
from dbio.report import fmt
from dbio.report.verdict import summary_line as verdict_line


def render(model: dict[str, Any]) -> str:
    model = controls.visible_tree(model)  # a label's or a server's escape sequence is shown, never sent
    lines = ([f"**{_escape(verdict_line(model['verdict']))}**", ""] if model.get("verdict") else []) \
        + [f"# {_escape(model['title'])}", ""]
    serious = [f for f in model["findings"] if f["level"] in ("invalid", "warning")]
    for finding in serious:
        lines += [f"> **{finding['level'].upper()}**: {_escape(finding['message'])}", ">"]
    if model.get("not_measured"):
        lines += [f"> **NOT MEASURED**: {_escape(fmt.not_measured(model['not_measured']))}", ">"]
    if serious or model.get("not_measured"):
        lines[-1] = ""
    lines += [f"**Headline:** {_escape(model['headline_text'])}", ""]
    if model.get("efficiency_text"):
        lines += [f"**{_escape(model['efficiency_text'])}**", ""]
    for section in model["sections"]:
        lines += [f"## {_escape(section['title'])}", ""]
        if section.get("pairs"):
            lines += ["| | |", "|---|---|"] + [f"| {_escape(k)} | {_escape(v)} |" for k, v in section["pairs"]] + [""]
        for tbl in section.get("tables", []):
            if tbl["title"]:
                lines += [f"**{_escape(tbl['title'])}**", ""]
            aligns = ["---" if k == "text" else "---:" for k in tbl["kinds"]]
            lines.append("| " + " | ".join(_escape(c) if c else " " for c in tbl["columns"]) + " |")
            lines.append("|" + "|".join(aligns) + "|")
            for row in tbl["rows"]:
                cells = [_escape(fmt.cell(v, k)) for v, k in zip(row, tbl["kinds"])]
                lines.append("| " + " | ".join(_indented(c) for c in cells) + " |")
            lines += [""] + [f"_{_escape(note)}_" for note in tbl["notes"] if note] + [""]
        if section.get("lines"):
            lines += [f"- {_escape(line)}" for line in section["lines"]] + [""]
    return "\n".join(lines).rstrip() + "\n"


def _indented(cell: str) -> str:
    """A row under another (a statement kind under Statements): Markdown drops leading spaces, so
    an arrow shows the nesting, one per level, in plain text without HTML entities."""
    label = cell.lstrip(" ")
    depth = (len(cell) - len(label) + 1) // 2
    return "↳ " * depth + label


def _escape(text: Any) -> str:
    """Text from a result (a label, a setting, a message) stays text: no HTML gets through, and
    neither a | nor a line break can split a table."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\r", " ").replace("\n", " ")
