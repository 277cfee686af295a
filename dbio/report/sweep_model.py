"""The report of a sweep, as data (pure): a summary row per step, curves, knees and peaks.

The x axis is sessions when they vary, otherwise the first knob that varies (a layout of several
directories, data_dirs, by how many it names: the 1-to-N devices study); every other combination of
varied knobs is one curve.
"""

from __future__ import annotations

from typing import Any, Mapping

from dbio import ops_records, result_records
from dbio.report import capacity_section, rate_curve, verdict, words
from dbio.result_records import Result
from dbio.sweep_records import Step, Sweep
from dbio.report.tables import table
from dbio.stats import capacity as capacity_math
from dbio.stats import catalogue, spread
from dbio.stats import knee as knee_math
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


def step_row(step: Step, r: Result | None) -> dict[str, Any]:
    """The figures of one step a sweep compares (pure); r: its result, when it wrote one."""
    w = r.config.workload if r else {}
    resolved = {**w, **(r.config.instance if r else {})}
    return {
        "step": step.name, "status": step.status, "values": step.values,
        "group": step.group, "round": step.round,  # sweep --repeat: its rounds
        "resolved": {k: resolved.get(k) for k in step.values},  # normalized: blocks, bytes, seconds
        "sessions": w.get("sessions"),
        "invalid": bool(verdict.invalid(r)) if r else False,  # its reads not shown to be storage's
        "caveats": verdict.reads_caveats(r) if r else [],  # what its reads/s is besides the storage's
        **catalogue.values(dict(r.figures) if r else {}, STEP_FIGURES),
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


def repeats_section(sweep: Sweep, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """sweep --repeat: each step's median and spread over its rounds."""
    if sweep.repeat <= 1:
        return None
    table_rows = []
    for r in rows:
        reads, latency = ((r.get("spread") or {}).get(key) for key in SPREAD_FIGURES)
        table_rows.append([r["step"], f"{r['rounds_complete']} of {r['rounds']}",
                           *(reads[k] if reads else None for k in ("median", "min", "max", "spread_pct")),
                           *(latency[k] if latency else None for k in ("median", "min", "max"))])
    note = (f"each step ran {sweep.repeat} times, interleaved (round 1 of every step, then round 2, ...), so a "
            "storage whose speed drifts spreads over every step rather than biasing one; the summary, curves and "
            "knees use each step's medians; apart: (max - min) / median")
    return {"id": "repeats", "title": "Run-to-run spread", "tables": [table(
        "sweep_repeats", "", ["Step", "Rounds", "Reads/s median", "min", "max", "apart %", "Avg read median", "min",
                              "max"],
        ["text", "text", READS.kind, READS.kind, READS.kind, "pct", LATENCY.kind, LATENCY.kind, LATENCY.kind],
        table_rows, [note])]}


def axes(sweep: Sweep) -> tuple[str, list[str]]:
    """(x knob, the knobs that tell curves apart)."""
    varied = sweep.varied
    if (sweep.until_peak or sweep.search) and "threads_per_schema" not in varied:
        varied = ["threads_per_schema", *varied]
    counted = [k for k in varied if k in sweep.counted]  # the 1-to-N devices study
    x = "threads_per_schema" if "threads_per_schema" in varied else \
        (counted or varied or ["threads_per_schema"])[0]
    return x, [k for k in varied if k != x]


def curves(sweep: Sweep, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    x_key, group_keys = axes(sweep)
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        if row["status"] != "complete" or row["reads_per_s"] is None:
            continue
        key = tuple((k, row["values"].get(k)) for k in group_keys)
        groups.setdefault(key, []).append(row)
    out = []
    for key, members in groups.items():
        label = ", ".join(f"{k}={v}" for k, v in key) or "all steps"
        counted = x_key in sweep.counted
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


def knees(sweep: Sweep, curve_list: list[dict[str, Any]]) -> list[str]:
    x_key, _ = axes(sweep)
    if x_key != "threads_per_schema":
        return []
    gain = sweep.knee_gain
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


def build(sweep: Sweep, step_docs: Mapping[str, Any], capacity: dict[str, Any] | None = None) -> dict[str, Any]:
    """step_docs: each step's result by its name (an operation's, dbio-ops, in a sweep --op); capacity: a
    target, objective and prices (report --target-iops ...) over those the sweep was run with."""
    if sweep.operation:  # each step a maintenance operation (sweep --op): its own figures
        from dbio.report import ops_model

        return ops_model.build_sweep(sweep, {name: ops_records.of(d) for name, d in step_docs.items() if d})
    results = {name: result_records.of(d) for name, d in step_docs.items() if d}  # typed once, each read often
    rounds = [step_row(step, results.get(step.name)) for step in sweep.steps]
    rows = repeated_rows(rounds) if sweep.repeat > 1 else rounds
    curve_list = curves(sweep, rows)
    x_key, _ = axes(sweep)
    knee_lines = knees(sweep, curve_list)
    rate_points = rate_curve.points(sweep, rows, results) if rate_curve.is_rate_sweep(sweep) else []
    rate_section = rate_curve.section(sweep, rate_points, sweep.knee_gain)
    knee_lines += rate_curve.knee_lines(rate_curve.curves(rate_points), sweep.knee_gain)
    # a step cut short is no candidate: its curves leave it out too (curves())
    best = max((r for r in rows if r["reads_per_s"] is not None and not r["invalid"] and r["status"] == "complete"),
               key=lambda r: r["reads_per_s"], default=None)
    sections = [
        {"id": "sweep", "title": "Sweep", "pairs": _about(sweep, rounds, results)},
        search_section(sweep),
        {"id": "summary", "title": "Summary", "tables": [_summary(sweep, rows)]},
        rate_section,
        repeats_section(sweep, rows),
        {"id": "knees", "title": "Knees and peaks", "lines": knee_lines + _peak_lines(sweep, rounds)},
        capacity_section.section(sweep, curve_list, results, capacity or sweep.capacity,
                                 by_sessions=x_key == "threads_per_schema"),
    ]
    return {
        "format": FORMAT, "format_version": 1, "kind": "sweep",
        "title": f"dbio sweep: {sweep.label or sweep.created_at}",
        "run": {"status": sweep.status, "run_id": sweep.created_at, "dbio_version": sweep.dbio_version},
        "headline_text": _search_text(sweep) or rate_curve.headline(rate_points) or _headline_text(best, rows),
        "headline": _headline(best, _complete(rows)) if best else [],
        "findings": _findings(sweep, rounds, results)[:20],
        "sections": [s for s in sections if s and (s.get("tables") or s.get("pairs") or s.get("lines"))],
        "curves": {"x": _x_label(sweep, x_key), "lines": curve_list},
        # over rates, reads/s and latency against the rate asked would join a step not held to the others as if
        # it ran at its rate: its curve is drawn against the rate achieved instead
        "charts": [["sweep_rate_latency", "rate_curve"], ["sweep_latency_vs_iops", "curves"]] if rate_points else
                  [["sweep_iops", "curves"], ["sweep_latency", "curves"], ["sweep_latency_vs_iops", "curves"]],
        "knees": knee_lines,
        **({"rate_curve": {"lines": rate_curve.curves(rate_points)}} if rate_points else {}),
    }


def _answers(sweep: Sweep) -> list[str]:
    """sweep --objective: each searched combination's answer, named when there are several."""
    answers = sweep.search.answers if sweep.search else ()
    return [f"{a.group}: {a.line}" if a.group else a.line for a in answers]


def _search_text(sweep: Sweep) -> str | None:
    return "; ".join(_answers(sweep)) or None


def search_section(sweep: Sweep) -> dict[str, Any] | None:
    """sweep --objective: the objective, each answer, and the counts probed in the order the search ran them."""
    find = sweep.search
    if not find:
        return None
    slo = capacity_math.parse_slo(find.objective)
    if find.axis == "rate":
        return _rate_search_section(sweep, slo)
    schemas = sweep.base.get("schemas") or 1
    order = [int(s.values.get("threads_per_schema", 1)) * int(s.values.get("schemas", schemas))
             for s in sweep.steps if s.status == "complete"]
    lines = [f"objective: {slo.text()} ({slo.label}), sessions doubled while it was met and reads/s grew by "
             f"{100 * find.gain:.0f}% or more (at most {find.max_sessions}), then bisected to within "
             f"{100 * find.resolution:.0f}% (or adjacent counts); only a VALID step can meet it",
             f"probed {len(order)} session counts in this order: {', '.join(str(n) for n in order)}"]
    answers = _answers(sweep)
    lines += [f"answer: {line}" for line in answers] or ["no answer yet: the search did not finish"]
    return {"id": "search", "title": "Search", "lines": lines}


def _rate_search_section(sweep: Sweep, slo: capacity_math.Slo) -> dict[str, Any]:
    """sweep --rate ... --objective: the objective, each answer, and the rates probed in the order run."""
    find = sweep.search
    assert find is not None
    order = [s.values.get("rate", "-") for s in sweep.steps if s.status == "complete"]
    lines = [f"objective: {slo.text()} ({slo.label}): the rates given first, the highest doubled while each was "
             f"held within it, then bisected to within {100 * find.resolution:.0f}%; only a VALID step whose rate "
             "was held can meet it",
             f"probed {len(order)} rates in this order: {', '.join(f'{int(r):,}/s' for r in order)}"]
    answers = _answers(sweep)
    lines += [f"answer: {line}" for line in answers] or ["no answer yet: the search did not finish"]
    return {"id": "search", "title": "Search", "lines": lines}


def _server_facts(results: Mapping[str, Result]) -> list[str]:
    """The engine's buffer cache and direct I/O, as every step's server had them (a fact that
    varied is in the Varied line, not here)."""
    caches = {(words.cache_name(r), catalogue.value(r.figures, "cache_bytes")) for r in results.values()}
    direct = {r.caps.direct_io for r in results.values()}
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


def _about(sweep: Sweep, rows: list[dict[str, Any]], results: Mapping[str, Result]) -> list[list[str]]:
    """The Sweep section: status, what varied and what stayed, where the time went, where it ran."""
    measured = sum(r["window_seconds"] or 0 for r in rows)
    wall = sweep.wall_seconds
    base = sweep.base
    pairs = [
        ["Status", f"{str(sweep.status).upper()}: {_complete(rows)} of {len(rows)} steps complete"],
        ["Varied", ("; ".join(f"{k} = {', '.join(v)}" for k, v in sweep.vary) +
                   (" (sessions doubled until reads/s stopped growing)" if sweep.until_peak else "") +
                   (f" (sessions searched for the most reads/s within {sweep.search.objective})"
                    if sweep.search and sweep.search.axis != "rate" else "") +
                   (f" (rates searched for the highest held within {sweep.search.objective})"
                    if sweep.search and sweep.search.axis == "rate" else "")).strip()],
        ["Fixed", f"scale {base.get('scale')} blocks, schemas {base.get('schemas')}, work unit "
                  f"{base.get('work_unit')}, "
                  f"run time {format_duration(base.get('run_time') or 0)} after "
                  f"{format_duration(base.get('warmup') or 0)}"
                  f" of warm-up" + "".join(f", {fact}" for fact in _server_facts(results))],
        ["Time", f"{format_duration(wall)} in all, {format_duration(measured)} of it measured: "
                 f"{format_duration(max(0.0, wall - measured))} of warm-up, starts and restarts"],
    ]
    first = next((results[r["step"]] for r in rows if r["step"] in results), None)
    if first:
        env = first.environment
        pairs.append(["Server", env.server.get("description") or "-"])
        pairs.append(["Host", f"{env.host.get('cpu_model', '-')}, {env.host.get('cpus', '-')} CPUs"])
    return pairs


def _summary(sweep: Sweep, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One row per step: the knobs it varied (sessions apart), its sessions and its summary figures."""
    knob_cols = [key for key, _ in sweep.vary if key != "threads_per_schema"]
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


def _peak_lines(sweep: Sweep, rows: list[dict[str, Any]]) -> list[str]:
    return [f"peak: {r['step']}{' ' + verdict.INVALID_MARK if r['invalid'] else ''}, {r['reads_per_s']:,.0f} "
            f"reads/s at {r['sessions']} sessions: doubling the sessions added less than "
            f"{100 * sweep.peak_gain:.0f}% of reads/s"
            for step, r in zip(sweep.steps, rows) if step.peak and r["reads_per_s"] is not None]


def _findings(sweep: Sweep, rows: list[dict[str, Any]],
              results: Mapping[str, Result]) -> list[dict[str, Any]]:
    """The steps' invalid results and warnings (dbio's own overhead apart), each kind said once with the
    steps it applies to (a sweep's page opened with sixteen boxes before any chart), the status first."""
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for r in rows:
        step_result = results.get(r["step"])
        if step_result:
            for f in verdict.findings(step_result):
                if f.level in ("invalid", "warning") and f.code != "overhead":
                    grouped.setdefault((f.level, f.code), []).append((r["step"], f.message))
    findings = []
    for (level, code), found in grouped.items():
        steps = [step for step, _ in found]
        where = f"step {steps[0]}" if len(steps) == 1 else f"steps {', '.join(steps)}"
        also = "" if len(steps) == 1 else f" (as {steps[0]} said it; the others alike)"
        findings.append({"level": level, "code": code, "message": f"{where}: {found[0][1]}{also}"})
    findings.sort(key=lambda f: f["level"] != "invalid")
    if sweep.status != "complete":
        findings.insert(0, {"level": "warning", "code": "status", "message":
                            f"sweep {str(sweep.status).upper()}: {_complete(rows)} of {len(rows)} steps "
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


def _x_label(sweep: Sweep, key: str) -> str:
    if key == "threads_per_schema":
        return "sessions"
    return f"{key} (directories)" if key in sweep.counted else key


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
