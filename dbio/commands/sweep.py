"""dbio sweep: the cartesian product of knob lists, each step a normal run, one report over all.

Every step's configuration is validated before the first one runs. The loaded data serves all
steps (it is loaded first when nothing is). sweep.json is rewritten after each step, so an
interrupted sweep keeps its completed steps and `dbio sweep --resume DIR` finishes it. This module
starts a sweep or resumes one; its steps run in `sweep/steps.py`, the steps it adds itself (--until-peak,
--objective) come from `sweep/growth.py`, and each step's configuration from `sweep/step_config.py`.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from dbio import __version__, ops_result, result as results
from dbio import target as targets
from dbio import command_options, results_dir, trust
from dbio.jobs import baseline as baselines, dataset, disruptions
from dbio.jobs import setup as setup_job
from dbio.sweep import layout as sweep_layout
from dbio.sweep.growth import PEAK_GAIN, objective_of, probe_record
from dbio.sweep.step_config import live_dsn, step_config
from dbio.sweep.steps import execute, step_headline
from dbio.config import Config, option_values
from dbio.engines import registry
from dbio.run.identity import client_alive, client_id
from dbio.errors import UsageError
from dbio.stats import capacity as capacity_math
from dbio.stats import catalogue
from dbio.stats.knee import DEFAULT_GAIN
from dbio.option_table import BY_KEY
from dbio.sweep import document, plan, rate_search, search
from dbio.ui import UI

# --objective's growth bound when --max-sessions is not given: said once, in its row (and so in --help)
MAX_SEARCH_SESSIONS: int = command_options.default("sweep", "max_sessions")



def start(base: Config, varies: list[plan.Vary], ui: UI, *, until_peak: bool, knee_gain: float = DEFAULT_GAIN,
          peak_gain: float = PEAK_GAIN, sessions: str | None = None,
          baseline: baselines.Request | None = None, capacity: dict[str, Any] | None = None,
          op: dict[str, Any] | None = None, repeat: int = 1, objective: str | None = None,
          max_sessions: int | None = None, max_rate: int | None = None) -> Path:
    """sessions: --sessions' total session counts, spread over the schemas (the loaded ones when not given);
    repeat: each step run this many times, interleaved (round 1 of every step, then round 2, ...);
    baseline: fio before each step, at its sessions (--baseline); capacity: a target, objective and prices
    its report reads the steps for (jobs/capacity.py); op: each step is this maintenance operation
    (jobs/ops.sweep_op) instead of a run; objective: search the session counts for the most reads/s within
    this latency objective (sweep/search.py), growing at most to max_sessions; over rates when varies has them
    (sweep --rate, sweep/rate_search.py), growing at most to max_rate."""
    find = search_request(objective, max_sessions, until_peak=until_peak, op=op is not None, repeat=repeat,
                          sessions=sessions, varies=varies, max_rate=max_rate)
    if op is not None and (until_peak or baseline is not None or capacity is not None or sessions):
        raise UsageError("a sweep of an operation (--op) varies knobs with --vary only",
                         "drop --until-peak, --sessions, --baseline and the capacity options")
    if repeat < 1:
        raise UsageError(f"--repeat {repeat}: each step runs at least once", "give --repeat 1 or more (e.g. 3)")
    if repeat > 1 and (until_peak or op is not None):
        raise UsageError("--repeat repeats the steps given; --until-peak and --op decide or time their own",
                         "give the steps with --vary or --sessions, or drop --repeat")
    grid_checked(varies, sessions)
    results_dir.check(base.run.results_dir)  # before the server is held, started or changed
    with targets.exclusive(base, "sweep", ui.note):
        if sessions:  # over the schemas of the base: the loaded ones where none were given (config_resolver.py)
            varies = [*varies, plan.sessions_vary(sessions, base.workload.schemas)]
        return _start(base, plan.combine(varies), ui, until_peak=until_peak, knee_gain=knee_gain,
                      peak_gain=peak_gain, baseline=baseline, capacity=capacity, op=op, repeat=repeat, find=find)


def grid_checked(varies: Sequence[plan.Vary], sessions: str | None) -> None:
    """--sessions' syntax, and sessions given twice, before any server is reached."""
    if sessions:
        plan.session_counts(sessions)
        plan.combine([*varies, plan.Vary("threads_per_schema", ())])


