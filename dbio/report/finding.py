"""One finding of a report's verdict: its level, code, message and the figure that triggered it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Finding:
    level: str  # invalid | warning | info
    code: str
    message: str
    figure: str | None = None  # the figure that triggered it...
    value: float | None = None  # ...and its value

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
