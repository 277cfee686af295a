"""What became of a run, and why: its status changes in one place (RunStatus.end), and the first cause wins, so
that a run a signal interrupted stays interrupted whatever its stopping then brings (a session cancelled, a
failed clean-up), and a failed one keeps the failure that stopped it."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Status(enum.StrEnum):
    COMPLETE = "complete"  # it ran to its end
    INTERRUPTED = "interrupted"  # a signal, or a stop before its start
    FAILED = "failed"  # a session, the servers, the results directory, the disk or a vital listener
    LOST = "lost"  # its dbio process died: its result rebuilt from its samples (abandoned.py), never a live run's


@dataclass
class RunStatus:
    status: Status = Status.COMPLETE
    reason: str | None = None

    @property
    def complete(self) -> bool:
        return self.status is Status.COMPLETE

    def end(self, status: Status, reason: str) -> bool:
        """The run ends with this status for this reason, unless an earlier cause ended it already (then nothing
        changes); True when this one is the cause."""
        if not self.complete:
            return False
        self.status, self.reason = status, reason
        return True