def search_request(objective: str | None, max_sessions: int | None, *, until_peak: bool = False, op: bool = False,
                   repeat: int = 1, sessions: str | None = None,
                   varies: Sequence[plan.Vary] = (), max_rate: int | None = None) -> dict[str, Any] | None:
    """--objective and --max-sessions (--max-rate over rates) as sweep.json keeps them, or one line (exit 2) before
    anything runs."""
    if objective is None:
        if max_rate is not None:
            raise UsageError("--max-rate bounds the search of --objective over --rate's rates",
                             "give --objective too, e.g. --objective 'intended_p99<5ms'")
        if max_sessions is not None:
            raise UsageError("--max-sessions bounds the search of --objective", "give --objective too, e.g. "
                                                                              "--objective 'read_p99<2ms'")
        return None
    try:
        slo = capacity_math.parse_slo(objective)
    except ValueError as exc:
        raise UsageError(f"--objective: {exc}", "e.g. --objective 'read_p99<2ms' (single reads), "
                                                "'avg_read<500us' or 'select_p99<5ms'") from None
    if any(v.key == "rate" for v in varies):
        return _rate_search(objective, slo, max_sessions, until_peak=until_peak, op=op, repeat=repeat,
                            max_rate=max_rate)
    if max_rate is not None:
        raise UsageError("--max-rate bounds a search over rates", "give the first rates with --rate too")
    others = [name for name, given in (("--until-peak", until_peak), ("--op", op), ("--repeat", repeat > 1),
                                       ("--sessions N1,N2,...", sessions is not None and "," in sessions),
                                       ("--vary threads_per_schema=...",
                                        any(v.key == "threads_per_schema" and len(v.values) > 1 for v in varies)))
              if given]
    if others:
        raise UsageError(f"--objective searches the session counts itself: it takes no {', '.join(others)}",
                         "drop them (--sessions N or --threads-per-schema N gives the first count)")
    if max_sessions is not None and max_sessions < 1:
        raise UsageError(f"--max-sessions {max_sessions}: at least 1 session", "e.g. --max-sessions 256")
    return {"objective": objective.strip(), "stat": slo.stat, "limit_us": slo.limit_us,
            "max_sessions": max_sessions or MAX_SEARCH_SESSIONS, "resolution": search.RESOLUTION,
            "gain": search.GAIN, "answers": []}


def _rate_search(objective: str, slo: capacity_math.Slo, max_sessions: int | None, *, until_peak: bool, op: bool,
                 repeat: int, max_rate: int | None) -> dict[str, Any]:
    """--objective over --rate's rates (sweep/rate_search.py): on the latency from the intended start only, since a
    latency timed from each statement's actual start hides the queue of a rate the loop does not keep."""
    if slo.stat not in capacity_math.INTENDED:
        raise UsageError(f"--objective {objective}: a search over rates bounds the latency from the intended start",
                         "e.g. --objective 'intended_p99<5ms' (or intended_p50, intended_p99.9)")
    others = [name for name, given in (("--until-peak", until_peak), ("--op", op), ("--repeat", repeat > 1),
                                       ("--max-sessions", max_sessions is not None)) if given]
    if others:
        raise UsageError(f"--objective searches the rates itself: it takes no {', '.join(others)}",
                         "drop them (--rate gives the first rates)")
    return {"objective": objective.strip(), "stat": slo.stat, "limit_us": slo.limit_us, "axis": "rate",
            "max_rate": max_rate or int(BY_KEY["rate"].max or 10**9), "max_sessions": MAX_SEARCH_SESSIONS,
            "resolution": rate_search.RESOLUTION, "gain": search.GAIN, "answers": []}


