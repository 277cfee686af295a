"""Many results over time (dbio history): each run's line, its configuration's group, what changed since the
run before, and whether a change between two runs of one configuration is larger than the runs' own noise
(pure: results in, records out).

Noise is judged the way a reader of a trend would: where a configuration has been run at least
MIN_RUNS_FOR_SPREAD times before, against the spread of those earlier runs (run-to-run noise: the storage's
speed drifting, other tenants); otherwise against the two runs' own interval-to-interval noise (stats/compare),
which cannot see run-to-run noise and says so."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from dbio.result_records import Result
from dbio.stats import catalogue, compare, series

# The settings that make two runs the same experiment: a change in any of them starts another group (each
# named by its place in result.json).
CONFIGURATION_KEYS = ("config.workload", "config.instance", "environment.server.settings")
# Never part of a configuration: where the run was kept, or what it was called.
NOT_CONFIGURATION = ("config.instance.data_dir", "config.workload.label", "config.run",
                     "environment.server.settings.data_directory")
# A server setting is its value: where it came from (file, default) and its unit name are not the experiment.
SETTING_DETAILS = (".unit", ".source")
MIN_RUNS_FOR_SPREAD = 3  # earlier runs of a configuration before its run-to-run spread is used
SPREAD_FACTOR = 3.0  # a change beyond this many robust standard deviations of the earlier runs is not noise
MAD_TO_SD = 1.4826  # the median absolute deviation of normal data, as a standard deviation


BEYOND_NOISE = "beyond noise"


@dataclass(frozen=True)
class ReadsChange:
    """A run's reads/s against its configuration's earlier runs, judged."""
    pct: float  # the change, in % of what it is judged against
    judged: str  # BEYOND_NOISE, 'noise' or 'cannot judge'
    against: str  # what it was judged against, in words

    @property
    def beyond_noise(self) -> bool:
        return self.judged == BEYOND_NOISE


@dataclass
class Entry:
    """One run (or sweep) as the history lists it."""

    path: str
    when: str | None  # ISO time the window opened (the run's start when it never did)
    label: str
    engine: str
    kind: str  # "run" or "sweep"
    reads_per_s: float | None
    avg_read_us: float | None
    writes_per_s: float | None
    valid: bool | None  # the result's verdict (None: it has none)
    reasons: list[str]
    configuration: dict[str, Any]  # flattened settings that define the experiment
    reads_sample: compare.Sample | None = None  # the run's per-interval reads/s
    steps: int = 0  # a sweep's steps
    group: str = ""  # set by group()
    changed: list[str] = field(default_factory=list)  # settings that differ from the run before (any group)
    change: ReadsChange | None = None  # the reads/s change since the group's previous run, judged
    rate: str | None = None  # --rate: asked, achieved and held (rate_text); None: a closed loop


READS, LATENCY, WRITES = catalogue.figures("reads_per_s", "avg_read_us", "writes_per_s")
ASKED, ACHIEVED, HELD = catalogue.figures("rate_asked_per_s", "rate_achieved_per_s", "rate_held")


def rate_text(asked: float | None, achieved: float | None, held: bool | None) -> str | None:
    """An open loop's rate in a line of the history: asked, achieved, held or not (None: no rate asked)."""
    if asked is None:
        return None
    verdict = "held" if held is True else "NOT HELD" if held is False else "not judged"
    done = "-" if achieved is None else f"{achieved:,.0f}"
    return f"{asked:,.0f}/s asked, {done} achieved ({verdict})"


def _configuration_parts(r: Result) -> tuple[Mapping[str, Any], ...]:
    """What CONFIGURATION_KEYS name, in their order."""
    return r.config.workload, r.config.instance, r.environment.settings


def entry(r: Result, path: str, verdict: Mapping[str, Any] | None) -> Entry:
    """A run's line from its result.json and its verdict ({"valid", "reasons"}: the one it recorded, or one
    made now for a result written before results carried one)."""
    f = r.figures
    verdict = verdict or {}
    configuration: dict[str, Any] = {}
    for prefix, part in zip(CONFIGURATION_KEYS, _configuration_parts(r)):
        for key, value in compare.flatten(dict(part)).items():
            full = f"{prefix}.{key}"
            if any(full.startswith(skip) for skip in NOT_CONFIGURATION) or full.endswith(SETTING_DETAILS):
                continue
            name = full.replace("config.", "").replace("environment.server.", "")
            configuration[name.removesuffix(".setting")] = value
    rows = series.measured(series.labelled(r.series, r.timeline.warmup_seconds or 0))
    return Entry(
        path=path, when=r.timeline.window_start or r.timeline.start,
        label=str(r.label or ""), engine=str(r.caps.engine or "?"),
        kind="run", reads_per_s=READS.value(f), avg_read_us=LATENCY.value(f), writes_per_s=WRITES.value(f),
        valid=verdict.get("valid") if isinstance(verdict.get("valid"), bool) else None,
        reasons=[str(r) for r in verdict.get("reasons") or []], configuration=configuration,
        reads_sample=compare.sample([r.get("reads_per_s") for r in rows]),
        rate=rate_text(ASKED.value(f), ACHIEVED.value(f), HELD.value(f)))


