"""Every figure dbio reports, read by name (pure): a run window's figures, those of each member
of a group (statement kind, process kind, device, layout place) and a maintenance operation's.

The figures are declared once, by group: what a figure is (its label, unit, how two values of it
compare, whether more of it is better) in stats/figure_record.py; a run window's in run_figures.py;
the groups' in group_figures.py; an operation's in operation_figures.py. Reports, verdicts,
comparisons and sweeps read them through this module, never by path nor from those modules, so a
figure is moved, renamed or derived differently in one place. Accessors take a figures mapping
(the `figures` of a result today; a node's or the total's once a run has several nodes), never
the whole document; `figures_of` is the one place that knows where a result keeps them.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from dbio.stats.counters import get
from dbio.stats.figure_record import DIFFERENCE, POINTS, RATIO, Change, Figure, UnknownFigure
from dbio.stats.group_figures import (BACKEND_FIGURES, DEVICE_FIGURES, DISRUPTION_FIGURES,
                                      DISRUPTION_FINE_FIGURES, LAYOUT_FIGURES,
                                      STATEMENT_FIGURES, STATEMENT_LABELS, by_backend, devices, devices_unread,
                                      disruptions, histogram, statement_latency)
from dbio.stats.operation_figures import OPS_COMMON, OPS_FIGURES, OPS_OWN
from dbio.stats.run_figures import (BY_NAME, DEVICE_MATCH, FIGURES, SCAN_MAJORITY, cpu_wait_in_read_parts,
                                    scans_dominate, workers_wait_alone_in_read)

# The names readers use, wherever they are declared: this module is their one door.
__all__ = [
    "BACKEND_FIGURES", "DEVICE_FIGURES", "DEVICE_MATCH", "DISRUPTION_FIGURES", "DISRUPTION_FINE_FIGURES",
    "DIFFERENCE", "FIGURES",
    "LAYOUT_FIGURES", "OPS_FIGURES",
    "POINTS", "RATIO", "SCAN_MAJORITY", "STATEMENT_FIGURES", "STATEMENT_LABELS", "Change", "Figure",
    "UnknownFigure", "by_backend", "by_series", "cpu_wait_in_read_parts", "devices", "devices_unread",
    "disruptions", "figure",
    "figures",
    "figures_of", "histogram", "host_cpu_measured", "hotspot", "measured", "member", "ops_figure", "ops_figures",
    "scans_dominate", "single_reads", "statement_latency", "value", "values", "workers_wait_alone_in_read",
]


def figure(name: str) -> Figure:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownFigure(f"unknown figure {name!r}: the catalogue (dbio/stats/run_figures.py) declares none") \
            from None


def figures(*names: str) -> tuple[Figure, ...]:
    return tuple(figure(n) for n in names)


def value(f: Mapping[str, Any] | None, name: str) -> Any:
    return figure(name).value(f)


def values(f: Mapping[str, Any] | None, names: Iterable[str]) -> dict[str, Any]:
    return {n: value(f, n) for n in names}


def by_series(key: str) -> Figure:
    """The figure a per-interval series key carries."""
    for f in FIGURES:
        if f.series == key:
            return f
    raise UnknownFigure(f"no figure has the series {key!r}")


def figures_of(doc: Mapping[str, Any] | None) -> dict[str, Any]:
    """The figures of a whole run (the total, once a run has several nodes)."""
    return dict((doc or {}).get("figures") or {})


def measured(f: Mapping[str, Any] | None) -> bool:
    """Whether the figures cover a measured window at all."""
    return bool(value(f, "window_seconds"))


def member(group: tuple[Figure, ...], name: str) -> Figure:
    """One of a group's figures (STATEMENT_FIGURES, BACKEND_FIGURES, DEVICE_FIGURES)."""
    for f in group:
        if f.name == name:
            return f
    raise UnknownFigure(f"unknown figure {name!r} of a group: the catalogue declares none")


def single_reads(f: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Single reads' latency distribution from the read probe: its figures, or only why there are none
    (stats/single_reads.py); None when the result has no probe."""
    return get(f or {}, "latency", "single_reads")


def host_cpu_measured(f: Mapping[str, Any] | None) -> bool:
    """Whether the window has the host's CPU shares (two /proc/stat readings)."""
    return bool(get(f or {}, "cpu", "host"))


def hotspot(f: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A hot-spot run's two parts, hot and cold (stats/hotspot.py); None without a hot spot."""
    return get(f or {}, "hotspot")


_OPS_BY_NAME = {f.name: f for f in OPS_FIGURES}


def ops_figure(name: str) -> Figure:
    try:
        return _OPS_BY_NAME[name]
    except KeyError:
        raise UnknownFigure(f"unknown operation figure {name!r}: the catalogue declares none") from None


def ops_figures(operation: str) -> tuple[Figure, ...]:
    """The figures an operation's report shows: the common ones, then its own."""
    return tuple(ops_figure(n) for n in (*OPS_COMMON, *OPS_OWN.get(operation, ())))
