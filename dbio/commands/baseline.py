"""dbio baseline: fio alone on the storage under test, at the configured sessions; its summary, and its
record in --out. The measuring itself, also beside a run, is jobs/baseline.py's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbio import target as targets
from dbio import trust
from dbio.collect import fio
from dbio.config import Config
from dbio.errors import UsageError
from dbio.jobs.baseline import NO_RUN_TIME, Place, Request, measure, place_on
from dbio.ui import UI

ALONE_SECONDS = (30, 10)  # dbio baseline without --run-time: synchronous and deep-queue seconds


def alone_seconds(config: Config) -> tuple[int, int]:
    """dbio baseline's synchronous and deep-queue seconds: --run-time's when given, else ALONE_SECONDS
    (not the 5 minutes a run measures: that made 375 s of fio)."""
    if config.origins.get("run_time", "default") == "default":
        return ALONE_SECONDS
    sync_s = int(config.workload.run_time or NO_RUN_TIME)
    return sync_s, max(1, sync_s // 4)


def summary_lines(record: dict[str, Any]) -> list[str]:
    sync, deep = record["runs"]["sync"], record["runs"]["deep"]
    return [f"baseline ({record['version']}, {record['place']}):",
            f"  {sync['jobs']} synchronous job(s): {sync['reads_per_s']:,.0f} reads/s, {sync['avg_read_us']:,.0f} us "
            f"avg read, {_cpu(sync)} host CPU per read",
            f"  device ceiling ({deep['jobs']} x {deep['iodepth']} in flight): {deep['reads_per_s']:,.0f} reads/s, "
            f"{deep['avg_read_us']:,.0f} us avg read"] + _write_lines(record.get("write_side"))


def _write_lines(side: dict[str, Any] | None) -> list[str]:
    if not side:
        return []
    writes, redo = side["writes"], side.get("redo_sync")
    lines = [f"  {writes['jobs']} random-write job(s) on a scratch file: {writes['writes_per_s']:,.0f} writes/s, "
             f"{writes['avg_write_us']:,.0f} us avg write"]
    if redo:
        lines.append(f"  redo log sync ({redo['tool']}, {redo['method']}): {redo['syncs_per_s']:,.0f} syncs/s, "
                     f"{redo['avg_sync_us']:,.0f} us each")
    return lines


def _cpu(run: dict[str, Any]) -> str:
    value = run.get("host_cpu_us_per_read")
    return "?" if value is None else f"{value:,.1f} us"


def place_for(config: Config, path: Path | None, ui: UI) -> Place:
    """Where `dbio baseline` reads (and, with update_pct > 0, writes): --baseline-path, or the
    configured server's data files."""
    target = targets.resolve_existing(config, ui.note, "run dbio setup first")
    conn = target.connect("dbio:baseline")
    try:
        return place_on(Request("", path), target.engine, conn, target.engine.probe(conn),
                        config.workload.data_bytes, writes=config.workload.update_pct > 0,
                        sequential=config.workload.scan_pct > 0)
    finally:
        target.engine.close(conn)


def baseline(config: Config, ui: UI, path: Path | None, out: Path | None) -> dict[str, Any]:
    """dbio baseline: fio alone at the configured sessions; its summary, and the record in --out."""
    tool = fio.find()
    place = place_for(config, path, ui)
    record = measure(tool, place, config.workload.sessions, alone_seconds(config), ui)
    for line in summary_lines(record):
        ui.console.print(line, markup=False, highlight=False, soft_wrap=True)
    if out is not None:
        try:  # never through a link someone planted at --out (under /tmp, say) while fio ran
            trust.write_output(out, json.dumps(record, indent=2) + "\n")
        except OSError as exc:
            raise UsageError(f"--out {out} cannot be written: {exc.strerror}", "choose a writable path (the "
                                                                             "baseline's figures are above)") from None
    return record
