"""From a validated config and a setup to what the run asks of the engine (pure)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterator

from dbio.config import WorkloadConfig
from dbio import rate_schedule as rates
from dbio.stats import histogram

SLICE_SECONDS = 1.0
NEVER = 1 << 62  # a period in iterations that no run reaches: the control row's "off"
FILL_BYTES = {"LITE": 256, "HEAVY": 2432}  # SLOB: 2 vs 19 columns of 128 bytes


@dataclass(frozen=True)
class Grid:
    """Seconds since the common start at which intervals end: every `interval` seconds, aligned on
    the end of warm-up so that no interval mixes warm-up and measured seconds (pure)."""

    warmup: int
    interval: int

    def key(self, boundary: int) -> int:
        """The end of the interval a slice ending at this (whole-second) boundary belongs to."""
        if boundary <= self.warmup:
            return self.warmup - ((self.warmup - boundary) // self.interval) * self.interval
        return self.warmup + math.ceil((boundary - self.warmup) / self.interval) * self.interval

    def points(self) -> Iterator[int]:
        """Every interval end from the first second on, in order."""
        k = self.warmup % self.interval or self.interval
        while True:
            yield k
            k += self.interval


@dataclass(frozen=True)
class Control:
    """What a run asks of every session, as the engine's run_control row holds it: a field per column the plan
    sets (the engine's control_tables.sql; tests/unit/test_control_columns.py checks the two agree). The row's
    run_id, client and instants are the run's, added as it starts."""

    slice_seconds: float
    scale: int
    work_unit: int
    update_work_unit: int | None
    update_pct: int
    scan_pct: int
    scan_workers: int
    fill_bytes: int
    hot_lo: int
    hot_rows: int
    hot_every: int
    hot_schema_every: int
    think_every: int
    think_min: float
    think_max: float
    bounds_us: tuple[float, ...]
    rate_per_s: float | None
    rate_uniform: bool
    latency_limit_us: float

    def row(self) -> dict[str, Any]:
        """The columns by name, as the engine's statements bind them (the bounds a list: an array)."""
        return {**asdict(self), "bounds_us": list(self.bounds_us)}


@dataclass(frozen=True)
class RunPlan:
    sessions: int
    schema_of: tuple[int, ...]  # schema index of each session (1-based sessions -> index i-1)
    warmup: float  # rounded up to whole slices, so the window opens on a slice boundary
    run_time: float  # 0 = work_loop only
    work_loop: int  # iterations per session, in the window or in all (work_loop_scope); 0 = none
    control: Control  # the run_control row
    bounds_us: tuple[float, ...]
    interval: int = 1  # seconds per interval of the time series
    start: float | None = None  # epoch of the common start when agreed in advance (--start-at less warm-up)
    work_loop_scope: str = "window"  # session: work_loop counts the warm-up's iterations too (SLOB's meaning)

    @property
    def grid(self) -> Grid:
        return Grid(int(self.warmup), self.interval)


def make_plan(w: WorkloadConfig, interval: float = 1.0, window_at: float | None = None, parts: int = 1) -> RunPlan:
    """window_at: the instant the measured window opens (epoch), when agreed in advance; parts: how many parts
    the run has (--part i/N), each taking an equal share of --rate."""
    sessions = w.sessions
    schema_of = tuple((i // w.threads_per_schema) + 1 for i in range(sessions))
    warmup = math.ceil(w.warmup / SLICE_SECONDS) * SLICE_SECONDS
    bounds = histogram.bounds_us()
    hot_rows = w.hotspot_blocks if w.hotspot else 0
    control = Control(
        slice_seconds=SLICE_SECONDS,
        scale=w.scale,
        work_unit=w.work_unit,
        update_work_unit=w.update_rows,
        update_pct=w.update_pct,
        scan_pct=w.scan_pct,
        scan_workers=w.scan_workers,
        fill_bytes=FILL_BYTES[w.redo_stress],
        hot_lo=w.hotspot_offset_blocks + 1,
        hot_rows=hot_rows,
        hot_every=w.hotspot_frequency if w.hotspot else NEVER,
        hot_schema_every=w.hot_schema_frequency or NEVER,
        think_every=w.think_time_frequency or NEVER,
        think_min=w.think_time_min,
        think_max=w.think_time_max,
        bounds_us=tuple(bounds),
        # --rate: each session's share (run/rate.py), its schedule and the latency past which a statement is late
        rate_per_s=None if w.rate is None else rates.per_session(w.rate, sessions, parts),
        rate_uniform=w.rate_schedule == "uniform",
        latency_limit_us=w.latency_limit * 1e6,
    )
    start = None if window_at is None else window_at - warmup
    return RunPlan(sessions, schema_of, warmup, w.run_time, w.work_loop, control, tuple(bounds), int(interval), start,
                   w.work_loop_scope)
