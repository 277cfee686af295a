"""The Capacity section of a sweep's report (pure): for a target rate and a latency objective
(`--target-iops`, `--latency-slo`), what the measured steps of each curve over sessions say
(stats/capacity.py), and with prices (`--price`, `[cost]`) what each measured rate costs
(stats/cost.py). Figures are read through the catalogue."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.report.tables import table
from dbio.stats import capacity, catalogue, cost
from dbio.result_records import Result
from dbio.sweep_records import Sweep


def requested(request: dict[str, Any] | None) -> bool:
    request = request or {}
    return any(request.get(k) for k in ("target_iops", "latency_slo", "prices"))


def storage_points(curve: dict[str, Any]) -> list[dict[str, Any]]:
    """A sweep curve's points that are storage results: a knee or a capacity read off a step served by a cache
    (INVALID) would be a statement about memory. The charts still draw those steps, marked."""
    return [p for p in curve["points"] if not p.get("invalid")]


def section(sweep: Sweep, curves: list[dict[str, Any]], results: Mapping[str, Result],
            request: dict[str, Any] | None, by_sessions: bool) -> dict[str, Any] | None:
    """None when nothing was asked; the request was checked when it was given (sweep, report)."""
    if not requested(request):
        return None
    request = request or {}
    if not by_sessions:
        return {"id": "capacity", "title": "Capacity and queueing",
                "lines": ["capacity is read off a curve over sessions: this sweep does not vary them"]}
    slo = capacity.parse_slo(request["latency_slo"]) if request.get("latency_slo") else None
    gain = sweep.knee_gain
    lines, tables = [], []
    for curve in curves:
        points = [_point(p["step"], results.get(p["step"]), slo) for p in storage_points(curve)]
        prefix = f"{curve['label']}: " if curve["label"] != "all steps" else ""
        if request.get("target_iops") or slo is not None:
            lines += [prefix + line for line in capacity.statements(points, request.get("target_iops"), slo, gain)]
        if request.get("prices"):
            tables.append(_cost_table(curve["label"], points, results, cost.Prices(**request["prices"])))
    return {"id": "capacity", "title": "Capacity and queueing", "lines": lines, "tables": tables}


def _point(step: str, result: Result | None, slo: capacity.Slo | None) -> capacity.Point:
    f = dict(result.figures) if result else {}
    iops = catalogue.value(f, "total_requests_per_s")
    if iops is None:
        iops = catalogue.value(f, "reads_per_s") or 0.0
    devices = catalogue.devices(f)
    name = max(devices, key=lambda d: devices[d].get("utilization_pct") or 0.0) if devices else None
    device = devices.get(name) or {} if name else {}
    completions = [device.get("reads_per_s"), device.get("writes_per_s")]
    return capacity.Point(
        step=step, sessions=result.config.sessions if result else 0, iops=iops,
        read_us=catalogue.value(f, "avg_read_us"), slo_us=catalogue.value(f, slo.figure) if slo else None,
        device=name, device_iops=sum(c for c in completions if c is not None) if name else None,
        busy_pct=device.get("utilization_pct"), device_queue=device.get("avg_queue"),
        reads_per_s=catalogue.value(f, "reads_per_s"))


def _cost_table(label: str, points: list[capacity.Point], results: Mapping[str, Result],
                prices: cost.Prices) -> dict[str, Any]:
    loaded = (result.setup.loaded_bytes for p in points if (result := results.get(p.step)))
    data_bytes = next((size for size in loaded if size), None)
    rows = cost.rows(((p.step, p.sessions, p.iops) for p in sorted(points, key=lambda p: p.sessions)), data_bytes,
                     prices)
    money = f"cost/month ({prices.currency})" if prices.currency else "cost/month"
    per = f"{prices.currency} per 1,000 IOPS" if prices.currency else "per 1,000 IOPS"
    size = f"{data_bytes / cost.GIB:,.2f} GB" if data_bytes else "an unknown size (the setup record is missing)"
    notes = [f"prices: {prices.given()}; the volume priced at the data set's size, {size} (GB = 2^30 bytes); "
             "the IOPS provisioned are the ones measured (data reads and writes, WAL writes)"]
    title = "Cost of the measured rates" + (f" ({label})" if label != "all steps" else "")
    return table("capacity_cost", title, ["Step", "Sessions", "IOPS", "IOPS per GB", money, per],
                 ["text", "count", "rate", "rate", "money", "money"],
                 [[r.step, r.sessions, r.iops, r.iops_per_gb, r.monthly, r.per_1000_iops] for r in rows], notes)
