"""The report of one result, as data: every renderer (text, Markdown, HTML, JSON) shows this model.

A pure function of result.json. Tables carry raw numbers and a kind per column (how to format
them), so the text and the HTML report carry the same figures, and --format json gives them
unformatted.
"""

from __future__ import annotations

from typing import Any

from dbio.report import verdict
from dbio.stats import series as series_math
from dbio.stats import stability
from dbio.stats.counters import get
from dbio.units import format_bytes, format_duration

FORMAT = "dbio-report"
FORMAT_VERSION = 1
KIND_LABELS = {"select": "SELECT (range)", "update": "UPDATE+COMMIT", "scan": "scan table"}
SERIES_STATS = (  # key, label, kind
    ("reads_per_s", "Physical reads/s", "rate"),
    ("writes_per_s", "Physical writes/s", "rate"),
    ("read_mib_per_s", "Read MiB/s", "rate"),
    ("write_mib_per_s", "Write MiB/s", "rate"),
    ("avg_read_us", "Avg physical read", "us"),
    ("statements_per_s", "Statements/s", "rate"),
    ("select_p99_us", "SELECT p99", "us"),
    ("host_busy_pct", "Host CPU busy", "pct"),
)


def table(table_id: str, title: str, columns: list[str], kinds: list[str], rows: list[list[Any]],
          notes: list[str] | None = None) -> dict[str, Any]:
    return {"id": table_id, "title": title, "columns": columns, "kinds": kinds, "rows": rows, "notes": notes or []}


def build(doc: dict[str, Any]) -> dict[str, Any]:
    f = doc.get("figures") or {}
    findings = verdict.findings(doc)
    measured = bool(f.get("window_seconds"))
    intervals = series_math.labelled(doc.get("series") or [], get(doc, "timeline", "warmup_seconds") or 0)
    sections = [_run_section(doc)]
    if measured:
        sections += [_load_profile(f), _io_profile(f), _latency(f), _events(doc), _cpu(f, doc), _devices(f),
                     _time_series(intervals), _stability(doc, intervals)]
    sections.append({"id": "verdict", "title": "Verdict and warnings",
                     "lines": _validity_lines(f) + [f"{x.level}: {x.message}" for x in findings]})
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "title": f"dbio report: {doc.get('label') or doc.get('run_id')}",
        "run": {"label": doc.get("label"), "run_id": doc.get("run_id"), "status": doc.get("status"),
                "status_reason": doc.get("status_reason"), "window_start": get(doc, "timeline", "window_start"),
                "window_seconds": f.get("window_seconds"), "dbio_version": doc.get("dbio_version")},
        "headline_text": verdict.headline(doc),
        "headline": _headline(f) if measured else [],
        "findings": [x.to_dict() for x in findings],
        "sections": [s for s in sections if s.get("tables") or s.get("pairs") or s.get("lines")],
        "series": _series_points(intervals) if measured else {},
        "histograms": _histograms(f) if measured else {},
        "events": _event_shares(doc) if measured else [],
        # charts the HTML report draws: (chart, the model entry it draws from)
        "charts": [["series_iops", "series"], ["series_latency", "series"], ["latency_histogram", "histograms"],
                   ["events", "events"], ["cpu", "series"]] if measured else [],
    }


# -- sections --------------------------------------------------------------------------------

