"""Time series, one row per interval, from consecutive samples and the sessions' counts (pure).

Sample k is taken half a second after second k of the run (counted from the common start); the sessions'
own counts are keyed by the interval their slice ended in. The engine's counters gain a slice's work as it
ends (stats/published.py): an engine rate divides the work they gained by the span of work it was done in,
from one sample's work point to the next's, and statements per second the slices' statements by the same
span; an interval in which no span is known has no engine figure and says why ("unpublished"). The devices'
and the CPU's figures, which move as the work goes on, are over their readings' own times. A sample that was
not taken on time is a gap row, never an interpolation. Records of an older dbio (which do not say what their
counters hold) keep the span they were read with (elapsed).
"""

from __future__ import annotations

from typing import Any, Iterable

from dbio.collect import procfs
from dbio.stats import histogram, host_cpu, published
from dbio.stats.counters import delta, get, ratio
from dbio.stats.resets import without

MiB = 1 << 20
# An interval whose two readings are closer together than this share of the seconds it covers is
# partial: the end reading of a run is taken when the sessions stop, off the sampling grid (half
# an interval after the last grid sample when a run ends on time, less when it is stopped).
PARTIAL_SHARE = 0.9
ENGINE_RATES = ("reads_per_s", "read_mib_per_s", "writes_per_s", "write_mib_per_s", "wal_mib_per_s", "avg_read_us")


def per_interval(samples: Iterable[dict[str, Any]], statements: dict[int, dict[str, Any]], bounds: list[float],
                 start: float, *, io_timing: bool = True, cores: int | None = None) -> list[dict[str, Any]]:
    """One row per pair of consecutive samples; samples may be a stream (an 8-hour run's file)."""
    rows = []
    prev = None
    spans = published.Spans(start)
    for cur in samples:
        if cur.get("missing") or (prev is not None and prev.get("missing") and cur.get("engine")):
            rows.append(gap_row(cur, start, "late" if cur.get("missing") else "no baseline"))
            spans.reset()  # nothing is counted across a gap: the row after it is one too
            if cur.get("engine"):
                spans.next(cur)
            prev = cur
            continue
        if not cur.get("engine"):
            continue
        span = spans.next(cur)
        if prev is None or not prev.get("engine"):
            prev = cur
            continue
        if not span.legacy:
            rows.append(_row(prev, cur, span, statements, bounds, start, io_timing, cores))
            prev = cur
            continue
        seconds = elapsed(prev, cur)
        if seconds <= 0:
            continue
        # a counter that went back since the previous reading (a node's, stats/resets.py): no rate of it
        d = without(delta(prev["engine"], cur["engine"]), cur.get("reset_counters") or [])
        row = _head(cur, start, seconds)
        row.update(_engine(d, seconds, io_timing))
        prev_os, cur_os = prev.get("os") or {}, cur.get("os") or {}
        # /proc counters move continuously: their rates use the readings' own times, not the grid.
        os_seconds = (cur_os["t"] - prev_os["t"]) if prev_os.get("t") and cur_os.get("t") else seconds
        row.update(_os(prev_os, cur_os, os_seconds if os_seconds > 0 else seconds, cores))
        row.update(_statements(_combine(_spanned(statements, prev, cur)), bounds, seconds))
        _tail(row, cur, d, seconds)
        rows.append(row)
        prev = cur
    return rows


def _row(prev: dict[str, Any], cur: dict[str, Any], span: published.Span, statements: dict[int, dict[str, Any]],
         bounds: list[float], start: float, io_timing: bool, cores: int | None) -> dict[str, Any]:
    """The row of two samples that say what their counters hold: the engine's rates and the statements per second
    over the span of the work the counters gained (span: since its sample, over its seconds), or none and why."""
    since, seconds = span.since, span.seconds
    row = _head(cur, start, seconds)
    if since is not None and seconds:
        row.update(_engine(without(delta(since["engine"], cur["engine"]), sorted(span.resets)), seconds, io_timing))
        counted = _spanned(statements, since, cur)
        if span.to is not None:  # where its seconds end (since the start): the sessions' work point, not the sample's
            row["work_to"] = round(span.to - start, 3)
    else:
        row.update(dict.fromkeys(ENGINE_RATES))
        if span.unpublished:
            row["unpublished"] = span.unpublished
        counted = _spanned(statements, prev, cur)  # their latencies are the interval's, their rate has no span
    readings = _time(cur) - _time(prev)  # the engine snapshots' own times: what moves as the work goes on
    prev_os, cur_os = prev.get("os") or {}, cur.get("os") or {}
    os_seconds = (cur_os["t"] - prev_os["t"]) if prev_os.get("t") and cur_os.get("t") else readings
    if max(os_seconds, readings) > 0:
        row.update(_os(prev_os, cur_os, os_seconds if os_seconds > 0 else readings, cores))
    row.update(_statements(_combine(counted), bounds, seconds if since is not None else None))
    # a standby's receive position moves as the WAL comes: over the readings' own times
    _tail(row, cur, without(delta(prev["engine"], cur["engine"]), cur.get("reset_counters") or []), readings)
    return row


