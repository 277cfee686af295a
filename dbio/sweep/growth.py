"""The steps a sweep adds itself, after each measured one: --until-peak's next doubling of the sessions,
and --objective's next probe or its answer (sweep/search.py decides; this records it in sweep.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbio import command_options, result_records
from dbio.sweep.step_config import step_config
from dbio.errors import UsageError
from dbio.report import verdict
from dbio.stats import capacity as capacity_math
from dbio.stats import catalogue
from dbio.stats.knee import peaked
from dbio.sweep import plan, rate_search, search
from dbio.ui import UI

# --until-peak: doubling stops when reads/s grow by less than this share (5%): said once, in --peak-gain's row
PEAK_GAIN: float = command_options.default("sweep", "peak_gain")
MAX_PEAK_STEPS = 13  # 1 .. 4096 sessions


def next_doubling(doc: dict[str, Any], step: dict[str, Any], ui: UI, dsn: str | None) -> None:
    """--until-peak: after a step, the same combination with twice the sessions, unless it peaked."""
    group = {k: v for k, v in step["values"].items() if k != "threads_per_schema"}
    same = [s for s in doc["steps"] if s["status"] == "complete" and
            {k: v for k, v in s["values"].items() if k != "threads_per_schema"} == group]
    reads = [s["headline"].get("reads_per_s") or 0.0 for s in same]
    best_before = max(reads[:-1], default=0.0)
    threads = int(step["values"]["threads_per_schema"])
    schemas = int(step["values"].get("schemas", doc["base"]["schemas"]))
    if len(same) > 1 and peaked(best_before, reads[-1], doc.get("peak_gain", PEAK_GAIN)):
        best = max(same, key=lambda s: s["headline"].get("reads_per_s") or 0.0)
        best["peak"] = True  # the best step of the combination: the last doubling did not add enough
        ui.say(f"    peak at {best['name']}: {threads * schemas} sessions add less than "
               f"{100 * doc.get('peak_gain', PEAK_GAIN):.0f}% of reads/s; this combination stops here")
        return
    if len(same) >= MAX_PEAK_STEPS or threads * 2 * schemas > 4096:
        return
    values = {**step["values"], "threads_per_schema": str(threads * 2)}
    index = len(doc["steps"]) + 1
    position = doc["steps"].index(step) + 1
    try:
        step_config(doc["base"], values, Path.cwd(), dsn)
    except UsageError as exc:
        ui.say(f"    no further doubling: {exc}")
        return
    doc["steps"].insert(position, {"index": index, "name": plan.step_name(index, values), "values": values,
                                   "status": "pending"})


def objective_of(doc: dict[str, Any]) -> capacity_math.Slo:
    return capacity_math.parse_slo(doc["search"]["objective"])


def probe_record(result: dict[str, Any], slo: capacity_math.Slo) -> dict[str, Any]:
    """What the search reads of a step's result: its verdict, the objective's figure, and why either fails."""
    verdict_ = result.get("verdict") or verdict.summary(result_records.of(result))
    value = catalogue.value(catalogue.figures_of(result), slo.figure)
    why = None
    if not verdict_.get("valid"):
        why = "; ".join(verdict_.get("reasons") or []) or None
    elif value is None:
        single = catalogue.single_reads(catalogue.figures_of(result)) or {}
        why = single.get("why") if slo.figure.startswith("single_read") else None
        why = why or "the step has no such figure"
    out = {"valid": bool(verdict_.get("valid")), "value_us": value, "why": why}
    figures = catalogue.figures_of(result)
    if catalogue.value(figures, "rate_asked_per_s") is not None:  # --rate: a search over rates reads if it held
        out.update(asked_per_s=catalogue.value(figures, "rate_asked_per_s"),
                   achieved_per_s=catalogue.value(figures, "rate_achieved_per_s"),
                   held=catalogue.value(figures, "rate_held"))
    return out


def _group_of(values: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in values.items() if k != "threads_per_schema"}


def search_next(doc: dict[str, Any], ui: UI, dsn: str | None) -> bool:
    """--objective: for each combination whose probes are all measured and whose search has no answer yet,
    the next probe (inserted after its last step) or its answer (recorded, and said); True when a probe was
    added."""
    find = doc["search"]
    if find.get("axis") == "rate":
        return _search_rates(doc, ui, dsn)
    slo = objective_of(doc)
    answered = {a["group"] for a in find["answers"]}
    groups: dict[str, list[dict[str, Any]]] = {}
    for step in doc["steps"]:
        label = ", ".join(f"{k}={v}" for k, v in _group_of(step["values"]).items())
        groups.setdefault(label, []).append(step)
    added = False
    for label, steps in groups.items():
        if label in answered or any(s["status"] != "complete" or "probe" not in s for s in steps):
            continue
        schemas = int(steps[0]["values"].get("schemas", doc["base"]["schemas"]))
        probes = [search.Probe(s["name"], int(s["values"]["threads_per_schema"]),
                               int(s["values"]["threads_per_schema"]) * schemas,
                               (s.get("headline") or {}).get("reads_per_s"), s["probe"]["value_us"],
                               s["probe"]["valid"], s["probe"]["why"]) for s in steps]
        decision = search.decide(probes, slo, max(1, find["max_sessions"] // schemas), gain=find["gain"],
                                 resolution=find["resolution"])
        prefix = f"{label}: " if label else ""
        if decision.threads is None:
            _answer(find, ui, label, decision.line, decision.best, decision.reason, len(probes))
            continue
        values = {**steps[-1]["values"], "threads_per_schema": str(decision.threads)}
        if not _add_probe(doc, ui, label, steps[-1], values, dsn, len(probes)):
            continue
        verb = "grows to" if decision.reason == "grow" else "bisects at"
        ui.say(f"    {prefix}{slo.text()}: {probes[-1].sessions} session{'s' if probes[-1].sessions != 1 else ''} "
               f"{'met it' if search.met(slo, probes[-1]) else 'did not'}; the search {verb} "
               f"{decision.threads * schemas} sessions")
        added = True
    return added


def _search_rates(doc: dict[str, Any], ui: UI, dsn: str | None) -> bool:
    """--rate ... --objective: search_next over rates (sweep/rate_search.py), each combination of the other knobs
    its own search; True when a probe was added."""
    find = doc["search"]
    slo = objective_of(doc)
    answered = {a["group"] for a in find["answers"]}
    groups: dict[str, list[dict[str, Any]]] = {}
    for step in doc["steps"]:
        label = ", ".join(f"{k}={v}" for k, v in step["values"].items() if k != "rate")
        groups.setdefault(label, []).append(step)
    added = False
    for label, steps in groups.items():
        if label in answered or any(s["status"] != "complete" or "probe" not in s for s in steps):
            continue
        probes = [rate_search.RateProbe(s["name"], int(s["values"]["rate"]), s["probe"].get("achieved_per_s"),
                                        s["probe"].get("held"), s["probe"]["value_us"], s["probe"]["valid"],
                                        s["probe"]["why"]) for s in steps]
        decision = rate_search.decide(probes, slo, find["max_rate"], resolution=find["resolution"])
        prefix = f"{label}: " if label else ""
        if decision.rate is None:
            _answer(find, ui, label, decision.line, decision.best, decision.reason, len(probes))
            continue
        values = {**steps[-1]["values"], "rate": str(decision.rate)}
        if not _add_probe(doc, ui, label, steps[-1], values, dsn, len(probes)):
            continue
        verb = "grows to" if decision.reason == "grow" else "bisects at"
        outcome = "met it" if rate_search.met(slo, probes[-1]) else "did not"
        ui.say(f"    {prefix}{slo.text()}: {probes[-1].rate:,}/s {outcome}; the search {verb} {decision.rate:,}/s")
        added = True
    return added


def _answer(find: dict[str, Any], ui: UI, label: str, line: str, best: Any, reason: str, probes: int) -> None:
    """A group's search ended: its answer kept in sweep.json and said."""
    find["answers"].append({"group": label, "line": line, "best": best, "reason": reason, "probes": probes})
    prefix = f"{label}: " if label else ""
    ui.say(f"    {prefix}{line}" if reason == "refused" else f"    answer: {prefix}{line}")


def _add_probe(doc: dict[str, Any], ui: UI, label: str, after: dict[str, Any], values: dict[str, str],
               dsn: str | None, probes: int) -> bool:
    """The search's next step, placed after the group's last; False (the answer kept) when its values are refused."""
    try:
        step_config(doc["base"], values, Path.cwd(), dsn)
    except UsageError as exc:
        _answer(doc["search"], ui, label, f"the search stopped: {exc}", None, "refused", probes)
        return False
    index = len(doc["steps"]) + 1
    doc["steps"].insert(doc["steps"].index(after) + 1, {
        "index": index, "name": plan.step_name(index, values), "values": values, "status": "pending"})
    return True
