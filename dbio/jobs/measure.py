"""A run measured on checked nodes, each of its concerns a step: its directory claimed and its manifest written
(_claimed), what would otherwise land inside its window done before it (_before_window: the data set settled,
the OS's pending writes written out), its listeners made (run_listeners.py), the run itself (_sessions_run:
runner.py), and the tail that turns its outcome into result.json and its reports, which no signal cuts short
(after_window.py). Each run of dbio run, quickstart, run --repeat and a sweep's steps ends here."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from dbio import result as results
from dbio import result_records, results_dir, signals
from dbio.collect import host
from dbio.config import Config
from dbio.errors import DbioError, Terminated
from dbio.jobs import after_window, disruptions, external_script, run_files, run_listeners
from dbio.report import stack_findings
from dbio.result_context import Storage
from dbio.run import disk_guard, manifest, runner
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run.identity import new_run_id
from dbio.run.monitor import SampleWriter
from dbio.run.nodes import Node
from dbio.run.outcome import RunOutcome
from dbio.run.plan import RunPlan
from dbio.run.readings import Normalize, answered, normalized, normalizer
from dbio.stats import live
from dbio.ui import UI
from dbio.units import format_bytes


@dataclass(frozen=True)
class RunResult:
    directory: Path
    document: dict[str, Any]
    signal: str | None = None  # the first signal that came: in the run's window, or after it (after_window.py)
    unwritten: tuple[run_files.Unwritten, ...] = ()  # reports a full disk kept out (named in the result)

    @property
    def status(self) -> str:
        return self.document["status"]

    @cached_property
    def result(self) -> result_records.Result:
        """The document typed once, for the lines and reports that read it."""
        return result_records.of(self.document)


def measure(nodes: list[Node], config: Config, ui: UI, directory: Path, plan: RunPlan, setup: dict[str, Any],
            storage: dict[str, Any], *, baseline: dict[str, Any] | None = None,
            baseline_after: after_window.BaselineAfter | None = None, room_paths: tuple[str, ...] = (),
            room_floor: int = disk_guard.FLOOR, unique: bool = True, clock: TimeSource = REAL_TIME,
            step_label: str = "") -> RunResult:
    """The run on checked nodes: its directory (unique: as in run_on), the sessions, result.json and the reports.
    clock: the run's time (run/clock.py; the fake engine's tests give virtual time); step_label: a sweep's
    step's name, which its metrics carry (its caller's to say: a run knows no sweep)."""
    run_id = new_run_id()
    script = external_script.check(config.run.external_script)
    planned = disruptions.check(config, nodes, storage)  # what each --event needs, refused before anything is made
    man = manifest.manifest(config, plan, nodes, setup, storage, run_id, clock)
    observer = ui.run_observer(sessions=plan.sessions, window=plan.run_time, warmup=plan.warmup,
                               bounds_us=plan.bounds_us, facts=live_facts(man))
    directory = _claimed(directory, man, config, plan, ui, unique=unique, step=step_label)
    hook = external_script.Hook(script, directory, ui)  # called as the window opens and closes
    before = _before_window(nodes, config, ui)
    samples = SampleWriter(directory / results.SAMPLES_FILE)
    normalize = normalizer({node.name: node.engine for node in nodes})
    with signals.received() as came:
        around = run_listeners.Around(config, normalize, came, hook, ui.metrics, room_paths, room_floor,
                                      disruptions.Disruptions(planned, directory, disruptions.part_of(config))
                                      if planned.events else None)
        outcome = _sessions_run(runner.RunContext(
            nodes=nodes, plan=plan, access_path=config.workload.access_path, samples=samples,
            observer=_NormalizingObserver(normalize, observer), run_id=run_id, client=man["client"], time=clock,
            listeners=run_listeners.listeners(around)), directory, hook, observer, came)
        came.shield()  # the run has ended: what follows is its result's (after_window.py)
        written = after_window.finish(came, outcome, man, normalize, samples, directory, hook, ui, events=before,
                                      baseline=baseline, baseline_after=baseline_after)
    return RunResult(written.directory, written.document, came.first, written.unwritten)


def _claimed(directory: Path, man: dict[str, Any], config: Config, plan: RunPlan, ui: UI, *, unique: bool,
             step: str = "") -> Path:
    """The run's directory made (or the next free name) with its manifest, run.json, in it; the metrics endpoint's
    series begun for it. Nothing left behind when the manifest cannot be written."""
    directory = results_dir.claim(directory, "the run's result", unique=unique)
    if ui.metrics is not None:  # --metrics-port: a sweep's step is labelled with its name
        ui.metrics.begin(man["run_id"], config.run.label, step, plan.bounds_us)
    try:
        manifest.write_manifest(directory, man)
    except OSError as exc:  # nothing ran: leave no run directory behind
        shutil.rmtree(directory, ignore_errors=True)
        raise DbioError(f"{directory / results.RUN_MANIFEST} could not be written ({exc.strerror or exc})",
                        "free some space in the results directory") from None
    return directory


def _sessions_run(context: runner.RunContext, directory: Path, hook: external_script.Hook, observer: Any,
                  came: signals.Received) -> RunOutcome:
    """The run (runner.py). One that raises has measured nothing: the script's calls are stopped, a directory
    that holds no sample is removed, and a SIGTERM before the window is said as one (exit 143)."""
    samples = context.samples
    try:
        return runner.run(context)
    except BaseException as exc:
        hook.finish(interrupted=True)
        samples.close()
        if samples.lines == 0:  # nothing ran: leave no run directory behind
            shutil.rmtree(directory, ignore_errors=True)
        if isinstance(exc, KeyboardInterrupt) and came.first == "SIGTERM":  # 143, as SIGTERM ends a process
            raise Terminated("SIGTERM before the run's window opened: nothing measured") from None
        raise
    finally:
        observer.close()
        samples.close()


def _before_window(nodes: list[Node], config: Config, ui: UI) -> list[dict[str, Any]]:
    """What would otherwise land inside the window, done before the run: its events (for the result)."""
    settled = _settle(nodes, config, ui)  # first: settling writes, which the flush then writes out
    flushed = _flush_pending_writes(nodes, ui)
    return settled + ([flushed] if flushed is not None else [])


def live_facts(man: dict[str, Any]) -> live.RunFacts:
    """What the live view's findings know of the run besides its samples, as the verdict's rules know it (from
    its manifest): the engine's read unit, direct I/O, whether the devices dbio reads hold every read the engine
    counts (every node on this host, every data place on a device dbio reads), every server on this host."""
    caps = man["capabilities"]
    page = caps.get("page_bytes")
    local = all(node["capabilities"].get("local") for node in man.get("nodes") or [{"capabilities": caps}])
    places = Storage.of(man.get("storage"))
    measured = not any(stack_findings.unmeasured(place) for place in (places.data_directory, *places.tablespaces)
                       if place)
    per_session = (man.get("plan") or {}).get("rate_per_session")
    workload = (man.get("config") or {}).get("workload") or {}
    sessions = (workload.get("schemas") or 0) * (workload.get("threads_per_schema") or 0)
    return live.RunFacts(page_bytes=page if isinstance(page, int) and page > 0 else live.RunFacts.page_bytes,
                         direct_io=bool(caps.get("direct_io")), devices_hold_data=local and measured, local=local,
                         rate_asked_per_s=None if per_session is None else per_session * sessions)


def _settle(nodes: list[Node], config: Config, ui: UI) -> list[dict[str, Any]]:
    """Before a read-only run, each writable node's data set brought to rest: what an earlier run's
    UPDATEs left would otherwise be pruned, purged and written out by this run's reads inside its
    window. An event per node that had anything to settle, with the time it took."""
    if config.workload.update_pct > 0:
        return []
    events = []
    for node in nodes:
        if node.read_only:  # a standby has its primary's data set, settled there
            continue
        conn = node.engine.connect(node.conninfo, application_name="dbio:settle")
        try:
            done = node.engine.settle(conn)
        finally:
            node.engine.close(conn)
        if done is None:
            continue
        where = f" on {node.name}" if len(nodes) > 1 else ""
        message = (f"settled the data set{where} before this read-only run, what earlier writes left in it: "
                   f"{done['done']} ({done['seconds']:.1f} s)")
        ui.note(message)
        events.append({"t": time.time(), "kind": "settled", "node": node.name, "message": message, **done})
    return events


FLUSH_FLOOR = 16 << 20  # pending bytes below which a flush is not worth a note
FLUSH_LIMIT = 30.0  # seconds a run waits for the OS to write out what it had pending


def _flush_pending_writes(nodes: list[Node], ui: UI) -> dict[str, Any] | None:
    """Before a run on this host's storage, the OS's pending writes (a load's, an installation's) go to
    the device now rather than inside the measured window, where they would be the device's writes
    that the engine did not make. The event says how much and whether it finished in time."""
    if not any(node.info.caps.local for node in nodes):
        return None
    pending = host.pending_writes()
    if pending < FLUSH_FLOOR:
        return None
    ui.note(f"writing out {format_bytes(pending)} the OS had pending, so it does not reach the device "
            "inside the measured window")
    done = host.flush_pending_writes(pending, FLUSH_LIMIT)
    message = (f"the OS had {format_bytes(done['pending_bytes'])} of writes pending; they were written out "
               f"before the run ({done['seconds']:.1f} s)") if done["finished"] else \
        (f"the OS had {format_bytes(done['pending_bytes'])} of writes pending and had not written them out "
         f"after {FLUSH_LIMIT:.0f} s ({format_bytes(done['left_bytes'])} left): the device may write them "
         "inside the measured window")
    if not done["finished"]:
        ui.note(message)
    return {"t": time.time(), "kind": "pending_writes", "message": message, **done}


class _NormalizingObserver:
    def __init__(self, normalize: Normalize, observer: Any):
        self.normalize, self.observer = normalize, observer

    def phase(self, message: str) -> None:
        self.observer.phase(message)

    def event(self, message: str) -> None:
        self.observer.event(message)

    def disrupting(self, active: tuple[tuple[int, str], ...]) -> None:
        shown = getattr(self.observer, "disrupting", None)
        if shown is not None:
            shown(active)

    def second(self, sample: dict[str, Any]) -> None:
        if answered(sample):
            self.observer.second(normalized(sample, self.normalize))
