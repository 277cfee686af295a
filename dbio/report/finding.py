"""One finding of a report's verdict: its level, code, message and the figure that triggered it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dbio.stats.catalogue import figure


@dataclass(frozen=True)
class Finding:
    level: str  # invalid | warning | info
    code: str
    message: str
    figure: str | None = None  # the figure that triggered it...
    value: float | None = None  # ...and its value

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def found(level: str, code: str, message: str, name: str, at: float | None) -> Finding:
    """A finding triggered by a catalogued figure: it names the figure as findings always have."""
    return Finding(level, code, message, figure(name).ref, at)
