"""--event AT=ACTION as a listener of the run (run/listeners.py): at AT seconds into the measured window it starts
its action, records its start and end on the run's clock and what it did, as the result's "disruptions" (one
record per event, in order); stats/disruptions.py measures what each did to the workload.

What an action needs is checked before anything is made (check): a stall, the sessions' server processes on this
host (a thread-per-session server's, MariaDB's, is its one process: the whole server is stopped, and its record
says so); a throttle, root, the cgroup v1 blkio or v2 io controller and the data directory's disk; a checkpoint, a
vacuum or an index, an engine that times its maintenance (and a loaded data set of dbio's, whose tables and index
alone they touch); a backup, the embedded instance running with WAL that allows one and a destination checked as
dbio ops backup checks its --target (new or empty, ours, outside the data, room for the data set); an exec:, a
program trusted as --external-script is. Every action ends at its end, at the window's close, or when the run is stopped
(its background stops: a signal, a failure): a stalled server is always resumed, a throttle always lifted, a
program always stopped (disruption_actions.py); an operation of the engine's runs to its own end."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from dbio import disruption, parts
from dbio.config import Config
from dbio.engines.base import timed_operations
from dbio.errors import UsageError
from dbio import target as targets
from dbio.jobs import backup_destination, blkio_throttle, disruption_actions, disruption_samples, external_script
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
    destinations: tuple[Path | None, ...] = ()  # each backup's destination, checked (None: another action)
    operations: Any = None  # the writable node's timed operations (engines' Operations), for vacuum, backup, index
    node_disks: tuple[tuple[str, tuple[str, ...]], ...] = ()  # throttle@NODE: that node's disks, by its name


def check(config: Config, nodes: list[Node], storage: dict[str, Any]) -> Planned:
    """The events of config (already parsed once: config_checks), each refused in one line where its action cannot
    be done on these nodes, before anything is made."""
    events = disruption.of_part(tuple(disruption.parse(text) for text in config.run.event or ()),
                                part_of(config))  # in a run in parts: this part's side's only
    if not events:
        return Planned()
    kinds = {event.action for event in events}
    names = [n.name for n in nodes]
    for event in events:
        if event.node is not None and event.node not in names:
            raise UsageError(f"--event {event.text}: the run has no node {event.node}",
                             f"give one of its nodes: {', '.join(names)}")
    if kinds & {"stall", "throttle"}:
        acted_on = {e.node for e in events if e.action in ("stall", "throttle")}
        remote = [n.name for n in nodes if not (n.info.caps.local and n.info.caps.has_backend_cpu)
                  and (None in acted_on or n.name in acted_on)]
        if remote:
            action = "stall" if "stall" in kinds else "throttle"
            raise UsageError(f"--event {action}: the sessions of {', '.join(remote)} have no server "
                             "processes on this host to act on",
                             "run it on the server's host, or give another event")
    timed = kinds & set(disruption.OPERATIONS)
    writable = [n for n in nodes if not n.read_only]
    if timed:
        action = sorted(timed)[0]
        if not writable:
            raise UsageError(f"--event {action}: every node is read-only (a standby)", "give another event")
        timeless = [n.name for n in writable if timed_operations(n.engine) is None]
        if timeless:
            raise UsageError(f"--event {action}: the {nodes[0].engine.name} engine of {', '.join(timeless)} has no "
                             f"timed {action}", "give another event")
    operations = None
    destinations: tuple[Path | None, ...] = ()
    if timed - {"checkpoint"}:
        operations, destinations = _operations(config, writable[0], events)
    disks: list[str] = []
    if any(e.action == "throttle" and e.node is None for e in events):
        data = storage.get("data_directory") or {}
        disks = blkio_throttle.check(list(data.get("diskstats_devices") or []))
    node_disks = tuple((n.name, tuple(blkio_throttle.check(sorted(n.devices)))) for n in nodes
                       if any(e.action == "throttle" and e.node == n.name for e in events))
    programs = tuple(external_script.check(event.path, f"--event {event.text}:") if event.action == "exec" else None
                     for event in events)
    return Planned(events, programs, tuple(disks), destinations, operations, node_disks)


def _operations(config: Config, node: Node, events: tuple[disruption.Event, ...]) -> tuple[Any, tuple[Path | None,
                                                                                                       ...]]:
    """The writable node's operations, with what vacuum, index and backup need of it checked: a data set of
    dbio's with its index, and for a backup the embedded instance, WAL that allows an online backup (a run cannot
    restart the server for one) and each destination as dbio ops backup checks its --target."""
    backups = [e for e in events if e.action == "backup"]
    if backups and not config.connection.embedded:
        raise UsageError(f"--event {backups[0].text}: a backup is taken of the embedded instance, not of --dsn",
                         "run it without --dsn, or give another event")
    timed = timed_operations(node.engine)
    assert timed is not None  # check() refused an engine without
    instance = targets.instance_for(config, lambda _: None) if config.connection.embedded else None
    operations = timed.operations(node.conninfo, instance, instance_config=config.instance,
                                  sessions=config.workload.sessions, dbname=config.connection.dbname,
                                  notify=lambda _: None)
    destinations = [_destination(e) if e.action == "backup" else None for e in events]
    conn = operations.connect()
    try:
        if {"vacuum", "index"} & {e.action for e in events}:
            operations.tables(conn)  # refuses where no data set of dbio's, or its index, is there
        if backups:
            refusal = operations.backup_refusal(conn)
            if refusal:
                raise UsageError(f"--event {backups[0].text}: {refusal}",
                                 "run with --wal-level replica, or give another event")
            needed = operations.dataset_bytes(conn)
            inside = [p for ps in operations.places(conn, node.info.caps.data_directory if node.info.caps.local
                                                     else None).values() for p in ps]
            for event, destination in zip(events, destinations):
                if destination is not None:
                    with _said_as(event):
                        backup_destination.check_room(destination, needed, inside)
    finally:
        conn.close()
    return operations, tuple(destinations)


class Disruptions(Listener):
    """Each planned event, at its offset into the window, one after the other, in a task bound to the run."""

    key = KEY
    title = "the events"

    def __init__(self, planned: Planned, directory: Path, part: tuple[int, int] | None = None):
        self.planned, self.directory = planned, directory
        self.records: list[dict[str, Any]] = [
            {"event": e.text, "action": e.action, "describe": e.describe(), "at_s": e.at, "seconds_planned": e.seconds,
             **({"node": e.node} if e.node else {}), **({"part": part[0]} if part else {}),  # AT@partK: its part's
             "start_s": None, "end_s": None, "outcome": "not reached"}
            for e in planned.events]
        self.opened: float | None = None  # the window's opening, the run's monotonic clock
        self.actions = disruption_actions.Actions(directory)
        events = planned.events
        order = sorted(range(len(events)), key=lambda i: events[i].at)
        # a short event's fine samples (disruption_samples.py), from before it to its recovery or the next event
        self.fine = disruption_samples.FineSamples([(i, events[i].at) for i in order
                                                    if disruption_samples.sampled(events[i].seconds)
                                                    and events[i].node is None])  # @NODE: its node's series alone
        for i, j in zip(order, order[1:]):
            self.fine.until[i] = events[j].at
        self._groups: tuple[tuple[int, ...], list[int]] = ((), [])

    def phase(self, phase: Phase, run: RunView) -> None:
        if phase is Phase.WINDOW and self.planned.events:
            self.opened = run.time.monotonic()
            run.disrupting(self._kinds(), ())
            run.spawn(self, self._all(run))
            if self.fine.wanted:
                opened = self.opened
                run.spawn(self, disruption_samples.sample(self.fine, lambda: run.time.monotonic() - opened,
                                                          lambda: self._pids(run, None), run.background_stop))
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
            run.disrupting(self._kinds(), ((i + 1, event.text.partition("=")[2].strip()),))
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
                self.fine.ended[i] = record["end_s"]
                record["ended_at"] = run.time.wall()
                run.disrupting(self._kinds(), ())  # cancelled too: no live line or metric says it goes on
            run.event("disruption", f"{event.text}: {event.describe()} ended ({record['outcome']})")
            if record["outcome"] == "failed":
                run.tell(f"the event {event.text} failed: {record.get('error')}")
            else:
                took = record["end_s"] - record["start_s"]
                run.tell(f"event {event.text}: ended ({record['outcome']}) after {took:.1f} s")

    def _kinds(self) -> tuple[str, ...]:
        return tuple(sorted({e.action for e in self.planned.events}))

    def _pids(self, run: RunView, node: str | None) -> list[int]:
        """The processes reading for the sessions (of one node, or of every node): the fine samples' (the whole
        run's, as the run's series is), and a throttle's."""
        ids = (*self._sessions(run, node), *self._helpers(run, node))
        if self._groups[0] != ids:  # each id's process looked up once while the run's processes stay the same
            self._groups = (ids, disruption_actions.thread_groups(list(ids)))
        return self._groups[1]

    @staticmethod
    def _sessions(run: RunView, node: str | None) -> list[int]:
        return [s.pid for r in run.nodes for s in r.sessions if s.pid and r.node.name not in run.lost
                and node in (None, r.node.name)]

    @staticmethod
    def _helpers(run: RunView, node: str | None) -> list[int]:
        return [pid for m in run.monitoring for pid in m.read_helpers if node in (None, m.probe.name)]

    def _context(self, run: RunView, index: int) -> disruption_actions.Context:
        node = self.planned.events[index].node  # stall@NODE: that node's sessions only
        return disruption_actions.Context(
            stop=run.background_stop, time=run.time, index=index + 1, run_id=run.run_id,
            session_pids=self._sessions(run, node), read_helpers=self._helpers(run, node),
            conninfo=next((r.node.conninfo for r in run.nodes if not r.node.read_only), None),
            engine=next((r.node.engine for r in run.nodes if not r.node.read_only), None),
            program=self.planned.programs[index] if index < len(self.planned.programs) else None,
            disks=list(dict(self.planned.node_disks).get(node, ()) if node else self.planned.disks),
            operations=self.planned.operations,
            destination=self.planned.destinations[index] if index < len(self.planned.destinations) else None)

    def record(self) -> list[dict[str, Any]] | None:
        for i, samples in self.fine.samples.items():  # the fine samples, beside the event's own record
            self.records[i]["fine_samples"] = {"seconds": disruption_samples.FINE_SECONDS,
                                               "source": disruption_samples.SOURCE, "samples": samples}
        return self.records if self.records else None



