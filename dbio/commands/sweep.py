"""dbio sweep: the cartesian product of knob lists, each step a normal run, one report over all.

Every step's configuration is validated before the first one runs. The loaded data serves all
steps (it is loaded first when nothing is). sweep.json is rewritten after each step, so an
interrupted sweep keeps its completed steps and `dbio sweep --resume DIR` finishes it.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from dbio import __version__, ops_result, report, result as results
from dbio import target as targets
from dbio import results_dir, trust
from dbio.commands import baseline as baselines
from dbio.commands import run_files
from dbio.commands import run as run_command
from dbio.commands import setup as setup_command
from dbio.commands import sweep_layout
from dbio.config import Config, Sources, load_config, option_values
from dbio.options import BY_KEY
from dbio.engines import registry
from dbio.run.identity import client_alive, client_id
from dbio.errors import ConfigErrors, DbioError, Interrupted, Terminated, UsageError
from dbio.filesystem import write_whole
from dbio.report import sweep_model, verdict
from dbio.stats import capacity as capacity_math
from dbio.stats import catalogue
from dbio.stats.knee import DEFAULT_GAIN, peaked
from dbio.sweep import document, plan, search
from dbio.ui import UI
from dbio.units import format_duration

PEAK_GAIN = 0.05  # --until-peak: doubling stops when reads/s grow by less than 5%
MAX_PEAK_STEPS = 13  # 1 .. 4096 sessions
MAX_SEARCH_SESSIONS = 4096  # --objective's growth bound when --max-sessions is not given


def start(base: Config, varies: list[plan.Vary], ui: UI, *, until_peak: bool, knee_gain: float = DEFAULT_GAIN,
          peak_gain: float = PEAK_GAIN, sessions: str | None = None,
          baseline: baselines.Request | None = None, capacity: dict[str, Any] | None = None,
          op: dict[str, Any] | None = None, repeat: int = 1, objective: str | None = None,
          max_sessions: int | None = None) -> Path:
    """sessions: --sessions' total session counts, spread over the schemas (the loaded ones when not given);
    repeat: each step run this many times, interleaved (round 1 of every step, then round 2, ...);
    baseline: fio before each step, at its sessions (--baseline); capacity: a target, objective and prices
    its report reads the steps for (commands/capacity.py); op: each step is this maintenance operation
    (commands/ops.sweep_op) instead of a run; objective: search the session counts for the most reads/s within
    this latency objective (sweep/search.py), growing at most to max_sessions."""
    find = search_request(objective, max_sessions, until_peak=until_peak, op=op is not None, repeat=repeat,
                          sessions=sessions, varies=varies)
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
                   varies: Sequence[plan.Vary] = ()) -> dict[str, Any] | None:
    """--objective and --max-sessions as sweep.json keeps them, or one line (exit 2) before anything runs."""
    if objective is None:
        if max_sessions is not None:
            raise UsageError("--max-sessions bounds the search of --objective", "give --objective too, e.g. "
                                                                              "--objective 'read_p99<2ms'")
        return None
    try:
        slo = capacity_math.parse_slo(objective)
    except ValueError as exc:
        raise UsageError(f"--objective: {exc}", "e.g. --objective 'read_p99<2ms' (single reads), "
                                                "'avg_read<500us' or 'select_p99<5ms'") from None
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


def _start(base: Config, varies: list[plan.Vary], ui: UI, *, until_peak: bool, knee_gain: float,
           peak_gain: float, baseline: baselines.Request | None, capacity: dict[str, Any] | None,
           op: dict[str, Any] | None = None, repeat: int = 1, find: dict[str, Any] | None = None) -> Path:
    grows = until_peak or find is not None  # the sweep adds its own steps of more sessions
    if not varies and not grows:
        raise UsageError("nothing to sweep", "give --vary KEY=V1,V2 (or --sessions 1,2,4,8, or --until-peak)")
    if until_peak and any(v.key == "threads_per_schema" and len(v.values) > 1 for v in varies):
        raise UsageError("--until-peak doubles the sessions itself", "give --sessions (or threads) one start value")
    combos = plan.steps(varies) if varies else [{}]
    if grows:
        combos = [{**c, "threads_per_schema": c.get("threads_per_schema", str(base.workload.threads_per_schema))}
                  for c in combos]
    base_values = option_values(base)  # what sweep.json keeps: no password
    dsn = base.connection.dsn  # what this process runs with
    configs = [step_config(base_values, values, Path.cwd(), dsn) for values in combos]
    if find is not None:
        first = max(c.workload.schemas * c.workload.threads_per_schema for c in configs)
        if first > find["max_sessions"]:
            raise UsageError(f"--max-sessions {find['max_sessions']} is below the first count ({first} sessions)",
                             "give a larger --max-sessions, or fewer --sessions to start with")
        if capacity is None or not capacity.get("latency_slo"):  # its capacity section states the objective too
            capacity = {"target_iops": None, "prices": None, **(capacity or {}), "latency_slo": find["objective"]}
    directory = base.run.results_dir / results_dir.run_name(base.run.label, "sweep")  # or the next free name
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
    return _execute(directory, doc, ui, dsn, baseline)


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
            step["status"], step["headline"] = "complete", _headline(adopted)
            step["window_seconds"] = catalogue.value(catalogue.figures_of(adopted), "window_seconds")
            if doc.get("search"):
                step["probe"] = probe_record(adopted, _objective(doc))
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
    return _execute(directory, doc, ui, dsn, baseline)


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


def _execute(directory: Path, doc: dict[str, Any], ui: UI, dsn: str | None,
             baseline: baselines.Request | None = None) -> Path:
    """Run the pending steps in order; `dsn` is the connection string this process runs with (the
    one in sweep.json has no password)."""
    started = time.monotonic()
    doc["client"] = client_id()
    wall_before = doc.get("wall_seconds") or 0.0
    durations: list[float] = []
    stopped_by: str | None = None  # the signal that interrupted a step
    try:
        while True:
            pending = [s for s in doc["steps"] if s["status"] == "pending"]
            if not pending and doc.get("search") and _search_next(doc, ui, dsn):
                continue  # resumed after a probe the sweep did not decide on
            if not pending:
                break
            outcome = _run_step(directory, doc, pending[0], ui, dsn, durations, baseline)
            if outcome.status != "complete" or outcome.signal:  # a signal may come after a whole step (its baseline)
                doc["status"] = "interrupted" if outcome.signal else outcome.status
                stopped_by = outcome.signal
                break
            if doc.get("until_peak"):
                _next_doubling(doc, pending[0], ui, dsn)
            if doc.get("search"):
                _search_next(doc, ui, dsn)
            document.write(directory, doc)
        if doc["status"] == "running":
            doc["status"] = "complete"
    except (KeyboardInterrupt, Interrupted) as exc:  # Interrupted: a signal between a step's parts (its baseline)
        doc["status"] = "interrupted"
        stopped_by = "SIGTERM" if isinstance(exc, Terminated) else stopped_by
    except BaseException:
        doc["status"] = "failed"
        raise
    finally:
        for step in doc["steps"]:
            if step["status"] == "running":
                step["status"] = "interrupted"
        doc["wall_seconds"] = round(wall_before + time.monotonic() - started, 3)
        try:
            document.write(directory, doc)
        except OSError as exc:  # a full disk: said in one line (the steps' own results are kept)
            raise DbioError(f"{directory / document.SWEEP_FILE} could not be written ({exc.strerror or exc})",
                            f"free some space there, then dbio sweep --resume {directory}") from None
        unwritten = _write_reports(directory, doc)
    return _finish(directory, doc, ui, stopped_by, unwritten)


def _run_step(directory: Path, doc: dict[str, Any], step: dict[str, Any], ui: UI, dsn: str | None,
              durations: list[float], baseline: baselines.Request | None) -> run_command.RunResult:
    """One step: its own run directory inside the sweep's; the step's record updated as it goes."""
    done = sum(1 for s in doc["steps"] if s["status"] == "complete")
    left = sum(1 for s in doc["steps"] if s["status"] == "pending")
    eta = f", about {format_duration(sum(durations) / len(durations) * left)} left" if durations else ""
    grows = doc.get("until_peak") or doc.get("search")
    ui.say(f"[{done + 1}/{len(doc['steps'])}{'+' if grows else ''}] step {step['name']}{eta}")
    config = step_config(doc["base"], step["values"], Path.cwd(), dsn)
    t0 = time.monotonic()
    step["started_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    step["status"] = "running"
    document.write(directory, doc)
    try:
        if any(plan.Vary(key, tuple(values)).layout for key, values in doc.get("vary") or []):
            sweep_layout.prepare(config, ui)
        if doc.get("op"):
            return _op_step(directory, doc, step, ui, config, durations, t0)
        outcome = run_command.run(config, ui, directory=directory / step["name"], baseline=baseline)
    except Interrupted:
        step["status"] = "interrupted"
        raise
    except DbioError as exc:
        step["status"], step["error"] = "failed", str(exc)
        raise
    durations.append(time.monotonic() - t0)
    step["status"] = outcome.status
    if outcome.status == "failed" and outcome.document.get("status_reason"):
        step["error"] = outcome.document["status_reason"]  # the sweep's last line says why it stopped
    step["seconds"] = round(durations[-1], 3)
    step["window_seconds"] = catalogue.value(catalogue.figures_of(outcome.document), "window_seconds")
    step["headline"] = _headline(outcome.document)
    if doc.get("search") and outcome.status == "complete":
        step["probe"] = probe_record(outcome.document, _objective(doc))
    ui.say(f"    {outcome.status}: {report.verdict.headline(outcome.document)}")
    return outcome


def _op_step(directory: Path, doc: dict[str, Any], step: dict[str, Any], ui: UI, config: Config,
             durations: list[float], t0: float) -> Any:
    """A step of a sweep of a maintenance operation (dbio ops), recorded as a run's step is."""
    from dbio.commands import ops as ops_command
    from dbio.report import ops_model

    outcome = ops_command.step(config, ui, doc["op"], directory / step["name"])
    durations.append(time.monotonic() - t0)
    step.update(status=outcome.status, seconds=round(durations[-1], 3),
                window_seconds=outcome.document["figures"].get("window_seconds"))
    ui.say(f"    {outcome.status}: {ops_model.headline(outcome.document)}")
    return outcome


