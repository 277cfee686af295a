"""report.html: one self-contained file (inline CSS and SVG, no scripts, no network), printable (pure)."""

from __future__ import annotations

from html import escape
from typing import Any

from dbio import controls
from dbio.report import charts, fmt
from dbio.report.verdict import summary_line as verdict_line

CSS = """
:root { --ink: #1d2733; --muted: #5b6775; --line: #d8dee6; --band: #f4f6f9; --blue: #1f5fa8;
        --bad: #b03a48; --warn: #a86a0c; --info: #1f5fa8; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink);
       max-width: 1120px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line);
     padding-bottom: 4px; } h3 { font-size: 14px; margin: 16px 0 6px; color: var(--muted); }
.sub { color: var(--muted); margin: 0 0 12px; }
.verdict { font-weight: 700; padding: 6px 10px; border-radius: 6px; margin: 0 0 8px; }
.verdict.valid { background: #e3f1e8; color: #1e6b3c; } .verdict.warned { background: #fbf3dc; color: #7a5a00; }
.verdict.invalid { background: #fbe3e0; color: #a3261a; }
.status { display: inline-block; font-weight: 600; padding: 1px 8px; border-radius: 10px; font-size: 12px;
          vertical-align: middle; margin-left: 8px; }
.status.complete { background: #eef0f2; color: #3d4650; } .status.interrupted, .status.failed { background: #fbe9d0;
          color: var(--warn); }
.findings { list-style: none; padding: 0; margin: 12px 0; }
.findings li { padding: 6px 10px; margin: 4px 0; border-left: 4px solid var(--info); background: var(--band); }
.findings li.invalid { border-color: var(--bad); background: #fbecee; }
.findings li.warning { border-color: var(--warn); background: #fdf4e5; }
.findings b { text-transform: uppercase; font-size: 11px; letter-spacing: .04em; margin-right: 6px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.card .v { font-size: 22px; font-weight: 600; } .card .l { color: var(--muted); font-size: 12px; }
.card.invalid { border-color: var(--bad); background: #fbecee; } .card.invalid .v { color: var(--bad); }
.card.caveat { border-color: var(--warn); } .card .c { color: var(--warn); font-size: 12px; margin-top: 4px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 12px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
svg.chart { width: 100%; height: auto; display: block; }
table { border-collapse: collapse; margin: 6px 0 4px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: var(--band); font-weight: 600; }
td.t, th.t { text-align: left; white-space: pre; } tr:nth-child(even) td { background: #fafbfc; }
.pairs td { white-space: normal; text-align: left; vertical-align: top; } .pairs td:first-child { color: var(--muted);
        width: 110px; }
.note { color: var(--muted); font-size: 12px; margin: 2px 0 10px; }
.wrap { overflow-x: auto; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
@media print { body { max-width: none; padding: 0; font-size: 11px; } .charts { grid-template-columns: 1fr 1fr; }
  figure, table, .card { break-inside: avoid; } h2 { break-after: avoid; } }
"""

