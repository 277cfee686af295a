"""What a run leaves for its result: the outcome (RunOutcome), made of the records the run kept as it went: its
status, its start's facts, its window's readings, its nodes lost, each listener's record; a run whose dbio process
died has one rebuilt from its samples (abandoned.py). assemble.py makes result.json of it and the manifest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dbio.run.run_status import RunStatus
from dbio.run.sessions import Clock, Session
from dbio.run.slice_totals import Tally


@dataclass
class StartFacts:
    """How the sessions were connected and released together."""

    connect_seconds: float = 0.0  # from the first connection to every session connected
    start_seconds: float = 0.0  # from the first connection to the common start
    offset: float = 0.0  # the first node's clock - this host's, as measured at the start (0.0 before it)
    released_late: float | None = None  # seconds after an agreed start (--start-at) the release came
    start_agreed: str | None = None  # "start_at" (--start-at), "nodes" (chosen in advance), None: at the release
    node_starts: dict[str, dict[str, Any]] = field(default_factory=dict)  # several nodes: offset, skew (agreed_start)
    # the deadline and the window's planned opening on this host's monotonic clock (the server's, moved by offset)
    deadline_at: float | None = None
    window_open_at: float | None = None


@dataclass
class WindowReadings:
    """The window's two readings (see readings.py) and when they were taken (server clock, epoch seconds)."""

    begin: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    opened: float | None = None  # when its begin reading was taken (the start itself, without warm-up)
    closed: float | None = None  # its end reading's (or the last of the nodes' when every node was lost)


@dataclass
class RunOutcome:
    status: RunStatus
    run_id: int
    clock: Clock
    start: StartFacts | None  # None: not known (a run rebuilt from its samples)
    window: WindowReadings
    sessions: list[Session]
    totals: Tally  # each interval's own counts are in the samples file, not in memory
    plans: dict[str, Any]  # the first node's
    events: list[dict[str, Any]] = field(default_factory=list)
    lost_nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodes whose server stopped (node_loss.py)
    monitor_errors: list[str] = field(default_factory=list)
    samples_written: int = 0
    signal: str | None = None  # the signal that interrupted the run (SIGINT, SIGTERM)
    records: dict[str, Any] = field(default_factory=dict)  # each listener's record, by its key (listeners.py)