@contextmanager
def _said_as(event: disruption.Event) -> Iterator[None]:
    """dbio ops backup's refusal of its --target, said as the event's destination."""
    try:
        yield
    except UsageError as exc:
        raise UsageError(exc.message.replace("--target ", f"--event {event.text}: the destination ", 1),
                         exc.hint) from None


def part_of(config: Config) -> tuple[int, int] | None:
    """This process's part of a run in parts (i, N), or None (a whole run)."""
    return parts.parse(config.run.part) if config.run.part else None


def left_to_other_parts(config: Config) -> list[str]:
    """In a run in parts, a line for each event this part leaves to another (part 1, or the one its AT names)."""
    part = part_of(config)
    if part is None:
        return []
    return [f"--event {e.text}: run by part {e.part or 1} of {part[1]}, not by this part ({part[0]}): "
            "a run in parts runs each event once (AT@partK=ACTION gives it to part K)"
            for e in (disruption.parse(t) for t in config.run.event or ()) if (e.part or 1) != part[0]]


def check_destinations(config: Config) -> None:
    """Each backup event's destination as dbio ops backup checks its --target before it reaches a server."""
    for event in disruption.of_part(tuple(disruption.parse(t) for t in config.run.event or ()), part_of(config)):
        if event.action == "backup":
            _destination(event)