def _start(base: Config, varies: list[plan.Vary], ui: UI, *, until_peak: bool, knee_gain: float,
           peak_gain: float, baseline: baselines.Request | None, capacity: dict[str, Any] | None,
           op: dict[str, Any] | None = None, repeat: int = 1, find: dict[str, Any] | None = None) -> Path:
    grows = until_peak or find is not None  # the sweep adds its own steps of more sessions (or other rates)
    by_rate = find is not None and find.get("axis") == "rate"
    if not varies and not grows:
        raise UsageError("nothing to sweep", "give --vary KEY=V1,V2 (or --sessions 1,2,4,8, or --until-peak)")
    if until_peak and any(v.key == "threads_per_schema" and len(v.values) > 1 for v in varies):
        raise UsageError("--until-peak doubles the sessions itself", "give --sessions (or threads) one start value")
    combos = plan.steps(varies) if varies else [{}]
    if grows and not by_rate:
        combos = [{**c, "threads_per_schema": c.get("threads_per_schema", str(base.workload.threads_per_schema))}
                  for c in combos]
    base_values = option_values(base)  # what sweep.json keeps: no password
    dsn = base.connection.dsn  # what this process runs with
    configs = [step_config(base_values, values, Path.cwd(), dsn) for values in combos]
    if find is not None and not by_rate:
        first = max(c.workload.schemas * c.workload.threads_per_schema for c in configs)
        if first > find["max_sessions"]:
            raise UsageError(f"--max-sessions {find['max_sessions']} is below the first count ({first} sessions)",
                             "give a larger --max-sessions, or fewer --sessions to start with")
        if capacity is None or not capacity.get("latency_slo"):  # its capacity section states the objective too
            capacity = {"target_iops": None, "prices": None, **(capacity or {}), "latency_slo": find["objective"]}
    directory = base.run.results_dir / results_dir.run_name(base.run.label, "sweep")  # or the next free name
    disruptions.check_sweep(configs, repeats=repeat > 1 or grows)  # every step's events, before the first
    if any(v.layout for v in varies):
        sweep_layout.check(configs, ui)
    steps = rounds(combos, repeat)
    doc = {"format": document.FORMAT, "format_version": document.FORMAT_VERSION, "dbio_version": __version__,
           "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "label": base.run.label,
           "status": "running", "base": base_values, "vary": [[v.key, list(v.values)] for v in varies],
           "counted": plan.counted(varies), "until_peak": until_peak, "peak_gain": peak_gain, "knee_gain": knee_gain,
           "steps": steps, "wall_seconds": 0.0}
    if baseline is not None:  # kept, so a resumed sweep measures its remaining steps the same way
        doc["baseline"] = {"path": None if baseline.path is None else str(baseline.path)}
    if capacity is not None:
        doc["capacity"] = capacity
    if op is not None:
        doc["op"] = op
    if repeat > 1:
        doc["repeat"] = repeat
    if find is not None:
        doc["search"] = find
    _ensure_data(configs, ui)
    directory = results_dir.claim(directory, "the sweep")
    document.write(directory, doc)
    times = f" ({len(combos)} steps, {repeat} times each, interleaved)" if repeat > 1 else ""
    ui.say(f"sweep of {len(steps)}{'+' if grows else ''} steps{times} in {directory}")
    return execute(directory, doc, ui, dsn, baseline)


def rounds(combos: list[dict[str, str]], repeat: int = 1) -> list[dict[str, Any]]:
    """The steps a sweep runs, in order (pure): each combination once, or, repeated, round 1 of every
    combination, then round 2, ...: a storage whose speed drifts over minutes then spreads over every step
    rather than biasing the last ones. A round is named after its step (its group) with -rN."""
    if repeat <= 1:
        return [{"index": i + 1, "name": plan.step_name(i + 1, values), "values": values, "status": "pending"}
                for i, values in enumerate(combos)]
    out: list[dict[str, Any]] = []
    for round_ in range(1, repeat + 1):
        for i, values in enumerate(combos):
            group = plan.step_name(i + 1, values)
            out.append({"index": len(out) + 1, "name": f"{group}-r{round_}", "group": group, "round": round_,
                        "values": values, "status": "pending"})
    return out


