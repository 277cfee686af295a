"""What each --event did to the workload (pure): figures.disruptions, one record per event, from the run's series
and the events' records (jobs/disruptions.py: when each began and ended, seconds into the measured window).

Every interval's rate is over the span of work it was measured over (series.py: a row's "seconds" up to its
"work_to", or its "since_start" in a result of an older dbio); an interval without a figure (a statement in
progress in every session: a stall) is covered by the next row's span, and a gap stays a gap. So the figures
are built on spans, never on nominal seconds:

- the before window: up to BEFORE_SECONDS of spans that end before the event begins (and after the previous
  event's end), at least BEFORE_SPANS of them; their rate (work over their seconds) is `before`, and their noise
  the spread of their rates (a sample standard deviation), at least NOISE_FLOOR of the rate;
- the floor: the lowest span's rate from the event's start until it is recovered from (or the window's end);
- seconds below 90%: the seconds of the spans in that stretch whose rate is below 90% of before;
- recovery: from the event's end to the start of the first of RECOVERY_SPANS consecutive spans all within the
  noise of before (at or above before - 2 x noise); none ("not recovered by the window's end") when the window
  ends (or the next event begins) first;
- lost: the area between before and the curve from the event's start to its recovery (or the window's end);
- the SELECTs' p99: the median of the before spans' own p99 against the highest of the stretch's.
Reads (the engine's reads/s), then writes the same where the run writes. resolution_seconds: the longest span in
the stretch, how finely the curve was seen there.

The engine's counters move only as the sessions' slices end, once a second: a dip of a second or two is seen
finer from a short event's fine samples (jobs/disruption_samples.py: every quarter second, the bytes the
processes reading for the sessions had read since the sample before, on the run's clock). `fine` holds the same
figures over those spans (the rates in bytes/s: the floor and time below as shares of their own before), its
`resolution_seconds` the longest of them; `resolution` says which was used where: the top level's figures are the
engine's over its intervals, fine's the samples'."""

from __future__ import annotations

import statistics
from typing import Any, Iterable, Mapping, Sequence

BEFORE_SECONDS = 10.0
BEFORE_SPANS = 3
RECOVERY_SPANS = 3
NOISE_FLOOR = 0.01  # of before: the least noise a steady state is given (a synthetic one has none)
BELOW = 0.9
ADJACENT = 0.5  # seconds between one span's end and the next's start that still make them consecutive (a gap row
# leaves a whole interval between them; a span ends at its sessions' work point, a little off its row's time)
NOT_RECOVERED = "not recovered by the window's end"
TOO_LITTLE_BEFORE = f"fewer than {BEFORE_SPANS} intervals of steady state before it"
DURING_GAP = "no interval with a figure while it lasted: its seconds are a gap in the series (samples not taken)"
NO_STRETCH = "no interval with a figure from its start to the window's end (or the next event)"


def spans(rows: Iterable[Mapping[str, Any]], window_offset: float, key: str) -> list[dict[str, Any]]:
    """The measured rows with a value of key, as spans in seconds into the window: from, to, seconds, value."""
    out = []
    for row in rows:
        value, seconds = row.get(key), row.get("seconds")
        end = row.get("work_to", row.get("since_start"))  # its seconds end at the sessions' work point
        if row.get("phase") != "measured" or row.get("missing") or value is None or not seconds or end is None:
            continue
        to = float(end) - window_offset
        out.append({"from": to - float(seconds), "to": to, "seconds": float(seconds), "value": float(value),
                    "p99": row.get("select_p99_us")})
    return out


def disruptions(events: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], window_offset: float,
                window_seconds: float | None, *, writes: bool = False) -> list[dict[str, Any]]:
    """Each event's record (in the events' order), its reads' dip and, with writes, its writes'."""
    reads, written = spans(rows, window_offset, "reads_per_s"), spans(rows, window_offset, "writes_per_s")
    ordered = sorted((e for e in events if e.get("start_s") is not None), key=lambda e: float(e["start_s"]))
    out = []
    for event in events:
        record: dict[str, Any] = {"event": event.get("event"), "action": event.get("action"),
                                  "start_s": event.get("start_s"), "end_s": event.get("end_s"),
                                  "outcome": event.get("outcome")}
        if event.get("start_s") is None or event.get("end_s") is None:
            out.append({**record, "absent": "it did not happen inside the window"})
            continue
        i = ordered.index(event)
        after_previous = float(ordered[i - 1]["end_s"]) if i > 0 else None  # the first: the window's measured rows
        until = float(ordered[i + 1]["start_s"]) if i + 1 < len(ordered) else window_seconds
        bounds = (float(event["start_s"]), float(event["end_s"]), after_previous, until)
        record.update(_prefixed("reads", dip(reads, *bounds)))
        if writes:
            record["writes"] = dip(written, *bounds)
        if isinstance(event.get("fine_samples"), Mapping):
            record["fine"] = fine(event["fine_samples"], *bounds)
        record["resolution"] = {"interval_seconds": record.get("resolution_seconds"),
                                "fine_seconds": (record.get("fine") or {}).get("resolution_seconds")}
        out.append(record)
    return out