def sweep_entry(path: str, label: str, steps: Sequence[Entry]) -> Entry:
    """A sweep's line from its steps' lines: its best valid step's figures (the most reads/s a valid step
    measured), valid when any step is, its configuration the first step's minus what the steps varied."""
    ordered = sorted(steps, key=lambda e: e.when or "")
    valid_steps = [e for e in ordered if e.valid]
    best = max(valid_steps or ordered, key=lambda e: e.reads_per_s or 0.0) if ordered else None
    shared = dict(ordered[0].configuration) if ordered else {}
    for other in ordered[1:]:
        shared = {k: v for k, v in shared.items() if other.configuration.get(k) == v}
    reasons = [] if valid_steps else sorted({r for e in ordered for r in e.reasons})
    return Entry(path=path, when=ordered[0].when if ordered else None, label=label,
                 engine=ordered[0].engine if ordered else "?", kind="sweep",
                 reads_per_s=best.reads_per_s if best else None, avg_read_us=best.avg_read_us if best else None,
                 writes_per_s=best.writes_per_s if best else None,
                 valid=bool(valid_steps) if ordered else None,
                 reasons=reasons if not valid_steps else [f"{len(valid_steps)} of {len(ordered)} steps valid"],
                 configuration=shared, steps=len(ordered), rate=best.rate if best else None)


def group(entries: list[Entry]) -> list[Entry]:
    """In time order, each with its group (its kind and configuration; named by the first run's label), the
    settings changed since the run before, and its reads/s change since its group's previous run."""
    ordered = sorted(entries, key=lambda e: e.when or "")
    names: dict[tuple, str] = {}
    earlier: dict[tuple, list[Entry]] = {}
    previous: Entry | None = None
    for e in ordered:
        key = (e.kind, e.engine, tuple(sorted((k, repr(v)) for k, v in e.configuration.items())))
        if key not in names:
            names[key] = _group_name(e, len(names) + 1)
        e.group = names[key]
        if previous is not None:
            e.changed = [k for k, _ in compare.differences([("a", previous.configuration), ("b", e.configuration)])]
        before = earlier.setdefault(key, [])
        if before:
            e.change = judge_change(before, e)
        before.append(e)
        previous = e
    return ordered


def _group_name(e: Entry, number: int) -> str:
    return f"{e.label or 'unlabelled'} ({e.engine}, configuration {number})"


def judge_change(before: Sequence[Entry], e: Entry) -> ReadsChange | None:
    """e's reads/s against its configuration's earlier runs: against their median and spread once there are
    MIN_RUNS_FOR_SPREAD of them, otherwise against the previous run and the two runs' own interval noise.
    None when there is nothing to judge it against."""
    values = [b.reads_per_s for b in before if b.reads_per_s is not None and b.valid is not False]
    if e.reads_per_s is None or not values:
        return None
    if len(values) >= MIN_RUNS_FOR_SPREAD:
        centre = statistics.median(values)
        sd = MAD_TO_SD * statistics.median(abs(v - centre) for v in values)
        if centre and sd > 0:
            beyond = abs(e.reads_per_s - centre) > SPREAD_FACTOR * sd
            return ReadsChange(100.0 * (e.reads_per_s - centre) / centre, BEYOND_NOISE if beyond else "noise",
                               f"the median and spread of its {len(values)} earlier valid runs "
                               f"({100 * sd / centre:.1f}%)")
    last = next(b for b in reversed(before) if b.reads_per_s is not None and b.valid is not False)
    if not last.reads_per_s:
        return None
    judged = compare.judge(last.reads_sample, e.reads_sample)
    said = {"real": BEYOND_NOISE, "noise": "noise"}.get(judged, "cannot judge")
    why = "its previous valid run and the two runs' own interval noise (run-to-run noise unseen)"
    if said == "cannot judge":
        why = f"its previous valid run ({judged}; too few runs of this configuration to know its run-to-run noise)"
    return ReadsChange(100.0 * (e.reads_per_s - last.reads_per_s) / last.reads_per_s, said, why)
