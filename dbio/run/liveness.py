"""Whether each node still answers: a node that answers none of dbio's calls for SILENT_AFTER seconds
while one waits on it is silent (its server frozen, or its host unreachable), and the run loses it.

A server that stops (dies) closes its connections and is found by the failed call; a frozen one
(SIGSTOP, a hung host, a cut network) accepts on its socket and never answers, so nothing fails and
every wait on it would last for ever. Every call dbio makes on a node during a run is asked through
`asking`, which notes when the node answered; the runner's watch loses a node silent this long and
abandons its connections, which ends every wait on it at once.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from dbio.run.clock import REAL_TIME, TimeSource

# A live server answers dbio several times a second during a run (the wait sampler asks twice a second by
# default, the monitor each second, each session at each slice's end), and its statistics views answer from memory
# even while its storage stalls: only a server that does not run at all is silent this long. Longer than
# the pauses a live server makes (a frozen server's stall of a few seconds stays a stall, tests/integration/
# test_stall.py freezes one for 4 s), short enough that a run with a frozen node ends seconds after its deadline.
SILENT_AFTER = 8.0


class Liveness:
    """When each node last answered, and since when calls have been waiting on it."""

    def __init__(self, time: TimeSource = REAL_TIME) -> None:
        self.time = time  # the run's (clock.py)
        self.heard: dict[str, float] = {}  # node -> monotonic time of its last answer
        self.waiting: dict[str, int] = {}  # node -> calls in flight
        self.since: dict[str, float] = {}  # node -> when its calls in flight began to wait (none before)
        self.held: dict[str, int] = {}  # node -> calls waiting at a barrier dbio holds on purpose
        self.released: set[str] = set()  # nodes whose barrier was opened: a call held there waits on the node

    @contextmanager
    def asking(self, node: str, held: bool = False) -> Iterator[None]:
        """Around one call on a node: an answer (the call returned) is heard; a call that failed is not.
        held: a call that waits at the node's start barrier, which is no silence until the barrier opens."""
        held = held and node not in self.released
        if held:
            self.held[node] = self.held.get(node, 0) + 1
        else:
            self._wait(node, 1)
        try:
            yield
            self.heard[node] = self.time.monotonic()
        finally:
            if held and node not in self.released:
                self.held[node] -= 1
            else:
                self.waiting[node] -= 1

    def answered(self, node: str) -> None:
        """The node answered within a longer call (a step polling it from a thread)."""
        self.heard[node] = self.time.monotonic()

    def _wait(self, node: str, calls: int) -> None:
        if not self.waiting.get(node):
            self.since[node] = self.time.monotonic()
        self.waiting[node] = self.waiting.get(node, 0) + calls

    def restart(self, nodes: list[str]) -> None:
        """The nodes' barriers opened: the calls held there wait on them from now (silence counts from now)."""
        now = self.time.monotonic()
        for node in nodes:
            self.heard[node] = now
            if node not in self.released:
                self.released.add(node)
                self._wait(node, self.held.pop(node, 0))

    def quiet_for(self, node: str, now: float | None = None) -> float:
        """Seconds since the node last answered, or since a call began to wait on it if later."""
        now = self.time.monotonic() if now is None else now
        return now - max(self.heard.get(node, float("-inf")), self.since.get(node, now))

    def silent(self, now: float | None = None) -> list[str]:
        """The nodes that have had a call waiting, and answered nothing, for SILENT_AFTER seconds."""
        now = self.time.monotonic() if now is None else now
        return [node for node, count in self.waiting.items() if count > 0 and self.quiet_for(node, now) > SILENT_AFTER]
