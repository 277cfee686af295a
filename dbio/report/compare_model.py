"""A comparison of results (or sweeps) side by side, as data (pure).

What differs between the runs comes first, then the headline figures with absolute and %
deltas against the first, each judged against the runs' own interval-to-interval noise,
then the latency histograms and the per-second series overlaid.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from dbio.report import disruption_section, fmt, limit_findings, sweep_model, verdict, words
from dbio.report.sweep_model import step_row
from dbio.sweep_records import Sweep
from dbio.report.tables import table
from dbio import result_records
from dbio.result_records import Result
from dbio.stats import catalogue, compare, series, spread
from dbio.stats.catalogue import STATEMENT_LABELS

# The headline figures compared, in this order (the catalogue says how each compares and whether
# its per-interval series judges noise).
FIGURES = catalogue.figures("reads_per_s", "avg_read_us", "read_mib_per_s", "writes_per_s", "statements_per_s",
                            "select_p50_us", "select_p99_us", "select_p99_9_us", "reads_per_host_cpu_second",
                            "db_cpu_us_per_read", "host_busy_pct")
READS, LATENCY = catalogue.figures("reads_per_s", "avg_read_us")  # the one-line summary's
# Compared too when every result measured them (older results did not; the I/O workers' only with io_method =
# worker): a latency that differs by the wait for a CPU differs by the host's CPUs, not its storage.
MEASURED_SINCE = catalogue.figures("cpu_wait_us_per_read", "io_worker_cpu_wait_us_per_read",
                                   "server_cpu_throttled_periods_pct")
# Compared too when every result ran at a committed rate (--rate): the rate each achieved and its latency from the
# intended start, which a queue behind the schedule holds (the statement latency does not)
RATE = catalogue.figures("rate_asked_per_s", "rate_achieved_per_s", "intended_p50_us", "intended_p99_us",
                         "schedule_lag_p99_us")
# Compared too when every result has a raw-device baseline (run --baseline).
EFFICIENCY = catalogue.figures("raw_reads_per_s", "efficiency_reads", "efficiency_latency", "efficiency_cpu",
                               "efficiency_reader_cpu")
EFFICIENCY_READS = EFFICIENCY[1]
# What a reader must see first: the inputs that differ (each named by its place in result.json).
CONTEXT_KEYS = ("config.workload", "config.instance", "environment.server.settings", "environment.host",
                "environment.storage.data_directory")
IGNORED = ("environment.host.memory_available_bytes", "config.instance.data_dir",
           "environment.storage.data_directory.path")


Runs = Mapping[str, Sequence[Result]]  # each input's repeated runs (run --repeat), by its name
Named = list[tuple[str, Result]]  # each input's name and its result


def build(given: Sequence[tuple[str, Result]], given_runs: Runs | None = None) -> dict[str, Any]:
    """given: each input's name and its result (for a repeat set, its median run); given_runs: each input's runs
    when any input is a repeat set (a single result: a list of one), judged by their run-to-run spread."""
    named = list(given)
    names = [n for n, _ in named]
    runs = {name: list(docs) for name, docs in given_runs.items()} \
        if given_runs and any(len(docs) > 1 for docs in given_runs.values()) else None
    sections = [_context(named), *([repeats_section(named, runs)] if runs else []), _figures(named, runs),
                disruption_section.compare_section(named), conditions_section(named), _histograms(named)]
    findings = []
    differed = conditions_differ(named)
    if differed:
        findings.append({"level": "warning", "code": "conditions_differ",
                         "message": "besides their settings, the runs' conditions differed: " + "; ".join(differed)
                                    + ": a difference in their figures may come from these, not from the settings"})
    for name, doc in named:
        say = words.translator(doc.capabilities) or str  # each result in its engine's words
        for f in verdict.findings(doc):
            if f.level in ("invalid", "warning") and f.code != "overhead":
                findings.append({"level": f.level, "code": f.code, "message": f"{name}: {say(f.message)}"})
    methods = {name: method for name, method in ((name, busy_method(doc)) for name, doc in named) if method}
    if len(set(methods.values())) > 1:
        ticks = ", ".join(name for name, method in methods.items() if method == "ticks")
        findings.append({"level": "warning", "code": "cpu_counted_differently",
                         "message": f"host CPU was counted differently: {ticks} summed the kernel's ticks only, which "
                                    "miss the busy bursts of a CPU serving synchronous reads (about a third on a VM); "
                                    "compare reads per host-CPU-second and host CPU only between results of one kind"})
    return {
        "format": "dbio-compare", "format_version": 1, "kind": "compare",
        "title": "dbio compare: " + " vs ".join(names),
        "run": {"status": "complete", "run_id": ", ".join(str(d.run_id) for _, d in named),
                "dbio_version": named[0][1].dbio_version},
        "headline_text": _headline_text(named, runs),
        "headline": [],
        "findings": findings,
        "sections": [s for s in sections if s.get("tables") or s.get("lines") or s.get("pairs")],
        "overlay": _overlay(named),
        "histogram_overlay": {name: catalogue.histogram(doc.figures, "select") or [] for name, doc in named},
        "charts": [["overlay_iops", "overlay"], ["overlay_latency", "overlay"],
                   ["overlay_histogram", "histogram_overlay"]],
    }


def busy_method(doc: Result) -> str | None:
    """How the result counted the host's busy CPU (stats/host_cpu.py): results before it was kept summed ticks;
    None without host CPU figures."""
    host = (doc.figures.get("cpu") or {}).get("host") or {}
    return str(host.get("busy_method") or "ticks") if host else None


def _context(named: Named) -> dict[str, Any]:
    inputs = [(name, _inputs(doc)) for name, doc in named]
    rows = []
    for prefix in CONTEXT_KEYS:
        parts = [(name, dict(each[prefix])) for name, each in inputs]
        for key, values in compare.differences(parts):
            full = f"{prefix}.{key}"
            if any(full.startswith(i) for i in IGNORED):
                continue
            rows.append([full.replace("config.", "").replace("environment.", ""), *[_show(v) for v in values]])
    limits = [limit_findings.summary(doc) for _, doc in named]  # a list in the result: said in words
    if len(set(limits)) > 1:
        rows.append(["limits (cgroup, CPU affinity)", *limits])
    lines = [] if rows else ["the runs have the same workload, settings, host and storage"]
    return {"id": "differences", "title": "What differs", "lines": lines, "tables": [table(
        "differences", "", ["", *[n for n, _ in named]], ["text"] * (1 + len(named)), rows)] if rows else []}


# What shares a run's window besides its settings, and by how much two runs' values may differ before the
# difference is named: (figure, absolute points) or (figure, relative share) for rates.
CONDITIONS: tuple[tuple[str, str, float], ...] = (
    ("host_steal_pct", "points", 5.0),  # the hypervisor's share of the host's CPU
    ("other_cpu_pct", "points", 10.0),  # other work's share of the host's busy CPU
    ("buffer_hit_pct", "points", 5.0),  # the cache's state: how much of the data it held
    ("device_to_db_read_ratio", "points", 0.05),  # the device's reads against the engine's: sharing or a cache
    ("raw_reads_per_s", "relative", 0.2),  # the storage's own speed (fio beside each run)
)


def _condition_values(doc: Result) -> dict[str, float | None]:
    return {name: catalogue.figure(name).value(doc.figures) for name, _, _ in CONDITIONS}


def conditions_differ(named: Named) -> list[str]:
    """Each condition that differed between the runs beyond its tolerance, in words (pure)."""
    out = []
    values = [(name, _condition_values(doc)) for name, doc in named]
    for key, how, tolerance in CONDITIONS:
        seen = [(name, x) for name, v in values if isinstance(x := v[key], (int, float))]
        if len(seen) < 2:
            continue
        low, high = min(v for _, v in seen), max(v for _, v in seen)
        apart = (high - low) > tolerance if how == "points" else (low > 0 and high / low - 1 > tolerance)
        if apart:
            fig = catalogue.figure(key)
            out.append(f"{fig.label} " + " vs ".join(f"{fmt.cell(v, fig.kind)} ({name})" for name, v in seen))
    sharing = [name for name, doc in named if any(f.code == "shared_device" for f in verdict.findings(doc))]
    if sharing and len(sharing) < len(named):
        out.append(f"another process used the device in {', '.join(sharing)} only")
    return out


def conditions_section(named: Named) -> dict[str, Any]:
    """The runs' conditions side by side: what they shared the window with, besides their settings."""
    values = [_condition_values(doc) for _, doc in named]
    rows = [[catalogue.figure(key).label, *[{"value": v[key], "kind": catalogue.figure(key).kind} for v in values]]
            for key, _, _ in CONDITIONS if any(v[key] is not None for v in values)]
    return {"id": "conditions", "title": "Conditions besides the settings", "tables": [table(
        "conditions", "", ["", *[n for n, _ in named]], ["text"] + ["mixed"] * len(named), rows,
        ["steal and other work share the CPUs; buffer hits show how much of the data the cache held; device / engine "
         "reads above 1 show another reader of the device; raw reads/s is the storage's own speed (with --baseline)"])]
        if rows else []}


