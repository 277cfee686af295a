"""The Layout section of a report (pure): where the data and the WAL live, each place with its
device's own figures, and how commit latency relates to the WAL's sync latency.

Shown only when the run had a layout of its own (WAL outside the data directory, or the tables
in tablespaces), so results of the default layout render as before."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.collect.block import MEMORY_FILESYSTEMS
from dbio.report.tables import table
from dbio.result_context import Storage
from dbio.result_records import Result
from dbio.stats import catalogue
from dbio.stats.counters import get


def wal_line(storage: Storage) -> str | None:
    """'WAL in DIR on vdb (its own device)': where the WAL lives, for the Run section."""
    wal = storage.wal
    if not wal or not storage.has_layout:
        return None
    device = wal.get("device") or wal.get("source") or "-"
    shared = "the same device as the data" if wal.get("same_device_as_data") else "a device of its own"
    return f"{wal.get('path')} on {device} ({wal.get('fs_type') or '-'} at {wal.get('mount_point') or '-'}), {shared}"


def section(r: Result) -> dict[str, Any]:
    storage = r.environment.storage
    if not storage.has_layout:
        return {"id": "layout", "title": "Layout"}
    f = dict(r.figures)
    devices = catalogue.devices(f)
    columns = catalogue.LAYOUT_FIGURES
    rows = []
    for role, facts in storage.places():
        name = facts.get("device")
        d = devices.get(name) if name else None
        rows.append([role, str(facts.get("path") or "-"), _device_name(facts),
                     *[c.value(d) if d else None for c in columns]])
    names = [facts.get("device") for _, facts in storage.places() if facts.get("device")]
    notes = ["Each place's figures are its whole device's (/proc/diskstats): places on one device show the same "
             "figures, which are their sum."] if len(set(names)) < len(names) else []
    if any(facts.get("members") for _, facts in storage.places()):
        # a btrfs over several devices: latency, busy time and queue of several devices do not add up
        notes.append("A place on several devices (a btrfs's members) has each device's figures in the Device table.")
    return {"id": "layout", "title": "Layout (where the data and the WAL live)",
            "tables": [table("layout", "", ["Place", "Directory", "Device", *[c.label for c in columns]],
                             ["text", "text", "text", *[c.kind for c in columns]], rows, notes)],
            "lines": _commit_lines(f)}


def _device_name(facts: Mapping[str, Any]) -> str:
    """The place's device, a multi-device filesystem's members, or 'memory' (tmpfs)."""
    if facts.get("device"):
        return str(facts["device"])
    if facts.get("members"):
        return "+".join(facts["members"])
    return "memory" if facts.get("in_memory") or facts.get("fs_type") in MEMORY_FILESYSTEMS else "-"


def _commit_lines(f: dict[str, Any]) -> list[str]:
    """Commit latency against the engine's WAL sync latency: a commit waits for at least one sync."""
    sync, syncs = catalogue.value(f, "avg_wal_sync_us"), catalogue.value(f, "wal_syncs_per_s")
    commit = get(catalogue.statement_latency(f), "update", "mean_us")
    if sync is None:
        return []
    line = f"WAL sync (engine): {sync:,.0f} us on average, {syncs or 0:,.1f} syncs/s"
    if commit:
        line += f"; UPDATE+COMMIT {commit:,.0f} us on average, of which a WAL sync is {100 * sync / commit:.0f}%"
    return [line]
