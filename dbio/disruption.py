"""--event AT=ACTION: what a disruption inside the measured window is, parsed (pure).

AT is an offset into the measured window (a duration: 10s, 1m30s). ACTION is one of ACTIONS:
`stall:DURATION` (the sessions' server processes frozen for DURATION), `throttle:IOPS:DURATION` (the server's
reads on the data device limited to IOPS for DURATION; either with `@NODE`: one node's sessions only), the built-in
operations `checkpoint`, `vacuum` (of dbio's tables), `backup:PATH` (an online base backup into PATH, checked as
dbio ops backup's --target) and `index` (dbio's index on its tables re-created), each timed as dbio ops times it,
and `exec:PATH` (a program of the user's, with the external script's trust rules). In a run in parts (--part i/N)
an event runs on one part's side only: part 1's, or the part its AT names (`AT@partK=ACTION`), since the parts
are usually given one dbio.toml and an event run by every part would run N times (of_part). What each does is
jobs/disruptions.py's; what it did to the workload, stats/disruptions.py's."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbio import units

ACTIONS = ("stall:DURATION", "throttle:IOPS:DURATION", "checkpoint", "vacuum", "backup:PATH", "index", "exec:PATH")
FORM = ("AT=ACTION, e.g. 10s=stall:3s, 10s=throttle:500:10s, 5s=checkpoint, 5s=vacuum, 5s=index, "
        "5s=backup:/path/to/empty-dir or 20s=exec:/path/to/program")
OPERATIONS = ("checkpoint", "vacuum", "backup", "index")  # the engine's own maintenance, timed (TimedOperations)
MAX_IOPS = 10**7
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # a node's name as --nodes and result.json's nodes give it
PART = re.compile(r"part(\d{1,4})")  # AT@partK: the part of a run in parts whose side runs it


@dataclass(frozen=True)
class Event:
    """One event: at `at` seconds into the window, `action` (its kind) with its arguments."""

    text: str  # as given
    at: float  # seconds into the measured window
    action: str  # stall | throttle | checkpoint | vacuum | backup | index | exec
    seconds: float | None = None  # how long it lasts, when the action's length is known in advance
    iops: int | None = None  # throttle: the read limit
    path: str | None = None  # exec: the program; backup: its destination
    node: str | None = None  # stall@NODE: the one node whose sessions it acts on (None: every node's)
    part: int | None = None  # AT@partK: the part that runs it in a run in parts (None: part 1)

    @property
    def ends(self) -> float | None:
        """Its planned end, seconds into the window (None: as long as it takes)."""
        return None if self.seconds is None else self.at + self.seconds

    def describe(self) -> str:
        """Its action in words: 'stall 3s', 'throttle to 500 reads/s for 10s', 'checkpoint', 'exec prog'."""
        if self.action == "stall":
            on = f" of {self.node}" if self.node else ""
            return f"stall{on} {units.format_duration(self.seconds or 0)}"
        if self.action == "throttle":
            on = f" of {self.node}" if self.node else ""
            return f"throttle{on} to {self.iops} reads/s for {units.format_duration(self.seconds or 0)}"
        if self.action == "exec":
            return f"exec {self.path}"
        if self.action == "backup":
            return f"backup to {self.path}"
        return self.action


def parse(text: str) -> Event:
    """One AT=ACTION; ValueError with what is wrong (the fix is FORM)."""
    at_text, sep, action = text.partition("=")
    if not sep or not at_text.strip() or not action.strip():
        raise ValueError("is not AT=ACTION")
    at_text, at_part, part_text = at_text.partition("@")
    part = None
    if at_part:
        found = PART.fullmatch(part_text.strip().lower())
        if not found or int(found.group(1)) < 1:
            raise ValueError(f"{part_text.strip() or '(none)'} after AT@ is not a part (AT@partK, K from 1)")
        part = int(found.group(1))
    at = _duration(at_text, "its offset AT")
    kind, _, rest = action.strip().partition(":")
    kind = kind.strip().lower()
    on: str | None = None
    if kind in ("stall", "throttle"):  # ...@NODE: one node's sessions only
        rest, at_node, node = rest.partition("@")
        if at_node and not NODE_NAME.fullmatch(node.strip()):
            raise ValueError(f"{kind}'s node {node.strip() or '(none)'} is not a node's name ({kind}:...@NODE)")
        on = node.strip() if at_node else None
    if kind == "stall":
        return Event(text, at, "stall", seconds=_length(rest, "stall:DURATION"), node=on, part=part)
    if kind == "throttle":
        iops_text, _, length = rest.partition(":")
        try:
            iops = units.parse_int(iops_text)
        except (ValueError, units.UnitError):
            raise ValueError(f"throttle's IOPS {iops_text.strip() or '(none)'} is not a whole number") from None
        if not 1 <= iops <= MAX_IOPS:
            raise ValueError(f"throttle's IOPS {iops} is not between 1 and {MAX_IOPS:,}")
        return Event(text, at, "throttle", seconds=_length(length, "throttle:IOPS:DURATION"), iops=iops, node=on,
                     part=part)
    if kind in ("checkpoint", "vacuum", "index"):
        if rest:
            raise ValueError(f"{kind} takes no argument")
        return Event(text, at, kind, part=part)
    if kind == "backup":
        path = action.strip()[len("backup:"):].strip()
        if not path:
            raise ValueError("backup: names no destination directory")
        return Event(text, at, "backup", path=path, part=part)
    if kind == "exec":
        path = action.strip()[len("exec:"):].strip()
        if not path:
            raise ValueError("exec: names no program")
        return Event(text, at, "exec", path=path, part=part)
    raise ValueError(f"{kind or '(none)'} is not an action: one of {', '.join(ACTIONS)}")


def problems(events: tuple[Event, ...], run_time: float) -> list[str]:
    """What is wrong with the events together in a window of run_time seconds (0: bounded by work_loop): one
    starting at or after the window's end, one whose known length runs past it, two whose known spans overlap
    (their dips could not be told apart)."""
    out = []
    for event in events:
        if run_time > 0 and event.at >= run_time:
            out.append(f"{event.text} starts at or after the window's end ({units.format_duration(run_time)})")
        elif run_time > 0 and event.ends is not None and event.ends > run_time:
            out.append(f"{event.text} ends after the window's end ({units.format_duration(run_time)})")
    backups = [e.path or "" for e in events if e.action == "backup"]
    for path in sorted({p for p in backups if backups.count(p) > 1}):
        out.append(f"two backups to {path}: the second would find it not empty")
    ordered = sorted(events, key=lambda e: e.at)
    for first, second in zip(ordered, ordered[1:]):
        if second.at < (first.ends if first.ends is not None else first.at) or second.at == first.at:
            out.append(f"{second.text} begins before {first.text} ends: their dips could not be told apart")
    return out


def of_part(events: tuple[Event, ...], part: tuple[int, int] | None) -> tuple[Event, ...]:
    """The events this process runs: all of them in a whole run; in part i of N, those whose AT names part i, and
    on part 1 those that name none (every part is usually given the same events: each runs once, on one side)."""
    if part is None:
        return events
    index = part[0]
    return tuple(e for e in events if (e.part or 1) == index)


def part_problems(events: tuple[Event, ...], part: tuple[int, int] | None) -> list[str]:
    """Events naming a part (AT@partK) in a run that is not in parts, or a part the run does not have."""
    out = []
    for event in events:
        if event.part is None:
            continue
        if part is None:
            out.append(f"{event.text} names part {event.part}, but this run is not in parts (--part i/N)")
        elif event.part > part[1]:
            out.append(f"{event.text} names part {event.part}, but the run has {part[1]} parts")
    return out


def _duration(text: str, what: str) -> float:
    try:
        return units.parse_duration(text.strip())
    except (ValueError, units.UnitError):
        raise ValueError(f"{what} {text.strip()} is not a duration such as 10s or 1m30s") from None


def _length(text: str, form: str) -> float:
    if not text.strip():
        raise ValueError(f"gives no DURATION ({form})")
    seconds = _duration(text, "its DURATION")
    if seconds <= 0:
        raise ValueError(f"its DURATION must be more than 0 ({form})")
    return seconds