def _head(cur: dict[str, Any], start: float, seconds: float | None) -> dict[str, Any]:
    row: dict[str, Any] = {"k": cur["k"], "t": cur["engine"]["t"], "since_start": round(cur["engine"]["t"] - start, 3),
                           "phase": cur.get("phase")}
    if seconds:
        row["seconds"] = round(seconds, 6)
    return row


def _engine(d: dict[str, Any], seconds: float, io_timing: bool) -> dict[str, Any]:
    return {
        "reads_per_s": _per(get(d, "data", "reads"), seconds),
        "read_mib_per_s": _per(_mib(get(d, "data", "read_bytes")), seconds),
        "writes_per_s": _per(get(d, "data", "writes"), seconds),
        "write_mib_per_s": _per(_mib(get(d, "data", "write_bytes")), seconds),
        "wal_mib_per_s": _per(_mib(get(d, "wal", "bytes")), seconds),
        "avg_read_us": _us(get(d, "client", "read_time_ms"), get(d, "client", "reads")) if io_timing else None,
    }


def _spanned(statements: dict[int, dict[str, Any]], since: dict[str, Any], cur: dict[str, Any]) -> list[dict]:
    """The sessions' counts of every interval after since's up to cur's (a failed sample makes a row span two)."""
    spanned = [statements[k] for k in sorted(statements) if since["k"] < k <= cur["k"]] \
        if isinstance(since.get("k"), int) and isinstance(cur.get("k"), int) else \
        [statements.get(k)] if isinstance(k := cur.get("k"), int) else []
    return [t for t in spanned if t]


def _tail(row: dict[str, Any], cur: dict[str, Any], d: dict[str, Any], seconds: float) -> None:
    """What the sample says besides rates: its top wait, a standby's receiving and lag, other sessions."""
    waits = cur.get("waits") or {}
    if waits:
        row["top_wait"] = max(waits.items(), key=lambda kv: kv[1])[0]
    if isinstance(cur["engine"].get("replication"), dict):  # a standby: what it received, how far it lags
        row["wal_received_mib_per_s"] = _per(_mib(get(d, "replication", "wal_received_bytes")), seconds) \
            if seconds > 0 else None
        lag = get(cur["engine"], "gauges", "replay_lag_bytes")
        row["replay_lag_mib"] = None if lag is None else lag / (1 << 20)
        row["replay_lag_seconds"] = get(cur["engine"], "gauges", "replay_lag_seconds")
    others = get(cur["engine"], "gauges", "other_sessions_active")
    if others:  # client sessions not dbio's, busy when the interval's sample was taken
        row["other_sessions_active"] = others
        row["other_session_names"] = get(cur["engine"], "gauges", "other_session_names") or []


def _time(sample: dict[str, Any]) -> float:
    return float(sample["engine"]["t"])


def elapsed(prev: dict[str, Any], cur: dict[str, Any]) -> float:
    """Real seconds of work between two samples, never the nominal interval: the sessions publish
    their counters as each slice ends, so the work two readings differ by runs between the latest
    slice ends each had seen ("published_to", server clock). Without them (nothing published in
    between, or a record of an older dbio), between the two engine snapshots."""
    if prev.get("published_to") is not None and cur.get("published_to") is not None:
        span = cur["published_to"] - prev["published_to"]
        if span > 0:
            return span
    return cur["engine"]["t"] - prev["engine"]["t"]


def gap_row(sample: dict[str, Any], start: float, why: str) -> dict[str, Any]:
    """The row of an interval with no figure: its sample was not taken on time ("late"), or the
    sample before it was not ("no baseline"). Rates are absent, so charts show a gap."""
    row = {"k": sample.get("k"), "t": sample["t"], "since_start": round(sample["t"] - start, 3),
           "phase": sample.get("phase"), "missing": why}
    if why == "late" and sample.get("answered") is not None:
        row["late_by"] = round(sample["answered"] - sample["t"], 3)  # how long after its due time the answer came
    return row