def _finish(directory: Path, doc: dict[str, Any], ui: UI, stopped_by: str | None,
            unwritten: list[run_files.Unwritten] | None = None) -> Path:
    """The sweep's summary and files; an interrupted or failed sweep raises, saying how to resume, and so
    does one whose reports a full disk kept out, saying how to write them."""
    for line in sweep_model.summary_lines(sweep_model.build(doc, document.load_steps(directory, doc))):
        ui.say(line)
    ui.say(f"sweep: {directory / document.SWEEP_FILE}")
    unwritten = unwritten or []
    missing = {item.path: item for item in unwritten}
    for label, name in (("report:", document.REPORT_FILE), ("html:  ", document.HTML_REPORT_FILE)):
        path = directory / name
        ui.say(f"{label} {run_files.unwritten_line(missing[path]) if path in missing else path}")
    if doc["status"] == "interrupted":
        error = Terminated if stopped_by == "SIGTERM" else Interrupted
        raise error(f"sweep interrupted after {_count(doc, 'complete')} of {len(doc['steps'])} steps",
                    f"finish it with dbio sweep --resume {directory}")
    if doc["status"] != "complete":
        failed = next((s for s in doc["steps"] if s["status"] == "failed" and s.get("error")), None)
        why = f": step {failed['name']} {failed['error']}" if failed else ""
        raise DbioError(f"sweep {doc['status']} after {_count(doc, 'complete')} of {len(doc['steps'])} steps{why}",
                        f"see the step's result; finish it with dbio sweep --resume {directory}")
    if unwritten:
        raise DbioError(f"the sweep is complete, but {len(unwritten)} of its reports could not be written "
                        f"({unwritten[0].reason})", "see above how to write them once there is room")
    return directory


