"""What a figure is (pure): the record every declared figure is, and how two values of one compare.

The figures themselves are declared by group (stats/run_figures.py, group_figures.py,
operation_figures.py) and read by name through stats/catalogue.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from dbio.stats.compare import Delta
from dbio.stats.counters import get

# How two values of a figure are compared: the change a reader weighs first.
RATIO = "ratio"  # relative change, % of the first value (throughput, latency, costs)
DIFFERENCE = "difference"  # other - first, in the figure's own unit (counts, sizes)
POINTS = "points"  # a percentage: other - first, in percentage points


class UnknownFigure(LookupError):
    """A figure name the catalogue does not declare: a programming error, so it fails loudly."""


# kind: how a report formats a value (report/fmt.py's kinds): rate, us, pct, count, seconds, text.
@dataclass(frozen=True)
class Figure:
    name: str
    label: str
    unit: str
    kind: str  # how reports format it (report/fmt.py)
    path: tuple[str, ...] = ()  # where it lives in a figures mapping...
    derive: Callable[[Mapping[str, Any]], Any] | None = None  # ...or how it is computed from others there
    how: str = ""  # what it measures and how it is derived, for a reader
    higher_is_better: bool | None = None  # None: neither (a description of the load, not a score)
    compare: str = RATIO
    series: str | None = None  # the per-interval row's key for the same figure (stats/series.py)
    noise: bool = False  # a difference is judged against the run's interval-to-interval noise in `series`
    short: str | None = None  # a column heading where space is scarce
    phrase: str | None = None  # how the one-line headline says it ({} is the value)
    section: str = ""  # the part of the figures a derived figure belongs with (cpu, io_profile, ...)

    @property
    def ref(self) -> str:
        """Its dotted name in findings: the path, or its section and name for a derived figure."""
        return ".".join(self.path) if self.path else ".".join(p for p in (self.section, self.name) if p)

    def value(self, figures: Mapping[str, Any] | None) -> Any:
        """The figure in one figures mapping; None when it was not measured."""
        figures = figures or {}
        if self.derive is not None:
            return self.derive(figures)
        return get(figures, *self.path)

    def change(self, base: Mapping[str, Any] | None, other: Mapping[str, Any] | None) -> Change:
        return Change(self, self.value(base), self.value(other))


@dataclass(frozen=True)
class Change:
    """One figure in two figures mappings: the difference, and whether it is an improvement."""

    figure: Figure
    base: Any
    other: Any

    @property
    def absolute(self) -> float | None:
        return Delta(self.base, self.other).absolute

    @property
    def pct(self) -> float | None:
        return Delta(self.base, self.other).pct

    @property
    def absolute_kind(self) -> str:
        """How the absolute difference is formatted: percentage points for a percentage."""
        return "pct" if self.figure.compare == POINTS else self.figure.kind

    @property
    def headline(self) -> float | None:
        """The difference the figure is compared by (see RATIO, DIFFERENCE, POINTS)."""
        return self.pct if self.figure.compare == RATIO else self.absolute

    @property
    def better(self) -> bool | None:
        """True when the other value improves on the first, False when it is worse, None when the
        figure is neither better nor worse for being larger, or nothing changed or was measured."""
        diff = self.absolute
        if diff is None or diff == 0 or self.figure.higher_is_better is None:
            return None
        return (diff > 0) == self.figure.higher_is_better


LOWER: dict[str, Any] = {"higher_is_better": False}
HIGHER: dict[str, Any] = {"higher_is_better": True}


def at_path(name: str, path: str, label: str, unit: str, kind: str, how: str = "", **more: Any) -> Figure:
    """A figure kept at a dotted path of a figures mapping."""
    return Figure(name, label, unit, kind, tuple(path.split(".")), how=how, **more)
