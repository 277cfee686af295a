"""report.txt: the report model as AWR-style plain text (pure)."""

from __future__ import annotations

from typing import Any

from dbio import controls
from dbio.report import fmt
from dbio.report.verdict import summary_line as verdict_line


def render(model: dict[str, Any]) -> str:
    model = controls.visible_tree(model)  # a label's or a server's escape sequence is shown, never sent
    lines = ([verdict_line(model["verdict"])] if model.get("verdict") else []) + [model["title"],
                                                                                  "=" * len(model["title"])]
    for finding in model["findings"]:
        if finding["level"] in ("invalid", "warning"):
            lines.append(f"{finding['level'].upper()}: {finding['message']}")
    if model.get("not_measured"):
        lines.append(f"NOT MEASURED: {fmt.not_measured(model['not_measured'])}")
    lines.append(f"Headline: {model['headline_text']}")
    if model.get("efficiency_text"):
        lines.append(model["efficiency_text"])
    for section in model["sections"]:
        lines += fmt.heading(section["title"])
        if section.get("pairs"):
            width = max(len(k) for k, _ in section["pairs"])
            lines += [f"  {k.ljust(width)}  {v}" for k, v in section["pairs"]]
        for i, tbl in enumerate(section.get("tables", [])):
            if i:
                lines.append("")
            if tbl["title"]:
                lines.append(f"  {tbl['title']}")
            rows = [[fmt.cell(v, k) for v, k in zip(row, tbl["kinds"])] for row in tbl["rows"]]
            lines += fmt.table(tbl["columns"], rows, kinds=tbl["kinds"])
            lines += [f"  ({note})" for note in tbl["notes"] if note]
        lines += [f"  {line}" for line in section.get("lines", [])]
    return "\n".join(lines) + "\n"