def check_sweep(configs: list[Config], *, repeats: bool) -> None:
    """A sweep's events, every step's, before its first step: each backup's destination as dbio ops backup checks
    its --target, a backup of the embedded instance only, and no destination given to two steps (the first step's
    backup is kept there: the next would find it not empty). repeats: the sweep runs a step's values again (its
    rounds, or the sessions it adds itself), so a backup step would back up into its own destination twice."""
    used: dict[Path, int] = {}
    for step, config in enumerate(configs, 1):
        check_destinations(config)
        for event in disruption.of_part(tuple(disruption.parse(t) for t in config.run.event or ()),
                                        part_of(config)):
            if event.action != "backup":
                continue
            if not config.connection.embedded:
                raise UsageError(f"--event {event.text}: a backup is taken of the embedded instance, not of --dsn",
                                 "run it without --dsn, or give another event")
            where = _destination(event).resolve()
            if where in used or repeats:
                again = f"step {used[where]} and step {step}" if where in used else "each of its repeated steps"
                raise UsageError(f"--event {event.text}: {again} would back up into {where}, and the second would "
                                 "find it not empty", "give each step a destination of its own")
            used[where] = step


def _destination(event: disruption.Event) -> Path:
    with _said_as(event):
        return backup_destination.check_shape(Path(event.path or ""))