def resume(directory: Path, ui: UI, cwd: Path) -> Path:
    problem = trust.path_problem(directory)
    if problem:  # new steps are written there
        raise UsageError(f"refusing to resume the sweep in {directory}: {problem}",
                         "resume only a sweep in a directory only you (or root) can change")
    doc = document.read(directory, trusted=True)  # it holds the steps' configuration, archive_command included
    if doc.get("status") == "complete":
        ui.say(f"the sweep in {directory} is complete; nothing to do")
        return directory
    if doc.get("client") and client_alive(doc["client"]) and doc["client"] != client_id():
        raise UsageError(f"the sweep in {directory} is still running (dbio process {doc['client']})",
                         "wait for it, or stop it (Ctrl-C) before resuming")
    baseline = baseline_request(doc)  # fio is found before anything runs
    dsn = live_dsn(doc["base"].get("dsn"), doc["base"].get("engine", registry.DEFAULT))
    with targets.exclusive(step_config(doc["base"], {}, cwd, dsn), "sweep --resume", ui.note):
        return _resume(directory, doc, ui, cwd, dsn, baseline)


def _resume(directory: Path, doc: dict[str, Any], ui: UI, cwd: Path, dsn: str | None,
            baseline: baselines.Request | None) -> Path:
    for step in doc["steps"]:
        if step["status"] == "complete":
            continue
        path = directory / step["name"]
        adopted = _finished_result(path)
        if adopted is not None:  # the step finished but the sweep did not hear of it
            step["status"], step["headline"] = "complete", step_headline(adopted)
            step["window_seconds"] = catalogue.value(catalogue.figures_of(adopted), "window_seconds")
            if doc.get("search"):
                step["probe"] = probe_record(adopted, objective_of(doc))
            continue
        if path.exists():  # keep what an interrupted step left, under another name
            kept = path.with_name(f"{path.name}.{step['status']}-{int(time.time())}")
            path.rename(kept)
            step.setdefault("earlier_attempts", []).append(kept.name)
        step["status"] = "pending"
        step.pop("error", None)  # the earlier attempt's, whose result is kept: not the next one's
    pending = [s for s in doc["steps"] if s["status"] == "pending"]
    if pending:
        _ensure_data([step_config(doc["base"], s["values"], cwd, dsn) for s in pending], ui)
    ui.say(f"resuming the sweep in {directory}: {len(pending)} of {len(doc['steps'])} steps to run")
    doc["status"] = "running"
    return execute(directory, doc, ui, dsn, baseline)


def baseline_request(doc: dict[str, Any]) -> baselines.Request | None:
    """The --baseline a sweep was started with (fio is looked for again)."""
    kept = doc.get("baseline")
    if not isinstance(kept, dict):
        return None
    return baselines.request(Path(kept["path"]) if kept.get("path") else None)


def _finished_result(path: Path) -> dict[str, Any] | None:
    try:
        result = ops_result.read(path) if ops_result.is_ops(path) else results.read(path)
    except UsageError:
        return None
    return result if result.get("status") == "complete" else None


def _ensure_data(configs: list[Config], ui: UI) -> None:
    """The loaded data must serve every step; when nothing is loaded, load what the largest step needs."""
    if not configs:
        return
    biggest = max(configs, key=lambda c: (c.workload.schemas, c.workload.scale, c.workload.scan_table_size))
    sweep_layout.relayout(biggest, ui)  # its WAL where it says, before the server starts with it
    record = dataset.loaded_record(biggest, ui.note)  # None: no instance, database or data set there yet
    if record is None:
        ui.say("nothing is loaded yet: loading what the sweep's largest step needs")
        setup_job.setup(biggest, ui)
        return
    if record.status != "ready":  # resumed as it was: dbio setup takes the interrupted load's shape
        raise UsageError("the load was interrupted", "run dbio setup again to finish it, then the sweep")
    spec = record.spec
    for config in configs:
        w = config.workload
        problems = []
        if w.schemas > spec.schemas:
            problems.append(f"schemas {w.schemas} > {spec.schemas} loaded")
        if w.scale > spec.scale:
            problems.append(f"scale {w.scale} > {spec.scale} rows loaded")
        if w.key_order != spec.key_order:
            problems.append(f"key_order {w.key_order} but the load has {spec.key_order}")
        if w.scan_pct and not spec.scan_table_blocks:
            problems.append("scan_pct needs a scan table the load does not have")
        if problems:
            raise UsageError(f"the loaded data cannot serve every step of the sweep: {'; '.join(problems)}",
                             f"run dbio setup --reload with schemas {biggest.workload.schemas} and scale "
                             f"{biggest.workload.scale}, then the sweep")