def _marked(name: str, doc: Result) -> str:
    """A result's name where its figures are quoted, marked when it is not a storage result."""
    return f"{name} {verdict.INVALID_MARK}" if verdict.invalid(doc) else name


def _figures(named: Named, runs: dict[str, list[Result]] | None = None) -> dict[str, Any]:
    """The headline figures side by side; with repeated runs, each side's value is the median of its runs and the
    verdict judges the difference of the medians against the runs' spread (stats/spread.py)."""
    base_name, base = named[0]
    columns, kinds = [""], ["text"]
    columns.append(_marked(base_name, base))
    kinds.append("mixed")
    for name, doc in named[1:]:
        columns += [_marked(name, doc), "delta", "delta %", "verdict"]
        kinds += ["mixed", "mixed", "delta_pct", "text"]
    rows = []
    measured = tuple(fig for fig in MEASURED_SINCE if all(fig.value(doc.figures) is not None for _, doc in named))
    at = FIGURES.index(LATENCY) + 1  # beside the latency it is part of
    scheduled = tuple(fig for fig in RATE if all(fig.value(doc.figures) is not None for _, doc in named))
    shown = FIGURES[:at] + measured + FIGURES[at:] + scheduled

    def value(fig: catalogue.Figure, name: str, doc: Result) -> Any:
        if runs is None:
            return fig.value(doc.figures)
        found = spread.spread([fig.value(d.figures) for d in runs[name]])
        return None if found is None else found.median

    for fig in shown + (EFFICIENCY if _all_have_baseline(doc for _, doc in named) else ()):
        row = [fig.label, {"value": value(fig, base_name, base), "kind": fig.kind}]
        for name, doc in named[1:]:
            change = catalogue.Change(fig, value(fig, base_name, base), value(fig, name, doc))
            if runs is not None:
                judged = spread.judge(*[[fig.value(d.figures) for d in runs[n]] for n in (base_name, name)]).words()
            else:
                judged = _judge(base, doc, str(fig.series)) if fig.noise else ""
            row += [{"value": change.other, "kind": fig.kind}, {"value": change.absolute, "kind": change.absolute_kind},
                    plain_pct(change.base, change.other, change.pct), judged]
        rows.append(_one_unit(row) if fig.kind == "us" else row)
    if runs is not None:
        notes = [f"each value is the median of the input's runs (run --repeat N); verdict: '{spread.BEYOND}' when "
                 f"the two inputs' runs do not overlap (every run of one above every run of the other), a separation "
                 f"whose chance under no difference is given (at most {spread.MAX_CHANCE:g}); '{spread.WITHIN}' when "
                 f"they overlap; '{spread.TOO_FEW}' when a separation could come by chance alone "
                 f"({spread.MIN_RUNS} runs a side are the fewest that can show one)"]
    else:
        notes = [f"verdict: 'real' when the difference of the means exceeds twice its standard error, estimated from "
                 f"{compare.BATCHES} batches of consecutive intervals (neighbouring intervals are alike); 'noise' when "
                 f"it does not; 'unstable' when a run's interval-to-interval variation exceeds "
                 f"{compare.UNSTABLE_CV:.0f}%; 'too few samples' under {compare.MIN_INTERVALS} measured intervals.",
                 ONE_RUN_EACH]
    invalid = [name for name, doc in named if verdict.invalid(doc)]
    notes += [f"{verdict.not_storage(invalid)} (the engine counted the reads as physical, but storage was "
              "not shown to serve them; the findings say why)"] if invalid else []
    medians = " (medians of repeated runs)" if runs is not None else ""
    return {"id": "figures", "title": f"Headline figures{medians} (deltas against {base_name})",
            "tables": [table("compare_figures", "", columns, kinds, rows, notes)]}


