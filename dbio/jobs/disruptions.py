"""--event AT=ACTION as a listener of the run (run/listeners.py): at AT seconds into the measured window it starts
its action, records its start and end on the run's clock and what it did, as the result's "disruptions" (one
record per event, in order); stats/disruptions.py measures what each did to the workload.

What an action needs is checked before anything is made (check): a stall, the sessions' server processes on this
host (a thread-per-session server's, MariaDB's, is its one process: the whole server is stopped, and its record
says so); a throttle, root, the blkio controller and the data directory's disk; a checkpoint, an engine that
times its maintenance; an exec:, a program trusted as --external-script is. Every action ends at its end, at the
window's close, or when the run is stopped (its background stops: a signal, a failure): a stalled server is always
resumed, a throttle always lifted, a program always stopped (disruption_actions.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbio import disruption
from dbio.config import Config
from dbio.engines.base import timed_operations
from dbio.errors import UsageError
from dbio.jobs import blkio_throttle, disruption_actions, external_script
from dbio.run.listeners import Listener, RunView
from dbio.run.nodes import Node
from dbio.run.phase import Phase

KEY = "disruptions"  # its record in the outcome and result.json


@dataclass(frozen=True)
class Planned:
    """The run's events, checked, with what their actions need that is known before the run."""

    events: tuple[disruption.Event, ...] = ()
    programs: tuple[Path | None, ...] = ()  # each exec:'s program, resolved and trusted (None: another action)
    disks: tuple[str, ...] = ()  # a throttle's disks (MAJ:MIN) under the data directory


def check(config: Config, nodes: list[Node], storage: dict[str, Any]) -> Planned:
    """The events of config (already parsed once: config_checks), each refused in one line where its action cannot
    be done on these nodes, before anything is made."""
    events = tuple(disruption.parse(text) for text in config.run.event or ())
    if not events:
        return Planned()
    kinds = {event.action for event in events}
    if kinds & {"stall", "throttle"}:
        remote = [n.name for n in nodes if not (n.info.caps.local and n.info.caps.has_backend_cpu)]
        if remote:
            action = "stall" if "stall" in kinds else "throttle"
            raise UsageError(f"--event {action}: the sessions of {', '.join(remote)} have no server "
                             "processes on this host to act on",
                             "run it on the server's host, or give another event")
    if "checkpoint" in kinds:
        timeless = [n.name for n in nodes if not n.read_only and timed_operations(n.engine) is None]
        if timeless:
            raise UsageError(f"--event checkpoint: the {nodes[0].engine.name} engine of {', '.join(timeless)} has no "
                             "timed checkpoint", "give another event")
    disks: list[str] = []
    if "throttle" in kinds:
        data = storage.get("data_directory") or {}
        disks = blkio_throttle.check(list(data.get("diskstats_devices") or []))
    programs = tuple(external_script.check(event.path, f"--event {event.text}:") if event.action == "exec" else None
                     for event in events)
    return Planned(events, programs, tuple(disks))


class Disruptions(Listener):
    """Each planned event, at its offset into the window, one after the other, in a task bound to the run."""

    key = KEY
    title = "the events"

    def __init__(self, planned: Planned, directory: Path):
        self.planned, self.directory = planned, directory
        self.records: list[dict[str, Any]] = [
            {"event": e.text, "action": e.action, "describe": e.describe(), "at_s": e.at, "seconds_planned": e.seconds,
             "start_s": None, "end_s": None, "outcome": "not reached"} for e in planned.events]
        self.opened: float | None = None  # the window's opening, the run's monotonic clock
        self.actions = disruption_actions.Actions(directory)

    def phase(self, phase: Phase, run: RunView) -> None:
        if phase is Phase.WINDOW and self.planned.events:
            self.opened = run.time.monotonic()
            run.spawn(self, self._all(run))
        elif phase is Phase.CLEAN_UP:
            self.actions.undo_all()  # whatever a cancelled task left: a server resumed, a throttle lifted

    async def _all(self, run: RunView) -> None:
        assert self.opened is not None
        order = sorted(range(len(self.planned.events)), key=lambda i: self.planned.events[i].at)
        for i in order:
            event, record = self.planned.events[i], self.records[i]
            wait = self.opened + event.at - run.time.monotonic()
            if await disruption_actions.stopped_within(run.background_stop, wait):
                return  # the window closed (or the run stopped) before it
            record["start_s"] = round(run.time.monotonic() - self.opened, 3)
            record["started_at"] = run.time.wall()
            run.event("disruption", f"{event.text}: {event.describe()} begins")
            run.tell(f"event {event.text}: {event.describe()} begins")  # the live line's, and /metrics' dbio_events
            try:
                detail = await self.actions.run(event, self._context(run, i))
                outcome = detail.pop("outcome", "done")
                record.update(detail)
                record["outcome"] = outcome
            except Exception as exc:  # the action failed: the record says so, the run goes on
                record["outcome"] = "failed"
                record["error"] = f"{exc}"
            finally:
                record["end_s"] = round(run.time.monotonic() - self.opened, 3)
                record["ended_at"] = run.time.wall()
            run.event("disruption", f"{event.text}: {event.describe()} ended ({record['outcome']})")
            if record["outcome"] == "failed":
                run.tell(f"the event {event.text} failed: {record.get('error')}")
            else:
                took = record["end_s"] - record["start_s"]
                run.tell(f"event {event.text}: ended ({record['outcome']}) after {took:.1f} s")

    def _context(self, run: RunView, index: int) -> disruption_actions.Context:
        return disruption_actions.Context(
            stop=run.background_stop, time=run.time, index=index + 1, run_id=run.run_id,
            session_pids=[s.pid for r in run.nodes for s in r.sessions if s.pid and r.node.name not in run.lost],
            read_helpers=[pid for m in run.monitoring for pid in m.read_helpers],
            conninfo=next((r.node.conninfo for r in run.nodes if not r.node.read_only), None),
            engine=next((r.node.engine for r in run.nodes if not r.node.read_only), None),
            program=self.planned.programs[index] if index < len(self.planned.programs) else None,
            disks=list(self.planned.disks))

    def record(self) -> list[dict[str, Any]] | None:
        return self.records if self.records else None

