"""The report of a sweep, as data (pure): a summary row per step, curves, knees and peaks.

The x axis is sessions when they vary, otherwise the first knob that varies (a layout of several
directories, data_dirs, by how many it names: the 1-to-N devices study); every other combination of
varied knobs is one curve.
"""

from __future__ import annotations

from typing import Any

from dbio.report import capacity_section, verdict, words
from dbio.report.tables import table
from dbio.stats import capacity as capacity_math
from dbio.stats import catalogue, spread
from dbio.stats import knee as knee_math
from dbio.stats.counters import get
from dbio.units import format_bytes, format_duration

FORMAT = "dbio-sweep-report"
# The figures a step's row carries (keyed by catalogue name), and those its summary table shows.
STEP_FIGURES = ("reads_per_s", "writes_per_s", "io_mib_per_s", "avg_read_us", "select_p99_us", "select_mean_us",
                "host_busy_pct", "reads_per_db_cpu_second", "window_seconds", "raw_reads_per_s", "raw_avg_read_us",
                "efficiency_reads", "total_requests_per_s", "cpu_wait_in_read_us")
SUMMARY = catalogue.figures("reads_per_s", "writes_per_s", "io_mib_per_s", "avg_read_us", "select_p99_us",
                            "host_busy_pct", "reads_per_db_cpu_second")
READS, LATENCY = catalogue.figures("reads_per_s", "avg_read_us")
RAW = catalogue.figures("raw_reads_per_s", "efficiency_reads")  # the summary's columns when steps had --baseline
# After the average read when steps measured it: how much of a read's time rising sessions spent queued for a CPU.
CPU_WAIT = catalogue.figure("cpu_wait_in_read_us")


def step_row(step: dict[str, Any], doc: dict[str, Any] | None) -> dict[str, Any]:
    """The figures of one step a sweep compares (pure)."""
    w = get(doc or {}, "config", "workload") or {}
    resolved = {**w, **(get(doc or {}, "config", "instance") or {})}
    return {
        "step": step["name"], "status": step["status"], "values": step["values"],
        "group": step.get("group") or step["name"], "round": step.get("round"),  # sweep --repeat: its rounds
        "resolved": {k: resolved.get(k) for k in step["values"]},  # normalized: blocks, bytes, seconds
        "sessions": w.get("sessions"),
        "invalid": bool(verdict.invalid(doc)) if doc else False,  # its reads not shown to be storage's
        "caveats": verdict.reads_caveats(doc) if doc else [],  # what its reads/s is besides the storage's
        **catalogue.values(catalogue.figures_of(doc), STEP_FIGURES),
    }


SPREAD_FIGURES = ("reads_per_s", "avg_read_us")  # whose spread over a step's rounds the report shows