def render(model: dict[str, Any]) -> str:
    model = controls.visible_tree(model)  # escaped below; control characters shown too (a reader's cat, a bidi swap)
    run = model["run"]
    status = run.get("status") or "unknown"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(model['title'])}</title><style>{CSS}</style></head><body>",
        _verdict(model),
        f"<header><h1>{escape(model['title'])}<span class=\"status {escape(status)}\">{escape(status.upper())}</span>"
        "</h1>",
        f"<p class=\"sub\">{escape(model['headline_text'])}</p>{_efficiency(model)}</header>",
    ]
    parts.append(_findings(model["findings"]))
    parts.append(_cards(model["headline"], invalid=any(f["level"] == "invalid" for f in model["findings"])))
    parts.append(_charts(model))
    for section in model["sections"]:
        parts.append(_section(section))
    parts.append(f"<footer>{escape(footer(model))}</footer></body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def footer(model: dict[str, Any]) -> str:
    """Where the page came from and the command that makes it again: a comparison's is dbio compare's."""
    run = model["run"]
    version = f"(dbio {run.get('dbio_version')})"
    if model.get("format") == "dbio-compare":
        runs = f" of runs {run['run_id']}" if run.get("run_id") else ""
        return (f"Compared by dbio from the results{runs} {version}. "
                "Re-render with: dbio compare RESULT RESULT... --format html")
    if model.get("kind") == "sweep":
        return (f"Rendered by dbio from sweep.json of the sweep started {run.get('run_id')} {version}. "
                "Re-render with: dbio report SWEEP_DIRECTORY --format html")
    return f"Rendered by dbio from result.json of run {run.get('run_id')} {version}. " \
           "Re-render with: dbio report RESULT --format html"


def _verdict(model: dict[str, Any]) -> str:
    """The page's first line: the verdict, in green only when the result is valid and nothing warns."""
    found = model.get("verdict")
    if not found:
        return ""
    warned = any(f["level"] == "warning" for f in model["findings"])
    kind = "invalid" if not found.get("valid") else "warned" if warned else "valid"
    tail = f" (read the {sum(f['level'] == 'warning' for f in model['findings'])} warning(s) below)" \
        if kind == "warned" else ""
    return f"<p class=\"verdict {kind}\" id=\"verdict\">{escape(verdict_line(found))}{escape(tail)}</p>"


def _efficiency(model: dict[str, Any]) -> str:
    text = model.get("efficiency_text")
    return f"<p class=\"sub\">{escape(text)}</p>" if text else ""


def _findings(findings: list[dict[str, Any]]) -> str:
    if not findings:
        return '<ul class="findings"><li class="info"><b>ok</b>nothing found that would stop these figures from ' \
               'measuring storage</li></ul>'
    items = "".join(f'<li class="{escape(f["level"])}"><b>{escape(f["level"])}</b>{escape(f["message"])}</li>'
                    for f in findings)
    return f'<ul class="findings" id="findings">{items}</ul>'


def _cards(headline: list[dict[str, Any]], *, invalid: bool = False) -> str:
    if invalid and not headline:  # in place of the figures' cards, which would read as the storage's
        return ('<section class="cards" id="headline"><div class="card invalid"><div class="v">not a storage result'
                '</div><div class="l">INVALID: the verdict above says why; the tables below hold what the engine '
                'counted</div></div></section>')
    cards = "".join(f'<div class="card{" caveat" if h.get("caveat") else ""}"><div class="v">'
                    f'{escape(fmt.cell(h["value"], h["kind"]))}</div><div class="l">{escape(h["label"])}</div>'
                    + (f'<div class="c">{escape(h["caveat"])}</div>' if h.get("caveat") else "") + '</div>'
                    for h in headline)  # absent: "-"; a caveat the headline line gives it, in the card too
    return f'<section class="cards" id="headline">{cards}</section>' if cards else ""


def _charts(model: dict[str, Any]) -> str:
    figures = []
    for name, source in model.get("charts") or []:
        svg = getattr(charts, name)(model.get(source))
        if svg:
            figures.append(f'<figure id="chart-{name}">{svg}</figure>')
    return f'<section class="charts" id="charts">{"".join(figures)}</section>' if figures else ""


def _section(section: dict[str, Any]) -> str:
    out = [f'<section id="{escape(section["id"])}"><h2>{escape(section["title"])}</h2>']
    if section.get("pairs"):
        rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in section["pairs"])
        out.append(f'<table class="pairs">{rows}</table>')
    for tbl in section.get("tables", []):
        if tbl["title"]:
            out.append(f"<h3>{escape(tbl['title'])}</h3>")
        head = "".join(f'<th class="{"t" if k == "text" else "n"}">{escape(c)}</th>'
                       for c, k in zip(tbl["columns"], tbl["kinds"]))
        body = "".join("<tr>" + "".join(f'<td class="{"t" if k == "text" else "n"}">{escape(fmt.cell(v, k))}</td>'
                                        for v, k in zip(row, tbl["kinds"])) + "</tr>" for row in tbl["rows"])
        out.append(f'<div class="wrap"><table id="{escape(tbl["id"])}"><thead><tr>{head}</tr></thead>'
                   f"<tbody>{body}</tbody></table></div>")
        out += [f'<p class="note">{escape(note)}</p>' for note in tbl["notes"] if note]
    if section.get("lines"):
        out.append("<ul>" + "".join(f"<li>{escape(line)}</li>" for line in section["lines"]) + "</ul>")
    out.append("</section>")
    return "".join(out)