def fine_spans(samples: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """Fine samples ([t, bytes since the previous sample, or None: a series begins]) as spans, each from the sample
    before it to its own, its rate over their real seconds."""
    out = []
    for (t0, _), (t1, since) in zip(samples, samples[1:]):
        if since is None or t1 <= t0:
            continue
        out.append({"from": float(t0), "to": float(t1), "seconds": float(t1) - float(t0),
                    "value": float(since) / (float(t1) - float(t0)), "p99": None})
    return out


def fine(record: Mapping[str, Any], start: float, end: float, after: float | None,
         until: float | None) -> dict[str, Any]:
    """An event's dip over its fine samples (record: {seconds, source, samples}), the bytes read as its rates."""
    spans = fine_spans(record.get("samples") or [])
    head = {"source": record.get("source"), "step_seconds": record.get("seconds")}
    if not spans:
        return {**head, "absent": "no fine sample was taken (no process reading for the sessions could be read)"}
    found = dip(spans, start, end, after, until)
    if found.get("before_per_s") == 0:  # their reads not through read calls (io_uring): the samples see none
        return {**head, "absent": "the processes read nothing through read calls before it: no fine figure"}
    found = {k: v for k, v in found.items() if k not in ("before_select_p99_us", "during_select_p99_us")}
    return {**head, **_prefixed("bytes", found)}


def dip(series: list[dict[str, Any]], start: float, end: float, after: float | None,
        until: float | None) -> dict[str, Any]:
    """One series' dip around an event from start to end (seconds into the window), its before window after
    `after` (None: from the window's first interval) and its stretch up to `until` (None: the series' end)."""
    before = [s for s in series if s["to"] <= start + 1e-9 and (after is None or s["from"] >= after - 1e-9)]
    before = [s for s in before if s["to"] > start - BEFORE_SECONDS]
    if len(before) < BEFORE_SPANS:
        return {"before": None, "absent": TOO_LITTLE_BEFORE}
    seconds = sum(s["seconds"] for s in before)
    level = sum(s["value"] * s["seconds"] for s in before) / seconds
    noise = max(statistics.stdev([s["value"] for s in before]), NOISE_FLOOR * level)
    band = level - 2 * noise
    stretch = [s for s in series if s["to"] > start + 1e-9 and (until is None or s["from"] < until - 1e-9)]
    if not stretch:
        return {"before": _before(before, level, noise), "before_per_s": round(level, 3), "absent": NO_STRETCH}
    recovered_at = _recovered(stretch, end, band)
    if recovered_at is not None:
        stretch = [s for s in stretch if s["from"] < recovered_at - 1e-9]
        if not stretch:  # back at once after it, and nothing measured while it lasted: its seconds are a gap
            return {"before": _before(before, level, noise), "before_per_s": round(level, 3),
                    "recovery_seconds": round(max(0.0, recovered_at - end), 3), "absent": DURING_GAP}
    low = min(stretch, key=lambda s: s["value"]) if stretch else None
    lost = sum((level - s["value"]) * _overlap(s, start, recovered_at) for s in stretch)
    p99s = [s["p99"] for s in before if s["p99"] is not None]
    during = [s["p99"] for s in stretch if s["p99"] is not None]
    return {
        "before": _before(before, level, noise),
        "before_per_s": round(level, 3),
        "floor_per_s": None if low is None else round(low["value"], 3),
        "floor_pct": None if low is None or not level else round(100.0 * low["value"] / level, 1),
        "seconds_below_90pct": round(sum(_overlap(s, start, None) for s in stretch if s["value"] < BELOW * level), 3),
        "recovery_seconds": None if recovered_at is None else round(max(0.0, recovered_at - end), 3),
        **({} if recovered_at is not None else {"not_recovered": NOT_RECOVERED}),
        "lost": round(lost, 1),
        "before_select_p99_us": round(statistics.median(p99s), 1) if p99s else None,
        "during_select_p99_us": round(max(during), 1) if during else None,
        "resolution_seconds": round(max((s["seconds"] for s in stretch), default=0.0), 3) or None,
    }


def _before(before: list[dict[str, Any]], level: float, noise: float) -> dict[str, Any]:
    return {"from_s": round(before[0]["from"], 3), "to_s": round(before[-1]["to"], 3), "intervals": len(before),
            "per_s": round(level, 3), "noise_per_s": round(noise, 3)}


def _recovered(stretch: list[dict[str, Any]], end: float, band: float) -> float | None:
    """Where the first of RECOVERY_SPANS consecutive spans, each ending after the event's end and within the
    band, begins (seconds into the window); None when the stretch holds no such run."""
    run: list[dict[str, Any]] = []
    for s in stretch:
        if s["to"] > end + 1e-9 and s["value"] >= band and (not run or abs(s["from"] - run[-1]["to"]) < ADJACENT):
            run.append(s)
            if len(run) == RECOVERY_SPANS:
                return run[0]["from"]
        else:
            run = [s] if s["to"] > end + 1e-9 and s["value"] >= band else []
    return None


def _overlap(span: Mapping[str, Any], start: float, until: float | None) -> float:
    """The seconds of span from start to until (None: its end)."""
    return max(0.0, min(span["to"], until if until is not None else span["to"]) - max(span["from"], start))


def _prefixed(what: str, figures: dict[str, Any]) -> dict[str, Any]:
    """A reads' dip's figures under the names result.json gives them: before_reads_per_s, floor_reads_per_s,
    reads_lost, ... (the rest as they are)."""
    names = {"before_per_s": f"before_{what}_per_s", "floor_per_s": f"floor_{what}_per_s", "lost": f"{what}_lost",
             "before": "before"}
    return {names.get(k, k): v for k, v in figures.items()}
