"""The Run section of a report: what ran, where, with which settings (pure)."""

from __future__ import annotations

from typing import Any

from dbio.report import layout_section, limit_findings, storage_stack
from dbio.stats.catalogue import value
from dbio.stats.counters import get
from dbio.units import format_bytes, format_duration


def section(doc: dict[str, Any]) -> dict[str, Any]:
    w = get(doc, "config", "workload") or {}
    env = doc.get("environment") or {}
    server = env.get("server") or {}
    settings = server.get("settings") or {}
    timeline = doc.get("timeline") or {}
    status = str(doc.get("status", "?")).upper() + (f" ({doc['status_reason']})" if doc.get("status_reason") else "")
    window = timeline.get("window_seconds")
    schemas = w.get("schemas") or 1
    caps = doc.get("capabilities") if isinstance(doc.get("capabilities"), dict) else {}
    embedded = f" ({caps.get('own_instance') or 'embedded'})" if get(doc, "config", "connection", "embedded") else ""
    pairs = [
        ["Status", status],
        ["When", f"{timeline.get('window_start') or '-'}, measured for "
                 f"{format_duration(window) if window else '-'} after a warm-up of "
                 f"{format_duration(timeline.get('warmup_seconds') or 0)}"],
        ["Sessions", f"{w.get('sessions')} ({schemas} schema{'s' if schemas != 1 else ''} x "
                     f"{w.get('threads_per_schema')} thread{'s' if w.get('threads_per_schema') != 1 else ''}), "
                     "started together "
                     f"{timeline.get('start_seconds', 0):.1f} s after the first connected"],
        ["Workload", ", ".join(_knobs(w))],
        ["Data set", _data_set(doc, w, schemas)],
        ["Server", f"{server.get('description', '-')}{embedded}"],
        ["Settings", ", ".join(f"{k} {_setting(settings, k)}" for k in _shown(doc) if k in settings)],
        ["Plan", " > ".join(get(doc, "plans", "select", "nodes") or ["-"])],
        *([["Scan plan", " > ".join(get(doc, "plans", "scan", "nodes"))]] if get(doc, "plans", "scan",
                                                                                 "nodes") else []),
        ["Host", _host(env.get("host") or {})],
        ["dbio", f"{doc.get('dbio_version')}, run {doc.get('run_id')}"],
    ]
    wal = layout_section.wal_line(doc)
    if wal:  # a WAL placed apart from the data (wal_dir)
        pairs.insert(pairs.index(["dbio", pairs[-1][1]]), ["WAL", wal])
    if doc.get("merged_from"):
        pairs[2:3] = _merged(doc)
    return {"id": "run", "title": "Run", "pairs": pairs}


def storage(doc: dict[str, Any]) -> dict[str, Any]:
    """The storage stack under the data and WAL directories and the host's CPU and memory tuning."""
    env = doc.get("environment") or {}
    pairs = storage_stack.pairs(env.get("storage") or {}, env.get("host") or {})
    if env.get("limits") or env.get("client_limits"):  # a cgroup's or an affinity's, where any
        pairs.append(["Limits", f"database server: {limit_findings.summary(doc)}; dbio: "
                                f"{limit_findings.summary(doc, 'client_limits')}"])
    return {"id": "storage", "title": "Storage stack", "pairs": pairs}


def _merged(doc: dict[str, Any]) -> list[list[str]]:
    """A result merged from several hosts' runs (dbio merge): its sessions and where it came from."""
    timeline = doc.get("timeline") or {}
    names = ", ".join(str(m.get("name")) for m in doc["merged_from"])
    return [["Sessions", f"{len(doc.get('sessions') or [])} over {len(doc.get('nodes') or [])} nodes (see Nodes)"],
            ["Merged", f"from {len(doc['merged_from'])} runs ({names}); their windows overlap for "
                       f"{format_duration(timeline.get('overlap_seconds') or 0)}"
                       + (f", their starts {1000 * timeline['start_skew_seconds']:.0f} ms apart"
                          if isinstance(timeline.get("start_skew_seconds"), (int, float)) else "")],
            *_parts(doc)]