ONE_RUN_EACH = (f"one run each: the verdict sees each run's own interval-to-interval noise, not run-to-run noise "
                f"(the storage's drift, the cache's state, other work between runs); repeat with "
                f"--repeat {spread.MIN_RUNS} to judge run-to-run noise")


def repeats_section(named: Named, runs: dict[str, list[Result]]) -> dict[str, Any]:
    """Each input's runs: the spread of each headline figure (median, min, max, how far apart), and which run
    stands for the input in the sections that show one run (its median run by reads/s)."""
    rows = []
    for name in (n for n, _ in named):
        for fig_name in ("reads_per_s", "avg_read_us"):
            fig = catalogue.figure(fig_name)
            found = spread.spread([fig.value(d.figures) for d in runs[name]])
            if found is None:
                continue
            rows.append([name, fig.label, found.n, {"value": found.median, "kind": fig.kind},
                         {"value": found.low, "kind": fig.kind}, {"value": found.high, "kind": fig.kind},
                         found.spread_pct])
    lines = [f"{name}: the differences, conditions and histograms shown are those of its median run by reads/s, "
             f"{doc.run_id}" for name, doc in named if len(runs[name]) > 1]
    return {"id": "repeats", "title": "Run-to-run spread", "lines": lines, "tables": [table(
        "compare_repeats", "", ["", "figure", "runs", "median", "min", "max", "(max - min) / median %"],
        ["text", "text", "count", "mixed", "mixed", "mixed", "pct"], rows)]}


