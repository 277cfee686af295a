"""--target-iops, --latency-slo and --price (or dbio.toml's [cost] table), checked before anything
runs: the request a sweep keeps in sweep.json and its report (report/capacity_section.py) reads."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from dbio.errors import UsageError
from dbio.stats import capacity, cost


def request(target_iops: float | None, latency_slo: str | None, prices: Iterable[str] = (),
            cost_table: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The capacity request, or None when nothing was asked; one line (exit 2) for bad input. cost_table:
    dbio.toml's [cost] as the configuration read it (Config.cost)."""
    if target_iops is not None and not 0 < target_iops < math.inf:  # click's float takes "inf" and "1e999"
        raise UsageError(f"--target-iops {target_iops:g} is not a rate", "give the I/O requests/s to reach, e.g. "
                                                                         "--target-iops 50000")
    if latency_slo is not None:
        try:
            capacity.parse_slo(latency_slo)
        except ValueError as exc:
            raise UsageError(f"--latency-slo: {exc}", "e.g. --latency-slo 'p99<2ms' or 'avg<500us'") from None
    try:
        priced = cost.prices(tuple(prices), cost_table)
    except ValueError as exc:
        where = "dbio.toml " if str(exc).startswith("[cost]") else "--price: "
        raise UsageError(f"{where}{exc}", "e.g. --price instance=300/month --price volume=0.08/GB-month "
                                            "--price iops=0.065/provisioned-IOPS-month") from None
    if target_iops is None and latency_slo is None and priced is None:
        return None
    return {"target_iops": target_iops, "latency_slo": latency_slo.strip() if latency_slo else None,
            "prices": priced.to_dict() if priced else None}