def _os(prev: dict[str, Any], cur: dict[str, Any], seconds: float, cores: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if prev.get("stat") and cur.get("stat"):
        cpu = host_cpu.shares(delta(prev["stat"], cur["stat"]), seconds, cores)
        if cpu:
            out.update({f"host_{k}": cpu[k] for k in ("busy_pct", "user_pct", "system_pct", "unsampled_pct",
                                                       "iowait_pct", "steal_pct")})
    if prev.get("disks") and cur.get("disks") and not procfs.unread_over(prev, cur):  # a part's sum is no figure
        reads = sum((delta(prev["disks"].get(n), v) or {}).get("reads") or 0 for n, v in cur["disks"].items())
        out["device_reads_per_s"] = reads / seconds
    if prev.get("session_cpu_total") is not None and cur.get("session_cpu_total") is not None:
        out["db_cpu_cores"] = max(0.0, cur["session_cpu_total"] - prev["session_cpu_total"]) / seconds
    return out


def _combine(tallies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Sparse per-interval tallies added up (pure)."""
    if len(tallies) <= 1:
        return tallies[0] if tallies else None
    out: dict[str, Any] = {k: sum(t.get(k, 0) for t in tallies) for k in ("selects", "updates", "scans")}
    parts = [t["select"] for t in tallies if t.get("select")]
    if parts:
        hist: dict[str, int] = {}
        for part in parts:
            for index, value in part["hist"].items():
                hist[index] = hist.get(index, 0) + value
        out["select"] = {"count": sum(p["count"] for p in parts), "sum_us": sum(p["sum_us"] for p in parts),
                         "max_us": max(p["max_us"] for p in parts), "hist": hist}
    return out


def _statements(tally: dict[str, Any] | None, bounds: list[float], seconds: float | None) -> dict[str, Any]:
    """Statements per second over the span of the work (None: no span known, no rate), the SELECTs' latency."""
    rate: dict[str, Any] = {} if seconds is None else {"statements_per_s": 0.0}
    if not tally:
        return rate
    count = sum(tally.get(k, 0) for k in ("selects", "updates", "scans"))
    out: dict[str, Any] = {} if seconds is None else {"statements_per_s": count / seconds}
    select = tally.get("select")
    if select:
        counts = [0] * (len(bounds) + 1)
        for index, value in select["hist"].items():
            counts[int(index)] = value
        out["select_avg_us"] = select["sum_us"] / select["count"]
        out["select_p99_us"] = histogram.percentile(counts, bounds, 0.99, select["max_us"])
    return out


def _per(value: float | None, seconds: float) -> float | None:
    return None if value is None else value / seconds


def _mib(value: float | None) -> float | None:
    return None if value is None else value / MiB


def _us(time_ms: float | None, count: float | None) -> float | None:
    r = ratio(time_ms, count)
    return None if r is None else r * 1000.0


def labelled(rows: list[dict[str, Any]], warmup: float) -> list[dict[str, Any]]:
    """Rows with the interval each covers, in seconds after the end of warm-up (the README's
    alignment: the first measured interval of 1 s is 0-1 s), and whether it is partial.

    A partial interval keeps its rates (each over the real time it covers) but is left out of the
    series statistics, the stability figures and the charts: half a second of a run's wind-down
    is not comparable with whole intervals, and its /proc rates over so few clock ticks jump.
    """
    out = []
    prev_k, prev_t = 0, 0.0  # the first sample (k 0) is taken at the common start
    for row in rows:
        k, t = row.get("k"), row.get("since_start")
        if not isinstance(k, int) or t is None:
            out.append({**row, "from_s": None, "to_s": None, "partial": False})
            continue
        covers, elapsed = k - prev_k, t - prev_t
        out.append({**row, "from_s": prev_k - warmup, "to_s": k - warmup,
                    "partial": covers > 0 and elapsed < PARTIAL_SHARE * covers})
        prev_k, prev_t = k, t
    return out


def measured(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The whole intervals of the measured window (labelled rows)."""
    return [r for r in rows if r.get("phase") == "measured" and not r.get("partial")]


def summary(rows: list[dict[str, Any]], key: str) -> dict[str, float | None]:
    """Mean, standard deviation, coefficient of variation, min and max of one series (whole
    intervals of the measured window)."""
    values = [r[key] for r in measured(rows) if r.get(key) is not None]
    if not values:
        return {"n": 0, "mean": None, "stdev": None, "cv_pct": None, "min": None, "max": None}
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    stdev = var ** 0.5
    return {"n": n, "mean": mean, "stdev": stdev, "cv_pct": None if not mean else 100.0 * stdev / mean,
            "min": min(values), "max": max(values)}