def _count(doc: dict[str, Any], status: str) -> int:
    return sum(1 for s in doc["steps"] if s["status"] == status)


def _next_doubling(doc: dict[str, Any], step: dict[str, Any], ui: UI, dsn: str | None) -> None:
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


def _objective(doc: dict[str, Any]) -> capacity_math.Slo:
    return capacity_math.parse_slo(doc["search"]["objective"])


def probe_record(result: dict[str, Any], slo: capacity_math.Slo) -> dict[str, Any]:
    """What the search reads of a step's result: its verdict, the objective's figure, and why either fails."""
    verdict_ = result.get("verdict") or verdict.summary(result)
    value = catalogue.value(catalogue.figures_of(result), slo.figure)
    why = None
    if not verdict_.get("valid"):
        why = "; ".join(verdict_.get("reasons") or []) or None
    elif value is None:
        single = catalogue.single_reads(catalogue.figures_of(result)) or {}
        why = single.get("why") if slo.figure.startswith("single_read") else None
        why = why or "the step has no such figure"
    return {"valid": bool(verdict_.get("valid")), "value_us": value, "why": why}


def _group_of(values: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in values.items() if k != "threads_per_schema"}


def _search_next(doc: dict[str, Any], ui: UI, dsn: str | None) -> bool:
    """--objective: for each combination whose probes are all measured and whose search has no answer yet,
    the next probe (inserted after its last step) or its answer (recorded, and said); True when a probe was
    added."""
    find = doc["search"]
    slo = _objective(doc)
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
            find["answers"].append({"group": label, "line": decision.line, "best": decision.best,
                                    "reason": decision.reason, "probes": len(probes)})
            ui.say(f"    answer: {prefix}{decision.line}")
            continue
        values = {**steps[-1]["values"], "threads_per_schema": str(decision.threads)}
        try:
            step_config(doc["base"], values, Path.cwd(), dsn)
        except UsageError as exc:
            find["answers"].append({"group": label, "line": f"the search stopped: {exc}", "best": None,
                                    "reason": "refused", "probes": len(probes)})
            ui.say(f"    {prefix}the search stopped: {exc}")
            continue
        index = len(doc["steps"]) + 1
        doc["steps"].insert(doc["steps"].index(steps[-1]) + 1, {
            "index": index, "name": plan.step_name(index, values), "values": values, "status": "pending"})
        verb = "grows to" if decision.reason == "grow" else "bisects at"
        ui.say(f"    {prefix}{slo.text()}: {probes[-1].sessions} session{'s' if probes[-1].sessions != 1 else ''} "
               f"{'met it' if search.met(slo, probes[-1]) else 'did not'}; the search {verb} "
               f"{decision.threads * schemas} sessions")
        added = True
    return added