# A relative change beyond this (in %) says nothing a reader can use ("+296658.5%" for writes that went
# from almost none to many): the cell says how many times as much instead.
PLAIN_BEYOND_PCT = 1000.0


def plain_pct(base: float | None, other: float | None, pct: float | None) -> Any:
    """The delta % cell: the percentage, or in plain words when it is too large to mean anything."""
    if pct is None or abs(pct) <= PLAIN_BEYOND_PCT or not base or other is None:
        return pct
    return {"value": f"{other / base:,.0f} times as much", "kind": "text"}


def _one_unit(row: list[Any]) -> list[Any]:
    """Microseconds in one unit across the row ("39.2 ms" beside "-1.5 ms", not "-1,513 us")."""
    timed = [c for c in row if isinstance(c, dict) and c.get("kind") == "us"]
    unit = fmt.us_row_kind([c["value"] for c in timed])
    for c in timed:
        c["kind"] = unit
    return row


def _judge(a: Result, b: Result, key: str) -> str:
    def sample(doc: Result) -> compare.Sample | None:
        return compare.sample([r.get(key) for r in _measured(doc)])

    return compare.judge(sample(a), sample(b))


def _measured(doc: Result) -> list[dict[str, Any]]:
    """The run's whole measured intervals, labelled in seconds after the end of warm-up."""
    return series.measured(series.labelled(doc.series, doc.timeline.warmup_seconds or 0))


def _histograms(named: Named) -> dict[str, Any]:
    tables = []
    for kind in ("select", "update"):
        per = [(name, buckets) for name, doc in named if (buckets := catalogue.histogram(doc.figures, kind))]
        if len(per) < len(named):  # a run without this kind's buckets: nothing to set beside the others
            continue
        labels = [b["bucket"] for b in per[0][1]]
        used = [i for i in range(len(labels)) if any(buckets[i]["count"] for _, buckets in per)]
        if not used:
            continue
        rows = []
        for i in range(min(used), max(used) + 1):
            row = [labels[i]] + [buckets[i]["pct"] for _, buckets in per]
            row += [buckets[i]["pct"] - per[0][1][i]["pct"] for _, buckets in per[1:]]
            rows.append(row)
        columns = ["Bucket", *[f"{n} %" for n, _ in per], *[f"{n} shift (points)" for n, _ in per[1:]]]
        tables.append(table(f"compare_histogram_{kind}", f"{STATEMENT_LABELS[kind]} latency histogram", columns,
                            ["text"] + ["pct"] * len(per) + ["delta_pct"] * (len(per) - 1), rows))
    return {"id": "histograms", "title": "Latency histograms", "tables": tables}


