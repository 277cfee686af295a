"""Single reads' latency from the read probes' lookups (run/read_probe.py): a distribution (pure).

Each node's probe kept a histogram of its single-block reads over the run's bounds (stats/histogram.py);
they add up. The figure is present only when some single read was timed; otherwise it is absent with
why (no probe, a probe that could not time reads, or lookups that never read exactly one block).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dbio.stats import histogram

PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99_9", 0.999))
FAST_US = 20.0  # a read faster than this came from memory (the OS page cache), not from a device


def dense(sparse: Mapping[str, int], buckets: int) -> list[int]:
    counts = [0] * buckets
    for index, value in sparse.items():
        counts[int(index)] += int(value)
    return counts


def derive(probes: Mapping[str, Mapping[str, Any]] | None, bounds: Sequence[float],
           window_reads: float | None = None) -> dict[str, Any]:
    """The window's single-read distribution from each node's probe record; window_reads: every read the
    engine counted in the window (the probe's own share of them is said)."""
    if not probes:
        return {"why": "no read probe ran (a run recorded before dbio had one, or none was asked)"}
    buckets = len(bounds) + 1
    counts = [0] * buckets
    keys = ("lookups", "single", "cached", "multi", "untimed", "blocks_read", "errors")
    sums = {k: 0 for k in keys}
    sum_us, max_us = 0.0, 0.0
    whys = []
    for name, probe in probes.items():
        histogram.add(counts, dense(probe.get("counts") or {}, buckets))
        for k in keys:
            sums[k] += int(probe.get(k) or 0)
        sum_us += float(probe.get("sum_us") or 0.0)
        max_us = max(max_us, float(probe.get("max_us") or 0.0))
        if probe.get("why"):
            whys.append(probe["why"] if len(probes) == 1 else f"{name}: {probe['why']}")
    first = next(iter(probes.values()))
    how = {"method": first.get("method"), "rate_per_s": first.get("rate_per_s"), "nodes": len(probes),
           **{k: sums[k] for k in keys}}
    if window_reads:
        how["probe_share_pct"] = 100.0 * sums["blocks_read"] / window_reads
    n = histogram.total(counts)
    if n == 0:
        why = "; ".join(whys) or (f"none of the probe's {sums['lookups']:,} lookups read exactly one block "
                                  f"({sums['cached']:,} found it cached, {sums['multi']:,} read more than one)")
        return {"why": why, **how}
    out: dict[str, Any] = {"count": n, "mean_us": sum_us / n, "max_us": max_us, **how}
    for name, q in PERCENTILES:
        out[f"{name}_us"] = histogram.percentile(counts, bounds, q, max_us)
    out["fast_pct"] = 100.0 * sum(c for i, c in enumerate(counts) if i < len(bounds) and bounds[i] <= FAST_US) / n
    out["awr_buckets"] = [{"bucket": label, "count": c, "pct": 100.0 * c / n}
                          for label, c in histogram.awr_buckets(counts, bounds)]
    out["counts"] = {str(i): c for i, c in enumerate(counts) if c}
    if whys:
        out["partial"] = "; ".join(whys)
    return out