def _run_section(doc: dict[str, Any]) -> dict[str, Any]:
    w = get(doc, "config", "workload") or {}
    env = doc.get("environment") or {}
    hostf = env.get("host") or {}
    server = env.get("server") or {}
    settings = server.get("settings") or {}
    timeline = doc.get("timeline") or {}
    setup = doc.get("setup") or {}
    storage = get(env, "storage", "data_directory") or {}
    status = str(doc.get("status", "?")).upper() + (f" ({doc['status_reason']})" if doc.get("status_reason") else "")
    window = timeline.get("window_seconds")
    schemas = w.get("schemas") or 1
    knobs = [f"work unit {w.get('work_unit')}", f"update {w.get('update_pct')}%", f"scan {w.get('scan_pct')}%",
             f"redo {w.get('redo_stress')}", f"access path {w.get('access_path')}", f"key order {w.get('key_order')}"]
    if w.get("hotspot"):
        knobs.append(f"hot spot {format_bytes(w['hotspot_size'])} at {format_bytes(w['hotspot_offset'])} "
                     f"every {w['hotspot_frequency']}")
    if w.get("hot_schema_frequency"):
        knobs.append(f"hot schema every {w['hot_schema_frequency']}")
    if w.get("think_time_frequency"):
        knobs.append(f"think every {w['think_time_frequency']} ({w['think_time_min']}-{w['think_time_max']} s)")
    if w.get("work_loop"):
        knobs.append(f"work loop {w['work_loop']}")
    loaded = ""
    if setup.get("seconds") and setup.get("loaded_bytes"):
        loaded = (f" (setup {setup.get('setup_id')}: {format_bytes(setup['loaded_bytes'])} loaded in "
                  f"{setup['seconds']:.1f} s, {setup['mb_per_s']:.0f} MB/s)")
    embedded = " (embedded)" if get(doc, "config", "connection", "embedded") else ""
    pairs = [
        ["Status", status],
        ["When", f"{timeline.get('window_start') or '-'}, measured for "
                 f"{format_duration(window) if window else '-'} after a warm-up of "
                 f"{format_duration(timeline.get('warmup_seconds') or 0)}"],
        ["Sessions", f"{w.get('sessions')} ({schemas} schema{'s' if schemas != 1 else ''} x "
                     f"{w.get('threads_per_schema')} threads), started together "
                     f"{timeline.get('start_seconds', 0):.1f} s after the first connected"],
        ["Workload", ", ".join(knobs)],
        ["Data set", f"{format_bytes((w.get('scale') or 0) * 8192)} per schema x {schemas} = "
                     f"{format_bytes((w.get('scale') or 0) * 8192 * schemas)}{loaded}"],
        ["Server", f"{server.get('description', '-')}{embedded}"],
        ["Settings", ", ".join(f"{k} {_setting(settings, k)}" for k in
                               ("shared_buffers", "debug_io_direct", "io_method", "wal_level", "data_checksums",
                                "track_io_timing", "synchronous_commit", "full_page_writes", "checkpoint_timeout",
                                "max_wal_size") if k in settings)],
        ["Plan", " > ".join(get(doc, "plans", "select", "nodes") or ["-"])],
        ["Host", f"{hostf.get('cpu_model', '-')}, {hostf.get('cpus', '-')} CPUs, "
                 f"{format_bytes(hostf['memory_bytes']) if hostf.get('memory_bytes') else '-'} memory, "
                 f"{hostf.get('os', '')}, kernel {hostf.get('kernel', '-')}"],
        ["Storage", f"{storage.get('source') or storage.get('device') or '-'} ({storage.get('fs_type') or '-'}"
                    + (f", {storage['model']}" if storage.get("model") else "") +
                    f") mounted at {storage.get('mount_point') or '-'}, data directory {storage.get('path') or '-'}"],
        ["dbio", f"{doc.get('dbio_version')}, run {doc.get('run_id')}"],
    ]
    return {"id": "run", "title": "Run", "pairs": pairs}


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


def _load_profile(f: dict[str, Any]) -> dict[str, Any]:
    lp = f["load_profile"]
    s = f["window_seconds"]
    statements = (lp["statements_per_s"] or 0) * s
    transactions = (lp["commits_per_s"] or 0) * s

    def row(label: str, per_s: float | None) -> list[Any]:
        total = None if per_s is None else per_s * s
        return [label, per_s, None if total is None or not statements else total / statements,
                None if total is None or not transactions else total / transactions]

    rows = [
        row("Logical reads (blocks)", lp["logical_reads_per_s"]),
        row("Physical read requests", lp["physical_reads_per_s"]),
        row("Physical read blocks", lp["physical_read_blocks_per_s"]),
        row("Physical write requests", lp["physical_writes_per_s"]),
        row("WAL generated (bytes)", lp["wal_bytes_per_s"]),
        row("WAL writes", lp["wal_writes_per_s"]),
        row("WAL syncs", lp["wal_syncs_per_s"]),
        row("Statements", lp["statements_per_s"]),
        row("  SELECT (range)", lp["selects_per_s"]),
        row("  UPDATE", lp["updates_per_s"]),
        row("  scan", lp["scans_per_s"]),
        row("Commits (one per UPDATE)", lp["commits_per_s"]),
        row("Server transactions (incl. dbio's)", lp.get("server_commits_per_s")),
        row("Rows touched", lp["rows_per_s"]),
    ]
    return {"id": "load_profile", "title": "Load Profile", "tables": [table(
        "load_profile", "", ["", "Per Second", "Per Statement", "Per Transaction"], ["text", "rate", "rate", "rate"],
        rows, ["A transaction is one UPDATE and its COMMIT; SELECTs run outside explicit transactions."])]}


