"""The Run section of a report: what ran, where, with which settings (pure)."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.report import layout_section, limit_findings, storage_stack
from dbio.result_context import Setup
from dbio.result_records import Result
from dbio.stats.catalogue import value
from dbio.units import format_bytes, format_duration


def section(r: Result) -> dict[str, Any]:
    w = r.config.workload
    env = r.environment
    server, settings = env.server, env.settings
    timeline = r.timeline
    status = ("?" if r.status is None else str(r.status)).upper() + (f" ({r.status_reason})" if r.status_reason
                                                                       else "")
    window = timeline.window_seconds
    schemas = w.get("schemas") or 1
    embedded = f" ({r.capabilities.get('own_instance') or 'embedded'})" if r.config.embedded else ""
    pairs = [
        ["Status", status],
        ["When", f"{timeline.window_start or '-'}, measured for "
                 f"{format_duration(window) if window else '-'} after a warm-up of "
                 f"{format_duration(timeline.warmup_seconds or 0)}"],
        ["Sessions", f"{w.get('sessions')} ({schemas} schema{'s' if schemas != 1 else ''} x "
                     f"{w.get('threads_per_schema')} thread{'s' if w.get('threads_per_schema') != 1 else ''}), "
                     "started together "
                     f"{timeline.start_seconds or 0:.1f} s after the first connected"],
        ["Workload", ", ".join(_knobs(w))],
        ["Data set", _data_set(r, w, schemas)],
        ["Server", f"{server.get('description', '-')}{embedded}"],
        ["Settings", ", ".join(f"{k} {_setting(settings, k)}" for k in _shown(r) if k in settings)],
        ["Plan", " > ".join(r.plans.get("select") or ["-"])],
        *([["Scan plan", " > ".join(r.plans["scan"])]] if r.plans.get("scan") else []),
        ["Host", _host(env.host)],
        ["dbio", f"{r.dbio_version}, run {r.run_id}"],
    ]
    wal = layout_section.wal_line(env.storage)
    if wal:  # a WAL placed apart from the data (wal_dir)
        pairs.insert(pairs.index(["dbio", pairs[-1][1]]), ["WAL", wal])
    if r.merged_from:
        pairs[2:3] = _merged(r)
    return {"id": "run", "title": "Run", "pairs": pairs}


def storage(r: Result) -> dict[str, Any]:
    """The storage stack under the data and WAL directories and the host's CPU and memory tuning."""
    env = r.environment
    pairs = storage_stack.pairs(env.storage, env.host)
    if env.limits or env.client_limits:  # a cgroup's or an affinity's, where any
        pairs.append(["Limits", f"database server: {limit_findings.summary(r)}; dbio: "
                                f"{limit_findings.summary(r, client=True)}"])
    return {"id": "storage", "title": "Storage stack", "pairs": pairs}


def _merged(r: Result) -> list[list[str]]:
    """A result merged from several hosts' runs (dbio merge): its sessions and where it came from."""
    timeline = r.timeline
    names = ", ".join(str(m.get("name")) for m in r.merged_from)
    if len(r.merged_from) == 1:  # one part of a run alone (the others wrote no result): the Parts line names them
        merged = f"from 1 run ({names}), the only part given"
    else:
        merged = (f"from {len(r.merged_from)} runs ({names}); their windows overlap for "
                  f"{format_duration(timeline.overlap_seconds or 0)}"
                  + (f", their starts {1000 * timeline.start_skew_seconds:.0f} ms apart"
                     if timeline.start_skew_seconds is not None else ""))
    return [["Sessions", f"{len(r.sessions)} over {len(r.nodes)} node{'s' if len(r.nodes) != 1 else ''} (see Nodes)"],
            ["Merged", merged],
            *_parts(r)]


def _parts(r: Result) -> list[list[str]]:
    """The parts of one run (--part i/N), and how each shared server's reads were counted."""
    out = []
    if r.parts is not None:
        given = ", ".join(f"{index}" for index in r.parts.given)
        missing = r.parts.missing
        out.append(["Parts", f"{given} of {r.parts.of} of run {r.parts.run}"
                             + (f"; not given: {', '.join(map(str, missing))}" if missing else "")])
    for c in r.counting:
        if c.own_reads_per_s is not None and c.server_reads_per_s:
            out.append(["Counted once", f"{c.description}: the sessions' own {c.own_reads_per_s:,.0f} "
                                        f"reads/s, "
                                        f"the server's {c.server_reads_per_s:,.0f} "
                                        f"({c.difference_pct or 0:+.1f}%)"])
    return out


def _shown(r: Result) -> list[str]:
    """The settings the engine lists in a report (its capabilities say which)."""
    return list(r.caps.settings_shown)


def _knobs(w: Mapping[str, Any]) -> list[str]:
    knobs = [f"work unit {w.get('work_unit')}", f"update {w.get('update_pct')}%", f"scan {w.get('scan_pct')}%",
             f"redo {w.get('redo_stress')}", f"access path {w.get('access_path')}", f"key order {w.get('key_order')}"]
    if w.get("hotspot"):
        knobs.append(f"hot spot {format_bytes(w['hotspot_size'])} at {format_bytes(w['hotspot_offset'])} "
                     f"every {w['hotspot_frequency']}")
    if w.get("hot_schema_frequency"):
        knobs.append(f"hot schema every {w['hot_schema_frequency']}")
    if w.get("rate"):  # an open loop: the rate asked, its schedule, the latency limit
        limit = f", late beyond {w['latency_limit'] * 1000:g} ms" if w.get("latency_limit") else ""
        knobs.append(f"rate {w['rate']:,} statements/s ({w.get('rate_schedule') or 'poisson'}{limit})")
    if w.get("think_time_frequency"):
        knobs.append(f"think every {w['think_time_frequency']} ({w['think_time_min']}-{w['think_time_max']} s)")
    if w.get("work_loop"):  # SLOB's meaning counts the warm-up; a document without the scope had dbio's
        counted = "warm-up included" if w.get("work_loop_scope") == "session" else "in the window"
        knobs.append(f"work loop {w['work_loop']} per session, {counted}")
    return knobs


def _data_set(r: Result, w: Mapping[str, Any], schemas: int) -> str:
    """The data set as the verdict sizes it (validity.data_bytes: a row a page of the engine's, 16 KiB for
    InnoDB's default), per schema and in all; 8 KiB a row in a result that lacks the figure."""
    rows = w.get("scale") or 0
    total = value(dict(r.figures), "data_bytes") or rows * 8192 * schemas
    page = total / (rows * schemas) if rows else 8192
    pages = f", {rows:,} rows of a {format_bytes(page)} page each" if page != 8192 else ""
    return (f"{format_bytes(total / schemas)} per schema x {schemas} = {format_bytes(total)}{pages}"
            f"{_loaded(r.setup)}")


def _loaded(setup: Setup) -> str:
    if not (setup.seconds and setup.loaded_bytes):
        return ""
    return (f" (setup {setup.setup_id}: {format_bytes(setup.loaded_bytes)} loaded in "
            f"{setup.seconds:.1f} s, {format_bytes(setup.loaded_bytes / setup.seconds)}/s)")


def _host(host: Mapping[str, Any]) -> str:
    return (f"{host.get('cpu_model', '-')}, {host.get('cpus', '-')} CPUs, "
            f"{format_bytes(host['memory_bytes']) if host.get('memory_bytes') else '-'} memory, "
            f"{host.get('os', '')}, kernel {host.get('kernel', '-')}")


def _setting(settings: Mapping[str, Any], name: str) -> str:
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
