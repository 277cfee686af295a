"""--target-iops, --latency-slo and --price (or dbio.toml's [cost] table), checked before anything
runs: the request a sweep keeps in sweep.json and its report (report/capacity_section.py) reads."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

from dbio import config_files, readback, trust
from dbio.errors import UsageError
from dbio.stats import capacity, cost


def request(target_iops: float | None, latency_slo: str | None, prices: Iterable[str] = (),
            cost_table: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The capacity request, or None when nothing was asked; one line (exit 2) for bad input."""
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


def cost_table(files: Iterable[Path]) -> dict[str, Any] | None:
    """The [cost] table of the configuration file dbio read (its other sections are config.py's)."""
    for path in files:
        try:
            data = config_files.parse_toml(trust.read_trusted(path, readback.CONFIGURATION).decode())
        except (OSError, UnicodeDecodeError, config_files.BadToml, trust.UntrustedFile, readback.Refused):
            continue  # config.py has said what is wrong with it, or it is a slob.conf
        table = data.get("cost")
        if isinstance(table, dict):
            return table
    return None