def _io_profile(f: dict[str, Any]) -> dict[str, Any]:
    io = f["io_profile"]
    wal_label = "WAL" + (" (generated bytes)" if io.get("wal_write_mib_is_generated") else "")
    data_read, data_write = io["data_read_requests_per_s"], io["data_write_requests_per_s"]
    wal_write = io["wal_write_requests_per_s"]
    read_mib, write_mib, wal_mib = io["data_read_mib_per_s"], io["data_write_mib_per_s"], io["wal_write_mib_per_s"]
    rows = [
        ["Data files", data_read, data_write, _sum(data_read, data_write), read_mib, write_mib, _sum(read_mib, write_mib)],
        [wal_label, 0.0, wal_write, wal_write, 0.0, wal_mib, wal_mib],
        ["Total", data_read, _sum(data_write, wal_write), _sum(data_read, data_write, wal_write), read_mib,
         _sum(write_mib, wal_mib), _sum(read_mib, write_mib, wal_mib)],
    ]
    tables = [table("io_profile", "", ["", "Read req/s", "Write req/s", "Total req/s", "Read MiB/s", "Write MiB/s",
                                       "Total MiB/s"], ["text"] + ["rate"] * 6, rows)]
    by_backend = io.get("by_backend")
    if by_backend:
        brows = []
        for btype, v in by_backend.items():
            writes = _sum(v["write_requests_per_s"], v["wal_write_requests_per_s"])
            wmib = _sum(v["write_mib_per_s"], v["wal_write_mib_per_s"])
            brows.append([btype, v["read_requests_per_s"], writes, v["read_mib_per_s"], wmib])
        tables.append(table("io_by_backend", "By backend type (data files and WAL)",
                            ["Backend type", "Read req/s", "Write req/s", "Read MiB/s", "Write MiB/s"],
                            ["text", "rate", "rate", "rate", "rate"], brows))
    return {"id": "io_profile", "title": "IO Profile", "tables": tables}


def _latency(f: dict[str, Any]) -> dict[str, Any]:
    lat = f["latency"]
    averages = table("latency_averages", "Average I/O latency (from the engine's I/O timing)",
                     ["", "Average"], ["text", "us"], [
                         ["Physical read (sessions)", lat["avg_read_us"]],
                         ["Physical read (all processes)", lat.get("avg_read_us_all_backends")],
                         ["Physical write", lat["avg_write_us"]],
                         ["WAL write", lat["avg_wal_write_us"]],
                         ["WAL sync", lat["avg_wal_sync_us"]],
                     ], ["Time the process waited for the read, as the engine timed it; a device's own service "
                         "time is in the Device table."])
    stats_rows = []
    for kind, s in lat["statements"].items():
        stats_rows.append([KIND_LABELS.get(kind, kind), s["count"], s["mean_us"], s["p50_us"], s["p90_us"],
                           s["p99_us"], s["p99_9_us"], s["max_us"]])
    tables = [averages, table("statement_latency", "Statement latency (timed inside the work loop)",
                              ["Statement", "Count", "Mean", "p50", "p90", "p99", "p99.9", "Max"],
                              ["text", "count", "us", "us", "us", "us", "us", "us"], stats_rows)]
    for kind, s in lat["statements"].items():
        buckets = s["awr_buckets"]
        used = [i for i, b in enumerate(buckets) if b["count"]]
        rows, cumulative = [], 0.0
        for b in buckets[min(used):max(used) + 1] if used else []:
            cumulative = min(100.0, cumulative + b["pct"])
            rows.append([b["bucket"], b["count"], b["pct"], cumulative])
        tables.append(table(f"histogram_{kind}", f"{KIND_LABELS.get(kind, kind)} latency histogram",
                            ["Bucket", "Statements", "%", "Cum %"], ["text", "count", "pct", "pct"], rows))
    return {"id": "latency", "title": "Latency", "tables": tables, "charts": ["latency_histogram"]}