def _overlay(named: Named) -> dict[str, Any]:
    lines = []
    for name, doc in named:
        rows = _measured(doc)
        if not rows:
            continue
        lines.append({"label": name, "t": [r["to_s"] for r in rows],
                      **{str(fig.series): [r.get(str(fig.series)) for r in rows] for fig in (READS, LATENCY)}})
    return {"lines": lines}


def _headline_text(named: Named, runs: dict[str, list[Result]] | None = None) -> str:
    if runs is not None:
        return _repeated_headline(named, runs)
    base_name, base = named[0]
    parts = []
    for name, doc in named[1:]:
        reads = READS.change(base.figures, doc.figures).pct
        latency = LATENCY.change(base.figures, doc.figures).pct
        text = f"{name} vs {base_name}:"
        text += f" reads/s {reads:+.1f}%" if reads is not None else " reads/s -"
        if latency is not None:
            text += f", avg read latency {latency:+.1f}%"
        efficiency = EFFICIENCY_READS.change(base.figures, doc.figures)
        if efficiency.base is not None and efficiency.other is not None:
            text += f", efficiency {efficiency.base:.2f} -> {efficiency.other:.2f} of the raw reads/s"
        invalid = [n for n, d in ((name, doc), (base_name, base)) if verdict.invalid(d)]
        if invalid:  # a difference from a result that is not the storage's is not the storage's difference
            text += f" ({verdict.not_storage(invalid)})"
        for n, d in ((base_name, base), (name, doc)):  # each side's reads/s as far as it is not the storage's
            caveats = [] if n in invalid else verdict.reads_caveats(d)
            if caveats:
                text += f" ({n}: {'; '.join(caveats)})"
        parts.append(text)
    return "; ".join(parts)


def _repeated_headline(named: Named, runs: dict[str, list[Result]]) -> str:
    """Medians said to be medians, and the verdict of reads/s against the runs' spread."""
    base_name = named[0][0]
    parts = []
    for name, doc in named[1:]:
        judged = spread.judge(*[[READS.value(d.figures) for d in runs[n]] for n in (base_name, name)])
        counts = f"{len(runs[name])} vs {len(runs[base_name])} runs"
        pct = judged.median_pct
        text = f"{name} vs {base_name}: median reads/s " + (f"{pct:+.1f}%" if pct is not None else "-")
        parts.append(f"{text} ({counts}), {judged.words()}")
    return "; ".join(parts)


def _all_have_baseline(docs: Iterable[Result]) -> bool:
    return all(EFFICIENCY_READS.value(doc.figures) is not None for doc in docs)


def _inputs(doc: Result) -> dict[str, Mapping[str, Any]]:
    """What a comparison names first when it differs, by CONTEXT_KEYS' names."""
    return dict(zip(CONTEXT_KEYS, (doc.config.workload, doc.config.instance, doc.environment.settings,
                                   doc.environment.host, doc.environment.storage.data_directory)))


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return "-" if value is None else str(value)


# -- sweeps ----------------------------------------------------------------------------------

def build_sweeps(given: Sequence[tuple[str, Sweep, dict[str, dict[str, Any]]]]) -> dict[str, Any]:
    """Sweeps side by side: steps matched by the values they varied."""
    named = list(given)
    names = [n for n, _, _ in named]
    keyed = [(name, {_step_key(r): r for r in _step_rows(sweep, steps)}) for name, sweep, steps in named]
    all_keys: list[str] = []
    for _, rows in keyed:
        all_keys += [k for k in rows if k not in all_keys]
    curves = []
    for name, sweep, steps in named:
        for curve in sweep_model.curves(sweep, _step_rows(sweep, steps)):
            curves.append({**curve, "label": f"{name}: {curve['label']}"})
    return {
        "format": "dbio-compare", "format_version": 1, "kind": "compare-sweeps",
        "title": "dbio compare: " + " vs ".join(names),
        "run": {"status": "complete", "run_id": ", ".join(str(s.created_at) for _, s, _ in named),
                "dbio_version": named[0][1].dbio_version},
        "headline_text": f"{len(all_keys)} steps matched by their varied values",
        "headline": [], "findings": _sweep_status_findings(named),
        "sections": [{"id": "steps", "title": f"Steps (deltas against {names[0]})",
                      "tables": [_steps_table(keyed, all_keys)]}],
        "curves": {"x": "sessions", "lines": curves},
        "charts": [["sweep_iops", "curves"], ["sweep_latency", "curves"], ["sweep_latency_vs_iops", "curves"]],
    }


