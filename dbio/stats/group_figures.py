"""Figures kept per member of a group (pure): per statement kind, per server process kind, per
block device and per place of a layout; each member carries the same figures. Also where a window's
figures keep each group.
"""

from __future__ import annotations

from typing import Any, Mapping

from dbio.stats.counters import get
from dbio.stats.figure_record import DIFFERENCE, LOWER, POINTS, Figure

# How reports name each statement kind (run/tally.KINDS).
STATEMENT_LABELS = {"select": "SELECT (range)", "update": "UPDATE+COMMIT", "scan": "scan table",
                    "hot": "SELECT (hot spot)"}


def _member(name: str, label: str, unit: str, kind: str, **more: Any) -> Figure:
    return Figure(name, label, unit, kind, (name,), **more)


STATEMENT_FIGURES = (
    _member("count", "Count", "statements", "count", compare=DIFFERENCE),
    _member("mean_us", "Mean", "us", "us", **LOWER),
    _member("p50_us", "p50", "us", "us", **LOWER),
    _member("p90_us", "p90", "us", "us", **LOWER),
    _member("p99_us", "p99", "us", "us", **LOWER),
    _member("p99_9_us", "p99.9", "us", "us", **LOWER),
    _member("max_us", "Max", "us", "us", **LOWER),
)
BACKEND_FIGURES = (
    _member("read_requests_per_s", "Read req/s", "requests/s", "rate"),
    _member("read_mib_per_s", "Read MiB/s", "MiB/s", "rate"),
    _member("write_requests_per_s", "Write req/s", "requests/s", "rate"),
    _member("write_mib_per_s", "Write MiB/s", "MiB/s", "rate"),
    _member("wal_write_requests_per_s", "WAL write req/s", "requests/s", "rate"),
    _member("wal_write_mib_per_s", "WAL write MiB/s", "MiB/s", "rate"),
)
DEVICE_FIGURES = (
    _member("reads_per_s", "Reads/s", "reads/s", "rate"),
    _member("read_mib_per_s", "Read MiB/s", "MiB/s", "rate"),
    _member("avg_read_us", "Avg read", "us", "us", **LOWER),
    _member("writes_per_s", "Writes/s", "writes/s", "rate"),
    _member("write_mib_per_s", "Write MiB/s", "MiB/s", "rate"),
    _member("avg_write_us", "Avg write", "us", "us", **LOWER),
    _member("utilization_pct", "Util", "%", "pct", compare=POINTS),
    _member("avg_queue", "Queue", "requests", "rate"),
)


def _avg_write_kib(d: Mapping[str, Any]) -> float | None:
    mib, writes = d.get("write_mib_per_s"), d.get("writes_per_s")
    return None if mib is None or not writes else 1024.0 * mib / writes


# The figures of one place of a layout (data, WAL, a tablespace): its device's, and the WAL's
# average write size (group commit and full-page images make it grow).
LAYOUT_FIGURES = (
    *DEVICE_FIGURES[:5],
    Figure("avg_write_kib", "Avg write size", "KiB", "rate", derive=_avg_write_kib,
           how="the device's write MiB/s / its writes/s (/proc/diskstats)"),
    *DEVICE_FIGURES[5:],
)


def statement_latency(f: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Per statement kind (select, update, scan): count, mean, percentiles, max (us), histogram."""
    return get(f or {}, "latency", "statements") or {}


def histogram(f: Mapping[str, Any] | None, kind: str) -> list[dict[str, Any]] | None:
    """A statement kind's latency histogram buckets (label, count, %), when it ran."""
    return get(statement_latency(f), kind, "awr_buckets")


def by_backend(f: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """I/O rates per server process kind, when the engine counts them."""
    return get(f or {}, "io_profile", "by_backend") or {}


def devices(f: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """/proc/diskstats figures per block device under the data directory."""
    return dict((f or {}).get("devices") or {})


def devices_unread(f: Mapping[str, Any] | None) -> dict[str, str]:
    """The devices watched whose figures are absent, and why (a /proc/diskstats line dbio could not read)."""
    return {str(name): str(why) for name, why in ((f or {}).get("devices_unread") or {}).items()}


# Each --event's (stats/disruptions.py): one record per event in figures.disruptions, its reads' figures at its top
# level, an update run's writes' under "writes" (named without "reads_": before_per_s, floor_per_s, lost, ...).
DISRUPTION_FIGURES = (
    _member("before_reads_per_s", "Before", "reads/s", "rate",
            how="the engine's reads/s over up to 10 s of spans before the event"),
    _member("floor_reads_per_s", "Floor", "reads/s", "rate", how="the lowest span's reads/s from the event's start"),
    _member("floor_pct", "Floor %", "% of before", "pct", compare=POINTS),
    _member("seconds_below_90pct", "Below 90%", "s", "seconds", compare=DIFFERENCE, **LOWER),
    _member("recovery_seconds", "Recovery", "s", "seconds", compare=DIFFERENCE, **LOWER,
            how="from the event's end to 3 spans in a row within the before window's noise (none: not recovered)"),
    _member("reads_lost", "Reads lost", "reads", "count", compare=DIFFERENCE, **LOWER,
            how="the area between the before rate and the curve, to the recovery"),
    _member("before_select_p99_us", "p99 before", "us", "us", **LOWER),
    _member("during_select_p99_us", "p99 during", "us", "us", **LOWER),
)


# The same from an event's fine samples (stats/disruptions.py `fine`: a quarter second apart, the bytes the sessions'
# processes read), where the engine's one-second intervals are too coarse for a short event.
DISRUPTION_FINE_FIGURES = (
    Figure("fine_floor_pct", "Fine floor %", "% of before", "pct", ("fine", "floor_pct"), compare=POINTS,
           how="the lowest fine span's bytes read/s from the event's start, as a share of the fine before window's"),
    Figure("fine_seconds_below_90pct", "Fine below 90%", "s", "seconds", ("fine", "seconds_below_90pct"),
           compare=DIFFERENCE, **LOWER),
    Figure("fine_recovery_seconds", "Fine recovery", "s", "seconds", ("fine", "recovery_seconds"),
           compare=DIFFERENCE, **LOWER),
    Figure("fine_resolution_seconds", "Fine resolution", "s", "seconds", ("fine", "resolution_seconds"),
           how="the longest fine span in the stretch: how finely the dip was seen"),
)


def disruptions(f: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Each --event's record of what it did to the workload (stats/disruptions.py), in the events' order."""
    return [dict(d) for d in (f or {}).get("disruptions") or [] if isinstance(d, Mapping)]
