"""What a sample's engine counters hold of the sessions' work, and over what span of it the work two samples
differ by was done (pure): the span every per-interval engine rate divides by (stats/series.py, stats/live.py).

The sessions publish their work as each slice ends: their statements always, and on PostgreSQL the server's I/O
counters too (a backend's pg_stat_io reaches the view as it goes idle; a parallel worker's as it exits). A slice
lasts a second, or as long as its last statement: a scan of a large table, a lock wait, several. Each sample
records the latest slice end the sessions had reported ("published_to", the server's clock) and the instant
before which every session's work was in the counters ("published_by_all": the earliest call in progress was
sent then, or the sample's own time when none was). When the two are within ALIGNED_WITHIN of each other,
every session had published up to about one instant, the sample's work point: its counters hold the sessions'
work up to there and none after it. When they are further apart, one session's statement was in progress while
others published past it: the counters hold each session's work up to an instant of its own, and no span is
theirs.

So an engine rate is the work the counters gained between two work points over the seconds between them.
Between two samples in which no session published (a statement in progress in every one), the counters gained
only what is not the sessions' (the read probe's lookups, the background writers', a parallel worker's as it
exits): the span stays open, counted from the first sample at its work point, and the interval has no engine
figure of its own. A figure is true or absent: where no span is known (a sample without a work point, or the
first after one), there is none."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The sessions' publications (their latest slice end, their earliest call in progress) within this many seconds
# of each other count as one instant: a tenth of the one-second interval, the share of it series.PARTIAL_SHARE
# leaves; it also holds the two clocks' difference (published_to is the server's, published_by_all this host's
# plus the offset measured at the release, to within its round trip).
ALIGNED_WITHIN = 0.1
# Why an interval has no engine figure (a series row's "unpublished"):
IN_PROGRESS = "in progress"  # no session published in it: a statement in progress in every one (or none running)
IN_PART = "in part"  # some sessions published, others' statements were in progress: no span is the counters'


def says(sample: dict[str, Any]) -> bool:
    """Whether a record says what its counters hold (records of an older dbio do not)."""
    return isinstance(sample.get("published_by_all"), (int, float)) and "published_to" in sample


def work_point(sample: dict[str, Any], start: float | None) -> float | None:
    """The instant up to which a sample's engine counters hold all of the sessions' work and none after it: its
    latest slice end when no call in progress was sent more than ALIGNED_WITHIN before it (the start when no slice
    had ended since: the counters hold none of the sessions' work); None when the sessions published at instants
    further apart (or none had, and the start is not known)."""
    to = sample.get("published_to")
    if not isinstance(to, (int, float)):
        return start
    if to - sample["published_by_all"] > ALIGNED_WITHIN:
        return None
    return float(to) if start is None else max(float(to), start)


def at_rest(sample: dict[str, Any]) -> bool:
    """A reading taken with every session at rest, whose counters hold all of their work up to it: the run's first
    record (k 0, read just before the release: nothing ran since) or one the window takes itself (no k: the live
    view's window begin, every session waiting for it to open)."""
    return sample.get("k") in (0, None) and not says(sample)


def nothing_published(prev: dict[str, Any], cur: dict[str, Any]) -> bool | None:
    """Whether no session published between two samples (no slice ended: the latest slice end is the same); None
    when the records do not say."""
    if not (says(prev) and says(cur)):
        return None
    return prev.get("published_to") == cur.get("published_to")


@dataclass(frozen=True)
class Span:
    """The work a sample's engine counters gained: counted from `since` (a sample), over `seconds`; or no figure
    (since None), and why (`unpublished`, or None where the samples do not make an interval)."""

    since: dict[str, Any] | None
    seconds: float | None
    unpublished: str | None = None
    resets: frozenset = frozenset()  # counters that went back since `since` (stats/resets.py): no rate of them
    legacy: bool = False  # the records do not say what their counters hold: the readings' span (series.elapsed)
    to: float | None = None  # the work point it ends at (server clock): its seconds run up to there


@dataclass
class Spans:
    """Consecutive samples' spans, fed one sample at a time in order (a run's samples file, the live view's).

    start: when the sessions' work began (the run's release, server clock); None: the time of the first sample if
    it is a reading at rest (the live view's first reading), else not known."""

    start: float | None = None
    last: dict[str, Any] | None = None
    since: dict[str, Any] | None = None  # the sample the next figure is counted from, at its work point
    point: float | None = None
    resets: set = field(default_factory=set)

    def next(self, cur: dict[str, Any]) -> Span:
        prev, self.last = self.last, cur
        went_back = set(cur.get("reset_counters") or [])
        if self.start is None and prev is None and at_rest(cur):
            self.start = self._rest_point(cur)
        if not says(cur) or (prev is not None and not says(prev) and not at_rest(prev)):
            # an older dbio's records: what they were always read with; a reading at rest begins a span
            self._begin(cur, self._rest_point(cur) if at_rest(cur) else None)
            return Span(prev, None if prev is None else _legacy_seconds(prev, cur), None, frozenset(went_back),
                        legacy=True)
        point = work_point(cur, self.start)
        if prev is None:
            self._begin(cur, point)
            return Span(None, None)
        self.resets |= went_back
        if nothing_published(prev, cur):
            return Span(None, None, IN_PROGRESS)
        if point is None or self.since is None or self.point is None:
            self._begin(cur, point)
            return Span(None, None, IN_PART)
        if point <= self.point:  # no slice ended past the span's beginning (a reading at rest began it)
            return Span(None, None, IN_PROGRESS)
        span = Span(self.since, point - self.point, None, frozenset(self.resets), to=point)
        self._begin(cur, point)
        return span

    def _rest_point(self, sample: dict[str, Any]) -> float:
        """Where a reading at rest begins the sessions' work: the run's first record says the start; a window's own
        reading, its time."""
        to = sample.get("published_to")
        if not isinstance(to, (int, float)):
            return _time(sample)
        return float(to) if self.start is None else max(float(to), self.start)

    def _begin(self, sample: dict[str, Any], point: float | None) -> None:
        """The next figure is counted from this sample, at its work point (None: from the next that has one)."""
        self.since, self.point = (sample, point) if point is not None else (None, None)
        self.resets = set()

    def reset(self) -> None:
        """A sample not taken: what follows is counted from the next sample on, never across the gap."""
        self.last = self.since = self.point = None
        self.resets = set()


def _time(sample: dict[str, Any]) -> float:
    return float((sample.get("engine") or {}).get("t") or sample.get("t") or 0.0)


def _legacy_seconds(prev: dict[str, Any], cur: dict[str, Any]) -> float | None:
    """Records that do not say what their counters hold: between the latest slice ends each had seen, else
    between the two engine snapshots (what series.elapsed has always given them)."""
    if isinstance(prev.get("published_to"), (int, float)) and isinstance(cur.get("published_to"), (int, float)):
        span = cur["published_to"] - prev["published_to"]
        if span > 0:
            return span
    seconds = _time(cur) - _time(prev)
    return seconds if seconds > 0 else None