def repeated_rows(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """sweep --repeat N: one row per step from the rows of its rounds (pure), each figure the median of the
    rounds that completed, with the spread of reads/s and the average read; the step is complete when every
    round is, otherwise it carries the first other status of its rounds."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rounds:
        groups.setdefault(row["group"], []).append(row)
    out = []
    for name, members in groups.items():
        done = [r for r in members if r["status"] == "complete"]
        status = next((r["status"] for r in members if r["status"] != "complete"), "complete")
        row = {**members[0], "step": name, "status": status, "rounds": len(members), "rounds_complete": len(done),
               "invalid": any(r["invalid"] for r in done), "caveats": next((r["caveats"] for r in done), [])}
        for key in STEP_FIGURES:
            found = spread.spread([r[key] for r in done])
            row[key] = None if found is None else found.median
        row["spread"] = {key: found.to_dict() for key in SPREAD_FIGURES
                         if (found := spread.spread([r[key] for r in done])) is not None}
        out.append(row)
    return out


def _error_bars(row: dict[str, Any]) -> dict[str, Any]:
    """A point's min and max over its step's rounds (sweep --repeat), for the charts' error bars."""
    reads, latency = ((row.get("spread") or {}).get(key) for key in SPREAD_FIGURES)
    out: dict[str, Any] = {}
    if reads and reads["n"] > 1:
        out.update(iops_low=reads["min"], iops_high=reads["max"])
    if latency and latency["n"] > 1 and row["avg_read_us"] is not None:
        out.update(latency_low=latency["min"], latency_high=latency["max"])
    return out


def repeats_section(doc: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """sweep --repeat: each step's median and spread over its rounds."""
    if (doc.get("repeat") or 1) <= 1:
        return None
    table_rows = []
    for r in rows:
        reads, latency = ((r.get("spread") or {}).get(key) for key in SPREAD_FIGURES)
        table_rows.append([r["step"], f"{r['rounds_complete']} of {r['rounds']}",
                           *(reads[k] if reads else None for k in ("median", "min", "max", "spread_pct")),
                           *(latency[k] if latency else None for k in ("median", "min", "max"))])
    note = (f"each step ran {doc['repeat']} times, interleaved (round 1 of every step, then round 2, ...), so a "
            "storage whose speed drifts spreads over every step rather than biasing one; the summary, curves and "
            "knees use each step's medians; apart: (max - min) / median")
    return {"id": "repeats", "title": "Run-to-run spread", "tables": [table(
        "sweep_repeats", "", ["Step", "Rounds", "Reads/s median", "min", "max", "apart %", "Avg read median", "min",
                              "max"],
        ["text", "text", READS.kind, READS.kind, READS.kind, "pct", LATENCY.kind, LATENCY.kind, LATENCY.kind],
        table_rows, [note])]}


def axes(doc: dict[str, Any]) -> tuple[str, list[str]]:
    """(x knob, the knobs that tell curves apart)."""
    varied = [key for key, values in doc.get("vary") or [] if len(values) > 1]
    if (doc.get("until_peak") or doc.get("search")) and "threads_per_schema" not in varied:
        varied = ["threads_per_schema", *varied]
    counted = [k for k in varied if k in (doc.get("counted") or ())]  # the 1-to-N devices study
    x = "threads_per_schema" if "threads_per_schema" in varied else \
        (counted or varied or ["threads_per_schema"])[0]
    return x, [k for k in varied if k != x]


def curves(doc: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    x_key, group_keys = axes(doc)
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        if row["status"] != "complete" or row["reads_per_s"] is None:
            continue
        key = tuple((k, row["values"].get(k)) for k in group_keys)
        groups.setdefault(key, []).append(row)
    out = []
    for key, members in groups.items():
        label = ", ".join(f"{k}={v}" for k, v in key) or "all steps"
        counted = x_key in (doc.get("counted") or ())
        x_of = (lambda r: r["sessions"]) if x_key == "threads_per_schema" else \
            (lambda r: _places(r, x_key)) if counted else (lambda r: _x_value(r, x_key))
        points = sorted(({"x": x_of(r), "iops": r["reads_per_s"], "latency_us": r["avg_read_us"]
                          if r["avg_read_us"] is not None else r["select_mean_us"],
                          "read_latency": r["avg_read_us"] is not None, "step": r["step"],
                          "cpu_wait_us": r["cpu_wait_in_read_us"], "invalid": r["invalid"],
                          "raw_iops": r["raw_reads_per_s"], "raw_latency_us": r["raw_avg_read_us"],
                          **_error_bars(r)}
                         for r in members), key=lambda p: _order(p["x"]))
        out.append({"label": label, "points": points})
    return out


def knees(doc: dict[str, Any], curve_list: list[dict[str, Any]]) -> list[str]:
    x_key, _ = axes(doc)
    if x_key != "threads_per_schema":
        return []
    gain = doc.get("knee_gain", knee_math.DEFAULT_GAIN)
    lines = []
    for curve in curve_list:
        points = [knee_math.Point(p["x"], p["iops"], p["latency_us"], p["cpu_wait_us"])
                  for p in capacity_section.storage_points(curve) if p["x"]]
        found = knee_math.find(points, gain)
        left_out = [p["step"] for p in curve["points"] if p.get("invalid")]
        prefix = (f"{curve['label']}: " if curve["label"] != "all steps" else "") + \
            (f"leaving out {verdict.not_storage(left_out)}: " if left_out else "")
        if found:
            per_read = all(p["read_latency"] for p in curve["points"])
            lines.append(prefix + found.statement(latency="read latency" if per_read else "statement latency",
                                                  read_latency=per_read))
        elif len(points) > 1:
            best = max(points, key=lambda p: p.iops)
            lines.append(prefix + f"no knee: every step added at least {100 * gain:.0f}% of reads/s or latency did "
                                  f"not rise faster (best {best.iops:,.0f} reads/s at {best.sessions} "
                                  f"session{'s' if best.sessions != 1 else ''})")
    return lines


def build(doc: dict[str, Any], step_docs: dict[str, dict[str, Any]],
          capacity: dict[str, Any] | None = None) -> dict[str, Any]:
    """capacity: a target, objective and prices (report --target-iops ...) over those the sweep was run with."""
    if doc.get("op"):  # each step a maintenance operation (sweep --op): its own figures
        from dbio.report import ops_model

        return ops_model.build_sweep(doc, step_docs)
    rounds = [step_row(step, step_docs.get(step["name"])) for step in doc["steps"]]
    rows = repeated_rows(rounds) if (doc.get("repeat") or 1) > 1 else rounds
    curve_list = curves(doc, rows)
    x_key, _ = axes(doc)
    knee_lines = knees(doc, curve_list)
    # a step cut short is no candidate: its curves leave it out too (curves())
    best = max((r for r in rows if r["reads_per_s"] is not None and not r["invalid"] and r["status"] == "complete"),
               key=lambda r: r["reads_per_s"], default=None)
    sections = [
        {"id": "sweep", "title": "Sweep", "pairs": _about(doc, rounds, step_docs)},
        search_section(doc),
        {"id": "summary", "title": "Summary", "tables": [_summary(doc, rows)]},
        repeats_section(doc, rows),
        {"id": "knees", "title": "Knees and peaks", "lines": knee_lines + _peak_lines(doc, rounds)},
        capacity_section.section(doc, curve_list, step_docs, capacity or doc.get("capacity"),
                                 by_sessions=x_key == "threads_per_schema"),
    ]
    return {
        "format": FORMAT, "format_version": 1, "kind": "sweep",
        "title": f"dbio sweep: {doc.get('label') or doc.get('created_at')}",
        "run": {"status": doc.get("status"), "run_id": doc.get("created_at"), "dbio_version": doc.get("dbio_version")},
        "headline_text": _search_text(doc) or _headline_text(best, rows),
        "headline": _headline(best, _complete(rows)) if best else [],
        "findings": _findings(doc, rounds, step_docs)[:20],
        "sections": [s for s in sections if s and (s.get("tables") or s.get("pairs") or s.get("lines"))],
        "curves": {"x": _x_label(doc, x_key), "lines": curve_list},
        "charts": [["sweep_iops", "curves"], ["sweep_latency", "curves"], ["sweep_latency_vs_iops", "curves"]],
        "knees": knee_lines,
    }


def _answers(doc: dict[str, Any]) -> list[str]:
    """sweep --objective: each searched combination's answer, named when there are several."""
    answers = (doc.get("search") or {}).get("answers") or []
    return [f"{a['group']}: {a['line']}" if a["group"] else a["line"] for a in answers]


def _search_text(doc: dict[str, Any]) -> str | None:
    return "; ".join(_answers(doc)) or None


def search_section(doc: dict[str, Any]) -> dict[str, Any] | None:
    """sweep --objective: the objective, each answer, and the counts probed in the order the search ran them."""
    find = doc.get("search")
    if not find:
        return None
    slo = capacity_math.parse_slo(find["objective"])
    schemas = (doc.get("base") or {}).get("schemas") or 1
    order = [int(s["values"].get("threads_per_schema", 1)) * int(s["values"].get("schemas", schemas))
             for s in doc["steps"] if s["status"] == "complete"]
    lines = [f"objective: {slo.text()} ({slo.label}), sessions doubled while it was met and reads/s grew by "
             f"{100 * find['gain']:.0f}% or more (at most {find['max_sessions']}), then bisected to within "
             f"{100 * find['resolution']:.0f}% (or adjacent counts); only a VALID step can meet it",
             f"probed {len(order)} session counts in this order: {', '.join(str(n) for n in order)}"]
    answers = _answers(doc)
    lines += [f"answer: {line}" for line in answers] or ["no answer yet: the search did not finish"]
    return {"id": "search", "title": "Search", "lines": lines}


def _server_facts(step_docs: dict[str, dict[str, Any]]) -> list[str]:
    """The engine's buffer cache and direct I/O, as every step's server had them (a fact that
    varied is in the Varied line, not here)."""
    docs = list(step_docs.values())
    caches = {(words.cache_name(d), catalogue.value(catalogue.figures_of(d), "cache_bytes")) for d in docs}
    direct = {get(d, "capabilities", "direct_io") for d in docs}
    out = []
    if len(caches) == 1:
        name, cache = next(iter(caches))
        if cache is not None:
            out.append(f"{name} {format_bytes(cache)}")
    if len(direct) == 1 and None not in direct:
        out.append(f"direct I/O {'on' if direct.pop() else 'off'}")
    return out


def _headline_text(best: dict[str, Any] | None, rows: list[dict[str, Any]]) -> str:
    """The best step that is a storage result; the steps that are not are left out, and said to be."""
    invalid = [r["step"] for r in rows if r["invalid"] and r["reads_per_s"] is not None]
    if best is None:
        return f"no step is a storage result ({verdict.not_storage(invalid)})" if invalid else "no step completed"
    caveats = f" ({'; '.join(best['caveats'])})" if best.get("caveats") else ""
    text = (f"best {best['reads_per_s']:,.0f} reads/s{caveats} at {best['sessions']} "
            f"session{'s' if best['sessions'] != 1 else ''} ({best['step']})")
    return f"{text}, leaving out {verdict.not_storage(invalid)}" if invalid else text


def _complete(rows: list[dict[str, Any]]) -> int:
    return sum(1 for r in rows if r["status"] == "complete")


def _about(doc: dict[str, Any], rows: list[dict[str, Any]], step_docs: dict[str, dict[str, Any]]) -> list[list[str]]:
    """The Sweep section: status, what varied and what stayed, where the time went, where it ran."""
    measured = sum(r["window_seconds"] or 0 for r in rows)
    wall = doc.get("wall_seconds") or 0.0
    base = doc.get("base") or {}
    pairs = [
        ["Status", f"{str(doc.get('status')).upper()}: {_complete(rows)} of {len(rows)} steps complete"],
        ["Varied", ("; ".join(f"{k} = {', '.join(v)}" for k, v in doc.get("vary") or []) +
                   (" (sessions doubled until reads/s stopped growing)" if doc.get("until_peak") else "") +
                   (f" (sessions searched for the most reads/s within {doc['search']['objective']})"
                    if doc.get("search") else "")).strip()],
        ["Fixed", f"scale {base.get('scale')} blocks, schemas {base.get('schemas')}, work unit "
                  f"{base.get('work_unit')}, "
                  f"run time {format_duration(base.get('run_time') or 0)} after "
                  f"{format_duration(base.get('warmup') or 0)}"
                  f" of warm-up" + "".join(f", {fact}" for fact in _server_facts(step_docs))],
        ["Time", f"{format_duration(wall)} in all, {format_duration(measured)} of it measured: "
                 f"{format_duration(max(0.0, wall - measured))} of warm-up, starts and restarts"],
    ]
    first_doc = next((step_docs[r["step"]] for r in rows if r["step"] in step_docs), None)
    if first_doc:
        env = first_doc.get("environment") or {}
        pairs.append(["Server", get(env, "server", "description") or "-"])
        host = env.get("host") or {}
        pairs.append(["Host", f"{host.get('cpu_model', '-')}, {host.get('cpus', '-')} CPUs"])
    return pairs


def _summary(doc: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One row per step: the knobs it varied (sessions apart), its sessions and its summary figures."""
    knob_cols = [key for key, _ in doc.get("vary") or [] if key != "threads_per_schema"]
    raw = any(r["raw_reads_per_s"] is not None for r in rows)
    shown = SUMMARY + (RAW if raw else ())
    notes = ["Raw reads/s: fio's synchronous 8 KiB random reads of the same files right before the step, one job "
             "per session; Efficiency: the database's reads/s / raw."] if raw else []
    if any(r[CPU_WAIT.name] is not None for r in rows):
        at = shown.index(LATENCY) + 1
        shown = shown[:at] + (CPU_WAIT,) + shown[at:]
        notes.append("CPU wait in read: the sessions' time ready to run but queued for a CPU, per physical read, "
                     "where it is no more than the read's time beyond the device's own: the part of the average read "
                     "this host's CPUs added ('-': not measured, or more than that, so not placed in the reads).")
    summary_rows = [[r["step"], *[r["values"].get(k) for k in knob_cols], r["sessions"],
                     *[r[fig.name] for fig in shown], _status(r)] for r in rows]
    if any(r["invalid"] for r in rows):
        notes.append(f"{verdict.INVALID_MARK}: {verdict.NOT_STORAGE}; the step's reads/s is what the engine counted "
                     "as physical, but storage was not shown to serve them (its findings say why).")
    return table("sweep_summary", "", ["Step", *knob_cols, "Sessions", *[_heading(fig) for fig in shown], "Status"],
                 ["text"] * (1 + len(knob_cols)) + ["count", *[fig.kind for fig in shown], "text"], summary_rows, notes)


def _status(row: dict[str, Any]) -> str:
    return f"{row['status']} {verdict.INVALID_MARK}" if row["invalid"] else row["status"]


def _heading(fig: catalogue.Figure) -> str:
    return "Raw reads/s" if fig.name == "raw_reads_per_s" else fig.short or fig.label


def _peak_lines(doc: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    return [f"peak: {r['step']}{' ' + verdict.INVALID_MARK if r['invalid'] else ''}, {r['reads_per_s']:,.0f} "
            f"reads/s at {r['sessions']} sessions: doubling the sessions added less than "
            f"{100 * doc.get('peak_gain', 0.05):.0f}% of reads/s"
            for step, r in zip(doc["steps"], rows) if step.get("peak") and r["reads_per_s"] is not None]


def _findings(doc: dict[str, Any], rows: list[dict[str, Any]],
              step_docs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps' invalid results and warnings (dbio's own overhead apart), each kind said once with the
    steps it applies to (a sweep's page opened with sixteen boxes before any chart), the status first."""
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for r in rows:
        step_doc = step_docs.get(r["step"])
        if step_doc:
            for f in verdict.findings(step_doc):
                if f.level in ("invalid", "warning") and f.code != "overhead":
                    grouped.setdefault((f.level, f.code), []).append((r["step"], f.message))
    findings = []
    for (level, code), found in grouped.items():
        steps = [step for step, _ in found]
        where = f"step {steps[0]}" if len(steps) == 1 else f"steps {', '.join(steps)}"
        also = "" if len(steps) == 1 else f" (as {steps[0]} said it; the others alike)"
        findings.append({"level": level, "code": code, "message": f"{where}: {found[0][1]}{also}"})
    findings.sort(key=lambda f: f["level"] != "invalid")
    if doc.get("status") != "complete":
        findings.insert(0, {"level": "warning", "code": "status", "message":
                            f"sweep {str(doc.get('status')).upper()}: {_complete(rows)} of {len(rows)} steps "
                            "complete; finish it with dbio sweep --resume DIR"})
    return findings


def _headline(best: dict[str, Any], done: int) -> list[dict[str, Any]]:
    return [{"label": "Best reads/s", "value": best[READS.name], "kind": READS.kind},
            {"label": "at sessions", "value": best["sessions"], "kind": "count"},
            {"label": "Avg read there", "value": best[LATENCY.name], "kind": LATENCY.kind},
            {"label": "Steps complete", "value": done, "kind": "count"}]


def summary_lines(model: dict[str, Any]) -> list[str]:
    capacity = next((s.get("lines") or [] for s in model["sections"] if s["id"] == "capacity"), [])
    return [f"{model['run']['status']}: {model['headline_text']}", *model["knees"], *capacity]


def _x_label(doc: dict[str, Any], key: str) -> str:
    if key == "threads_per_schema":
        return "sessions"
    return f"{key} (directories)" if key in (doc.get("counted") or ()) else key


def _places(row: dict[str, Any], key: str) -> int:
    """How many directories a step's layout spreads over (none: the data directory, 1)."""
    value = row["resolved"].get(key)
    return len(value) if isinstance(value, list) and value else 1


def _x_value(row: dict[str, Any], key: str) -> Any:
    """A step's value of the x knob: its resolved number (bytes, blocks, seconds) when it has one."""
    value = row["resolved"].get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return str(row["values"].get(key))


def _order(x: Any) -> tuple:
    return (0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x))