def _sweep_status_findings(named: list[tuple[str, Sweep, dict[str, dict[str, Any]]]]) -> list[dict[str, Any]]:
    """A sweep that did not finish, named first: its steps' figures are not all there, or not whole."""
    findings = []
    for name, sweep, _ in named:
        if sweep.status != "complete":
            findings.append({"level": "warning", "code": "status", "message":
                             f"{name}: sweep {str(sweep.status).upper()}: {sweep.complete()} of {len(sweep.steps)} "
                             "steps complete; a step marked in the table covers only the part that ran"})
    return findings


def _steps_table(keyed: list[tuple[str, dict[str, dict[str, Any]]]], all_keys: list[str]) -> dict[str, Any]:
    """One row per step key: the first sweep's reads/s, then each other sweep's with its deltas."""
    first = keyed[0][0]
    # efficiency columns when every sweep ran with --baseline
    raw = all(any(r.get(EFFICIENCY_READS.name) is not None for r in rows.values()) for _, rows in keyed)
    columns, kinds = ["Step values", f"{first} reads/s"], ["text", READS.kind]
    for name, _ in keyed[1:]:
        columns += [f"{name} reads/s", "delta %", f"{first} avg read", f"{name} avg read", "delta %"]
        kinds += [READS.kind, "delta_pct", LATENCY.kind, LATENCY.kind, "delta_pct"]
        if raw:
            columns += [f"{first} efficiency", f"{name} efficiency", "delta"]
            kinds += [EFFICIENCY_READS.kind] * 3
    rows = []
    for key in all_keys:
        base = keyed[0][1].get(key) or {}
        invalid = [name for name, rows_of in keyed if (rows_of.get(key) or {}).get("invalid")]
        label = (key or "(no knob varied)") + (f" ({verdict.not_storage(invalid)})" if invalid else "")
        unfinished = [f"{(rows_of.get(key) or {}).get('status')} in {name}" for name, rows_of in keyed
                      if (rows_of.get(key) or {}).get("status") not in (None, "complete", "pending")]
        label += f" ({', '.join(unfinished)})" if unfinished else ""
        row = [label, base.get(READS.name)]
        for _, other_rows in keyed[1:]:
            other = other_rows.get(key) or {}
            reads = catalogue.Change(READS, base.get(READS.name), other.get(READS.name))
            latency = catalogue.Change(LATENCY, base.get(LATENCY.name), other.get(LATENCY.name))
            row += [reads.other, reads.pct, latency.base, latency.other, latency.pct]
            if raw:
                efficiency = catalogue.Change(EFFICIENCY_READS, base.get(EFFICIENCY_READS.name),
                                              other.get(EFFICIENCY_READS.name))
                row += [efficiency.base, efficiency.other, efficiency.absolute]
        rows.append(row)
    notes = ["efficiency: the database's reads/s / fio's at the step's sessions (sweep --baseline)"] if raw else []
    return table("compare_steps", "", columns, kinds, rows, notes)


def _step_rows(sweep: Sweep, steps: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """A sweep's rows, one per step: a repeated sweep's (--repeat N) the medians of each step's rounds."""
    rows = [step_row(s, _typed(steps.get(s.name))) for s in sweep.steps]
    return sweep_model.repeated_rows(rows) if sweep.repeat > 1 else rows


def _typed(doc: Mapping[str, Any] | None) -> Result | None:
    """A step's result typed, when the step wrote one."""
    return result_records.of(doc) if doc else None


def _step_key(step: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(step["values"].items()))