def _parts(doc: dict[str, Any]) -> list[list[str]]:
    """The parts of one run (--part i/N), and how each shared server's reads were counted."""
    out = []
    record = doc.get("parts")
    if isinstance(record, dict):
        given = ", ".join(f"{g.get('index')}" for g in record.get("given") or [])
        missing = record.get("missing") or []
        out.append(["Parts", f"{given} of {record.get('of')} of run {record.get('run')}"
                             + (f"; not given: {', '.join(map(str, missing))}" if missing else "")])
    for c in doc.get("counting") or []:
        if isinstance(c, dict) and c.get("own_reads_per_s") is not None and c.get("server_reads_per_s"):
            out.append(["Counted once", f"{c.get('description')}: the sessions' own {c['own_reads_per_s']:,.0f} "
                                        f"reads/s, "
                                        f"the server's {c['server_reads_per_s']:,.0f} "
                                        f"({c.get('difference_pct') or 0:+.1f}%)"])
    return out


def _shown(doc: dict[str, Any]) -> list[str]:
    """The settings the engine lists in a report (its capabilities say which)."""
    shown = get(doc, "capabilities", "settings_shown")
    return [name for name in shown if isinstance(name, str)] if isinstance(shown, list) else []


def _knobs(w: dict[str, Any]) -> list[str]:
    knobs = [f"work unit {w.get('work_unit')}", f"update {w.get('update_pct')}%", f"scan {w.get('scan_pct')}%",
             f"redo {w.get('redo_stress')}", f"access path {w.get('access_path')}", f"key order {w.get('key_order')}"]
    if w.get("hotspot"):
        knobs.append(f"hot spot {format_bytes(w['hotspot_size'])} at {format_bytes(w['hotspot_offset'])} "
                     f"every {w['hotspot_frequency']}")
    if w.get("hot_schema_frequency"):
        knobs.append(f"hot schema every {w['hot_schema_frequency']}")
    if w.get("think_time_frequency"):
        knobs.append(f"think every {w['think_time_frequency']} ({w['think_time_min']}-{w['think_time_max']} s)")
    if w.get("work_loop"):  # SLOB's meaning counts the warm-up; a document without the scope had dbio's
        counted = "warm-up included" if w.get("work_loop_scope") == "session" else "in the window"
        knobs.append(f"work loop {w['work_loop']} per session, {counted}")
    return knobs


def _data_set(doc: dict[str, Any], w: dict[str, Any], schemas: int) -> str:
    """The data set as the verdict sizes it (validity.data_bytes: a row a page of the engine's, 16 KiB for
    InnoDB's default), per schema and in all; 8 KiB a row in a result that lacks the figure."""
    rows = w.get("scale") or 0
    total = value(doc.get("figures") or {}, "data_bytes") or rows * 8192 * schemas
    page = total / (rows * schemas) if rows else 8192
    pages = f", {rows:,} rows of a {format_bytes(page)} page each" if page != 8192 else ""
    return (f"{format_bytes(total / schemas)} per schema x {schemas} = {format_bytes(total)}{pages}"
            f"{_loaded(doc.get('setup') or {})}")


def _loaded(setup: dict[str, Any]) -> str:
    if not (setup.get("seconds") and setup.get("loaded_bytes")):
        return ""
    return (f" (setup {setup.get('setup_id')}: {format_bytes(setup['loaded_bytes'])} loaded in "
            f"{setup['seconds']:.1f} s, {format_bytes(setup['loaded_bytes'] / setup['seconds'])}/s)")


def _host(host: dict[str, Any]) -> str:
    return (f"{host.get('cpu_model', '-')}, {host.get('cpus', '-')} CPUs, "
            f"{format_bytes(host['memory_bytes']) if host.get('memory_bytes') else '-'} memory, "
            f"{host.get('os', '')}, kernel {host.get('kernel', '-')}")


def _setting(settings: dict[str, Any], name: str) -> str:
    entry = settings.get(name) or {}
    value, unit = entry.get("setting"), entry.get("unit")
    if value is None:
        return "-"
    if unit == "8kB" and str(value).isdigit():
        return format_bytes(int(value) * 8192)
    if unit == "MB" and str(value).isdigit():
        return format_bytes(int(value) << 20)
    if unit == "s" and str(value).isdigit():
        return format_duration(int(value))
    return "off" if value == "" else str(value)