def step_config(base_values: dict[str, Any], values: dict[str, str], cwd: Path, dsn: str | None) -> Config:
    """A step's configuration: the stored base values, the step's own, and the live DSN, which
    enters as DBIO_DSN would (a password there is accepted, as `run` accepts it). The base's
    instance options enter as defaults: with --dsn they are the unused defaults, which would be
    refused as set (config_checks.instance_option_errors); a step that varies one sets it."""
    try:
        typed = {key: plan.option_value(key, value) for key, value in values.items()}
        instance = {key: value for key, value in base_values.items() if BY_KEY[key].section == "instance"}
        given = {key: value for key, value in base_values.items() if key not in instance}
        config = load_config(Sources(cli={**given, **typed, "dsn": None}, env={"DBIO_DSN": dsn} if dsn else {},
                                     preset=instance, cwd=cwd, discover=False))
        return replace(config, given={})  # a step's values are the sweep's: the instance remembers none of them
    except ConfigErrors as exc:
        shown = ", ".join(f"{k}={v}" for k, v in values.items()) or "the base configuration"
        raise UsageError(f"sweep step {shown}: {exc.errors[0]}") from None


def live_dsn(stored: str | None, engine: str = registry.DEFAULT) -> str | None:
    """The DSN a resumed sweep runs with: DBIO_DSN again when it names the same server as the stored
    (password-free) one, so its password is used; otherwise the stored one (libpq then finds the
    password in PGPASSWORD or ~/.pgpass)."""
    given = os.environ.get("DBIO_DSN")
    if stored is None or not given:
        return stored
    return given if registry.entry(engine).same_server(given, stored) else stored


def _ensure_data(configs: list[Config], ui: UI) -> None:
    """The loaded data must serve every step; when nothing is loaded, load what the largest step needs."""
    if not configs:
        return
    biggest = max(configs, key=lambda c: (c.workload.schemas, c.workload.scale, c.workload.scan_table_size))
    sweep_layout.relayout(biggest, ui)  # its WAL where it says, before the server starts with it
    target = targets.resolve(biggest, purpose="any", sessions=1, notify=ui.note) \
        if not biggest.connection.embedded or targets.instance_for(biggest, ui.note).exists() else None
    record = None
    if target is not None:
        conn = target.connect("dbio:sweep")
        try:
            target.engine.probe(conn)
            record = target.engine.read_setup(conn)
        finally:
            target.engine.close(conn)
    if record is None:
        ui.say("nothing is loaded yet: loading what the sweep's largest step needs")
        setup_command.setup(biggest, ui)
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


# What sweep.json keeps of each step (by catalogue name): --until-peak reads it to decide the next doubling.
STEP_HEADLINE = ("reads_per_s", "avg_read_us")


def _headline(doc: dict[str, Any]) -> dict[str, Any]:
    return catalogue.values(catalogue.figures_of(doc), STEP_HEADLINE)


def _write_reports(directory: Path, doc: dict[str, Any]) -> list[run_files.Unwritten]:
    """sweep.txt and sweep.html, each whole or absent (a full disk): those that could not be written."""
    model = sweep_model.build(doc, document.load_steps(directory, doc))
    unwritten = []
    for name, form in ((document.REPORT_FILE, "text"), (document.HTML_REPORT_FILE, "html")):
        try:
            write_whole(directory / name, report.render_model(model, form))
        except OSError as exc:
            unwritten.append(run_files.Unwritten(directory / name, exc.strerror or str(exc)))
    return unwritten
