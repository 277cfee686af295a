"""A hot-spot run's two parts apart (pure): the hot spot's SELECTs, there to be served from memory, and
the rest, which storage serves (SLOB's HOTSPOT_FREQUENCY: every Nth statement goes to a small range).

The loops time the hot spot's SELECTs as a kind of their own ("hot", counted in the SELECTs too) and
count their rows apart (hot_rows); "select" then holds the cold range SELECTs alone. A result made
before, or a run without a hot spot, has no "hot" kind: no figures (None).
"""

from __future__ import annotations

from typing import Any

from dbio.stats.counters import rate


def derive(totals: dict[str, Any], statements: dict[str, Any], reads_per_s: float | None,
           avg_read_us: float | None, seconds: float) -> dict[str, Any] | None:
    """totals: the sessions' counts; statements: latency.statements (per kind: count, mean_us, p99_us);
    reads_per_s and avg_read_us: the engine's physical reads, which are the cold part's (the hot spot's
    rows come from the cache once the warm-up has read them)."""
    hot = statements.get("hot")
    if not hot or not hot.get("count") or "hot_rows" not in totals:
        return None
    cold_selects = statements.get("select") or {}
    all_statements = sum(totals.get(k) or 0 for k in ("selects", "updates", "scans"))
    hot_count, hot_rows = hot["count"], totals["hot_rows"]
    cold_rows = (totals.get("rows") or 0) - hot_rows
    return {
        "hot": {
            "statements": hot_count,
            "statements_per_s": rate(hot_count, seconds),
            "share_pct": 100.0 * hot_count / all_statements if all_statements else None,
            "mean_us": hot.get("mean_us"), "p99_us": hot.get("p99_us"),
            "rows": hot_rows, "rows_per_s": rate(hot_rows, seconds),
        },
        # everything but the hot spot's SELECTs; its latency is the cold range SELECTs' (UPDATEs and
        # scans keep their own rows in the statement latency table)
        "cold": {
            "statements": all_statements - hot_count,
            "statements_per_s": rate(all_statements - hot_count, seconds),
            "selects": cold_selects.get("count", 0),
            "mean_us": cold_selects.get("mean_us"), "p99_us": cold_selects.get("p99_us"),
            "rows": cold_rows, "rows_per_s": rate(cold_rows, seconds),
            "reads_per_s": reads_per_s, "avg_read_us": avg_read_us,
        },
    }


def line(parts: dict[str, Any] | None) -> str | None:
    """The report's one line: the memory part, then the storage part (None without a hot spot)."""
    if not parts:
        return None
    hot, cold = parts["hot"], parts["cold"]
    share = "" if hot.get("share_pct") is None else f"{hot['share_pct']:.0f}% of statements, "
    text = f"Hot spot: {share}avg {_us(hot['mean_us'])} (memory)"
    if cold["mean_us"] is None:
        return text + "; no cold SELECT ran"
    text += f"; cold rows: avg {_us(cold['mean_us'])} a SELECT, p99 {_us(cold['p99_us'])}"
    if cold.get("reads_per_s") is not None:
        read = "" if cold.get("avg_read_us") is None else f" at {_us(cold['avg_read_us'])}"
        text += f", {cold['reads_per_s']:,.0f} reads/s{read}"
    return text


def _us(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f} us" if v >= 10 else f"{v:,.1f} us"