def _events(doc: dict[str, Any]) -> dict[str, Any]:
    shares = _event_shares(doc)
    if not shares:
        return {"id": "events", "title": "Top Events"}
    interval = get(doc, "waits", "interval_seconds") or get(doc, "config", "run", "wait_sample_interval")
    samples = get(doc, "waits", "samples")
    rows = [[event, count, pct] for event, count, pct in shares[:12]]
    counted = f" ({samples:,} samples of all sessions)" if samples else ""
    note = (f"Each session's state sampled every {interval:g} s{counted}; "
            "CPU means running or waiting to run, Client means between two slices of the loop.") if interval else ""
    return {"id": "events", "title": "Top Events", "tables": [table(
        "top_events", "", ["Event", "Samples", "% of session time"], ["text", "count", "pct"], rows, [note])],
        "charts": ["events"]}


def _event_shares(doc: dict[str, Any]) -> list[list[Any]]:
    counts = get(doc, "waits", "counts") or {}
    total = sum(counts.values())
    if not total:
        return []
    return [[event, count, 100.0 * count / total] for event, count in sorted(counts.items(), key=lambda kv: -kv[1])]


def _cpu(f: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    cpu = f["cpu"]
    host = cpu.get("host")
    local = get(doc, "capabilities", "local")
    tables = []
    if host:
        title = "Host CPU" if local else "dbio's host CPU (the server runs elsewhere)"
        tables.append(table("host_cpu", title, ["User", "System", "I/O wait", "Steal", "Idle", "Busy CPUs"],
                            ["pct", "pct", "pct", "pct", "pct", "rate"],
                            [[host["user_pct"], host["system_pct"], host["iowait_pct"], host["steal_pct"],
                              host["idle_pct"], host["busy_cores"]]], [_host_cpu_note(host, cpu.get("cores"))]))
    busy = get(host or {}, "busy_seconds")
    own = (cpu.get("dbio_client_cpu_seconds") or 0) + (cpu.get("dbio_monitor_cpu_seconds") or 0)
    rows = [
        ["DB CPU seconds (sessions)", cpu["db_cpu_seconds"], "seconds"],
        ["DB CPU in use (cores)", cpu["db_cpu_cores"], "rate"],
        ["Background processes CPU seconds", cpu["background_cpu_seconds"], "seconds"],
        ["dbio's own measuring, CPU seconds", own if local else None, "seconds"],
        ["  share of the host's busy CPU", 100.0 * own / busy if busy and local else None, "pct"],
        ["Physical reads per DB CPU second", cpu["reads_per_db_cpu_second"], "rate"],
        ["DB CPU per physical read", cpu["db_cpu_us_per_read"], "us"],
        ["Physical reads/s per CPU core", cpu["reads_per_second_per_core"], "rate"],
        ["Physical reads per host CPU second", cpu["reads_per_host_cpu_second"], "rate"],
    ]
    tables.append(table("cpu_cost", "What a read costs", ["", "Value"], ["text", "mixed"],
                        [[label, {"value": value, "kind": kind}] for label, value, kind in rows]))
    return {"id": "cpu", "title": "CPU", "tables": tables, "charts": ["cpu"]}


def _host_cpu_note(host: dict[str, Any], cores: int | None) -> str:
    note = f"Shares of the window's CPU time ({cores} CPUs x its elapsed time): User + System = Busy CPUs / {cores}."
    accounted = host.get("accounted_pct")
    if accounted is not None and abs(accounted - 100.0) > 1.0:
        note += (f" The kernel accounted {accounted:.1f}% of that time; the rest (idle or I/O wait time a virtual "
                 "machine did not count) is in no column.") if accounted < 100.0 else \
            f" The kernel accounted {accounted:.1f}% of that time (its clock ticks and the readings' times differ)."
    return note


def _devices(f: dict[str, Any]) -> dict[str, Any]:
    devices = f.get("devices") or {}
    rows = [[name, d["reads_per_s"], d["read_mib_per_s"], d["avg_read_us"], d["writes_per_s"], d["write_mib_per_s"],
             d["avg_write_us"], d["utilization_pct"], d["avg_queue"]] for name, d in devices.items()]
    if not rows:
        return {"id": "devices", "title": "Device"}
    return {"id": "devices", "title": "Device (/proc/diskstats)", "tables": [table(
        "devices", "", ["Device", "Reads/s", "Read MiB/s", "Avg read", "Writes/s", "Write MiB/s", "Avg write",
                        "Util", "Queue"], ["text", "rate", "rate", "us", "rate", "rate", "us", "pct", "rate"], rows,
        ["The block device under the data directory, whatever else used it."])]}


def _time_series(intervals: list[dict[str, Any]]) -> dict[str, Any]:
    measured = series_math.measured(intervals)
    rows = []
    for key, label, kind in SERIES_STATS:
        s = series_math.summary(intervals, key)
        if not s["n"]:
            continue
        low = min(measured, key=lambda r: r[key] if r.get(key) is not None else float("inf"))
        high = max(measured, key=lambda r: r[key] if r.get(key) is not None else float("-inf"))
        rows.append([label, {"value": s["mean"], "kind": kind}, {"value": s["stdev"], "kind": kind}, s["cv_pct"],
                     {"value": s["min"], "kind": kind}, _interval_label(low), {"value": s["max"], "kind": kind},
                     _interval_label(high), s["n"]])
    if not rows:
        return {"id": "time_series", "title": "Time Series"}
    return {"id": "time_series", "title": "Time Series (per interval, measured window)", "tables": [table(
        "series_stats", "", ["", "Mean", "Std dev", "CV", "Min", "in", "Max", "in", "Intervals"],
        ["text", "mixed", "mixed", "pct", "mixed", "text", "mixed", "text", "count"], rows,
        ["'in' is the interval, in seconds after the end of warm-up, where the minimum or maximum fell."
         + _partial_note(intervals)])],
        "charts": ["series_iops", "series_latency"]}


def _interval_label(row: dict[str, Any]) -> str:
    if row.get("from_s") is None:
        return "-"
    return f"{row['from_s']:g}-{row['to_s']:g} s"


def _partial_note(intervals: list[dict[str, Any]]) -> str:
    partial = [r for r in intervals if r.get("partial") and r.get("phase") == "measured"]
    if not partial:
        return ""
    named = ", ".join(_interval_label(r) for r in partial)
    return (f" Left out, here and in the charts: {named}, measured for less than its length (a partial "
            "interval at the end of the run).")


STABILITY = (  # key, label, kind, a larger value is worse
    ("reads_per_s", "Physical reads/s", "rate", False),
    ("avg_read_us", "Avg physical read", "us", True),
    ("select_p99_us", "SELECT p99", "us", True),
    ("statements_per_s", "Statements/s", "rate", False),
)


def _stability(doc: dict[str, Any], intervals: list[dict[str, Any]]) -> dict[str, Any]:
    rows_in = series_math.measured(intervals)
    if len(rows_in) < 3:
        return {"id": "stability", "title": "Stability"}
    interval = get(doc, "timeline", "interval_seconds") or 1
    rows = []
    for key, label, kind, larger_is_worse in STABILITY:
        values = [r[key] for r in rows_in if r.get(key) is not None]
        if len(values) < 3:
            continue
        s = series_math.summary(rows_in, key)
        worst = (max if larger_is_worse else min)(rows_in, key=lambda r: r[key] if r.get(key) is not None else (
            float("-inf") if larger_is_worse else float("inf")))
        tail = stability.quantile(values, 0.99 if larger_is_worse else 0.01)
        drift = stability.drift(rows_in, key)
        rows.append([label, {"value": s["mean"], "kind": kind}, s["cv_pct"], {"value": worst[key], "kind": kind},
                     _interval_label(worst), {"value": tail, "kind": kind}, drift and drift["change_pct"]])
    lines = []
    drift = stability.drift(rows_in, "reads_per_s")
    if drift:
        lines.append(f"drift of physical reads/s, {drift['span']}: {drift['from']:,.0f} -> {drift['to']:,.0f}"
                     + (f" ({drift['change_pct']:+.1f}%)" if drift["change_pct"] is not None else ""))
    hists = doc.get("histograms") or {}
    bounds = hists.get("bounds_us")
    for kind in ("select", "update"):
        counts = (hists.get(kind) or {}).get("counts")
        if bounds and counts and sum(counts):
            share = stability.share_at_or_above(counts, bounds, 1000.0)
            lines.append(f"{share:.2f}% of {KIND_LABELS[kind]} statements took 1 ms or longer")
    return {"id": "stability", "title": f"Stability ({len(rows_in)} intervals of {interval:g} s)", "tables": [table(
        "stability", "", ["", "Mean", "CV", "Worst interval", "in", "p99 / p1 of intervals", "Drift"],
        ["text", "mixed", "pct", "mixed", "text", "mixed", "pct"], rows,
        ["Worst interval: the lowest throughput or the highest latency; p99 of the intervals for latencies, "
         "p1 for throughput (the level the run stays above 99% of the time); drift from the start of the window "
         "to its end."])], "lines": lines}


def _validity_lines(f: dict[str, Any]) -> list[str]:
    v = f.get("validity") or {}
    lines = []
    if v.get("blocks_read_per_row") is not None:
        lines.append(f"{v['blocks_read_per_row']:.2f} blocks read per row of the range statements: "
                     f"{min(100.0, 100 * v['blocks_read_per_row']):.0f}% of those rows came from storage "
                     "(one row per block)")
    if v.get("buffer_miss_pct") is not None:
        lines.append(f"{v['buffer_miss_pct']:.1f}% of block requests (table and index) missed shared buffers "
                     f"({v['buffer_hit_pct']:.1f}% hits)")
    if v.get("device_to_db_read_ratio") is not None:
        lines.append(f"device reads = {100 * v['device_to_db_read_ratio']:.1f}% of the engine's physical reads "
                     f"(direct I/O {'on' if v.get('direct_io') else 'off'})")
    if v.get("device_to_db_write_ratio") is not None:
        lines.append(f"device writes = {100 * v['device_to_db_write_ratio']:.1f}% of the bytes the engine wrote "
                     f"({format_bytes(v['device_write_bytes'])} against {format_bytes(v['db_write_bytes'])} of data "
                     "files, WAL and temporary files)")
    if v.get("data_to_cache_ratio") is not None:
        lines.append(f"data set {format_bytes(v['data_bytes'])} = {v['data_to_cache_ratio']:.1f}x shared_buffers "
                     f"({format_bytes(v['shared_buffers_bytes'])})")
    return lines


def _headline(f: dict[str, Any]) -> list[dict[str, Any]]:
    select = get(f, "latency", "statements", "select") or {}
    items = [
        ("Physical reads/s", get(f, "load_profile", "physical_reads_per_s"), "rate"),
        ("Avg physical read", get(f, "latency", "avg_read_us"), "us"),
        ("Read MiB/s", get(f, "io_profile", "data_read_mib_per_s"), "rate"),
        ("SELECT p99", select.get("p99_us"), "us"),
        ("Reads per host-CPU-second", get(f, "cpu", "reads_per_host_cpu_second"), "rate"),
        ("DB CPU per read", get(f, "cpu", "db_cpu_us_per_read"), "us"),
        ("Physical writes/s", get(f, "load_profile", "physical_writes_per_s"), "rate"),
        ("Statements/s", get(f, "load_profile", "statements_per_s"), "rate"),
    ]
    return [{"label": label, "value": value, "kind": kind} for label, value, kind in items]


def _series_points(intervals: list[dict[str, Any]]) -> dict[str, list[Any]]:
    keys = ("from_s", "to_s", "partial", "since_start", "phase", "reads_per_s", "writes_per_s", "read_mib_per_s",
            "write_mib_per_s", "avg_read_us", "select_p99_us", "statements_per_s", "host_busy_pct", "host_user_pct",
            "host_system_pct", "host_iowait_pct", "device_reads_per_s")
    return {k: [r.get(k) for r in intervals] for k in keys}


def _histograms(f: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {kind: s["awr_buckets"] for kind, s in (get(f, "latency", "statements") or {}).items()}


def _sum(*values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None

