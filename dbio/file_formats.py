"""What each of dbio's files must hold for its readers: result.json, sweep.json, a samples.jsonl
line and run.json. Only what something reads is declared; a key a reader never looks at may be
anything (its numbers are still finite: jsondoc.loads checks every number)."""

from __future__ import annotations

import json
from typing import Any

from dbio.jsondoc import (Malformed, Shape, anything, array, both, check, count, digits, either, flag, instant, keyed,
                          number, obj, optional, real_counts, text, tree, whole)

FIGURE = optional(number)
COUNTERS = tree(count)  # a counter snapshot: any nesting, numbers never negative, a view's null allowed


def _figures_named(*names: str, optional_names: tuple[str, ...] = (), **nested: Shape) -> Shape:
    fields = {name: FIGURE for name in names + optional_names}
    return obj({**fields, **nested}, required=names)


_LOAD_PROFILE = _figures_named(
    "logical_reads_per_s", "physical_reads_per_s", "physical_read_blocks_per_s", "physical_writes_per_s",
    "wal_bytes_per_s", "wal_writes_per_s", "wal_syncs_per_s", "statements_per_s", "selects_per_s",
    "updates_per_s", "scans_per_s", "commits_per_s", "rows_per_s", optional_names=("server_commits_per_s",),
    per_statement=optional(obj(rest=FIGURE)))
_BY_BACKEND = _figures_named("read_requests_per_s", "read_mib_per_s", "write_requests_per_s", "write_mib_per_s",
                             "wal_write_requests_per_s", "wal_write_mib_per_s")
_IO_PROFILE = _figures_named(
    "data_read_requests_per_s", "data_read_mib_per_s", "data_write_requests_per_s", "data_write_mib_per_s",
    "wal_write_requests_per_s", "wal_write_mib_per_s", by_backend=optional(obj(rest=_BY_BACKEND)))
_BUCKET = obj({"bucket": text, "count": count, "pct": number}, required=("bucket", "count", "pct"))
_STATEMENT_LATENCY = _figures_named("count", "mean_us", "p50_us", "p90_us", "p99_us", "p99_9_us", "max_us",
                                    awr_buckets=array(_BUCKET))
# single reads' latency from the read probe (stats/single_reads.py): figures, or why there are none
_SINGLE_READS = obj({**{name: FIGURE for name in ("count", "mean_us", "p50_us", "p90_us", "p99_us", "p99_9_us",
                                                  "max_us",
                                                  "fast_pct", "probe_share_pct", "rate_per_s", "nodes", "lookups",
                                                  "single", "cached", "multi", "untimed", "blocks_read", "errors")},
                     "why": optional(text), "partial": optional(text), "method": optional(text),
                     "awr_buckets": optional(array(_BUCKET)), "counts": optional(obj(rest=count))})
_LATENCY = _figures_named("avg_read_us", "avg_write_us", "avg_wal_write_us", "avg_wal_sync_us",
                          optional_names=("avg_read_us_all_backends",), statements=obj(rest=_STATEMENT_LATENCY),
                          single_reads=optional(_SINGLE_READS))
_HOST_CPU = _figures_named("user_pct", "system_pct", "iowait_pct", "steal_pct", "idle_pct", "busy_cores",
                           optional_names=("busy_pct", "busy_seconds", "accounted_pct", "context_switches_per_s",
                                           "unsampled_pct"),
                           busy_method=optional(text))  # absent: an older result, which summed the ticks
_HOST_CPU_ANY = obj({"busy_method": optional(text)}, rest=FIGURE)  # an operation's: the same, none required
_CPU = _figures_named(
    "db_cpu_seconds", "db_cpu_cores", "background_cpu_seconds", "reads_per_db_cpu_second", "db_cpu_us_per_read",
    "reads_per_second_per_core", "reads_per_host_cpu_second",
    optional_names=("dbio_client_cpu_seconds", "dbio_monitor_cpu_seconds", "cores", "cpu_wait_seconds",
                    "cpu_wait_us_per_read", "cpu_wait_pct", "io_worker_cpu_wait_seconds",
                    "io_worker_cpu_wait_us_per_read", "server_cpu_seconds", "kernel_cpu_seconds", "other_cpu_seconds",
                    "other_cpu_pct", "server_cpu_throttled_seconds", "server_cpu_throttled_periods_pct"),
    host=optional(_HOST_CPU))
_DEVICE = _figures_named("reads_per_s", "read_mib_per_s", "avg_read_us", "writes_per_s", "write_mib_per_s",
                         "avg_write_us", "utilization_pct", "avg_queue")


def _validity(value: Any, where: str) -> None:
    """Figures and ratios; a ratio comes with the figures its sentence quotes."""
    obj({"direct_io": optional(flag)}, rest=FIGURE)(value, where)
    for ratio, needs in (("data_to_cache_ratio", ("data_bytes", "cache_bytes")),
                         ("buffer_miss_pct", ("buffer_hit_pct",)),
                         ("device_to_db_write_ratio", ("device_write_bytes", "db_write_bytes"))):
        if value.get(ratio) is None:
            continue
        for name in (ratio, *needs):
            number(value.get(name), f"{where}.{name}")


# a raw-device baseline beside the run (jobs/baseline.py): fio's runs, and their figures in figures.baseline
_BASELINE_RUN = obj({"jobs": optional(count), "iodepth": optional(count), "engine": optional(text),
                     "options": optional(array(text)),
                     **{name: FIGURE for name in ("reads_per_s", "avg_read_us", "p99_read_us", "host_cpu_us_per_read",
                                                  "seconds")}})
_BASELINE = obj({"version": optional(text), "place": optional(text), "files": optional(count),
                 "sessions": optional(count), "started_at": FIGURE, "ended_at": FIGURE,
                 "runs": optional(obj(rest=_BASELINE_RUN)),
                 "write_side": optional(obj({
                     "writes": optional(obj({"jobs": optional(count), "options": optional(array(text)),
                                             **{name: FIGURE for name in ("writes_per_s", "avg_write_us",
                                                                          "p99_write_us",
                                                                          "host_cpu_us_per_write", "seconds")}})),
                     "redo_sync": optional(obj({"method": optional(text), "command": optional(array(text)),
                                                "syncs_per_s": FIGURE, "avg_sync_us": FIGURE}))}))})
HOTSPOT_PART = ("mean_us", "p99_us", "statements_per_s", "rows_per_s")
_MEASURED_FIGURES = obj({"window_seconds": count, "baseline": optional(obj(rest=FIGURE)), "load_profile": _LOAD_PROFILE,
                         "io_profile": _IO_PROFILE,
                         "latency": _LATENCY, "cpu": _CPU, "devices": optional(obj(rest=_DEVICE)),
                         "validity": optional(_validity),
                         # a hot-spot run's parts (stats/hotspot.py), which the report words with them
                         "hotspot": optional(obj({"hot": obj(rest=FIGURE, required=HOTSPOT_PART),
                                                  "cold": obj(rest=FIGURE, required=HOTSPOT_PART)},
                                                 required=("hot", "cold"))),
                         # --rate's (stats/rate.py): the rate asked and achieved, held or not, where it fell behind
                         "rate": optional(obj({"schedule": optional(text), "held": optional(anything),
                                               "behind": optional(obj({"from_s": count, "to_s": count})),
                                               "asked_per_s": count, "achieved_per_s": count},
                                              rest=FIGURE, required=("asked_per_s", "achieved_per_s")))},
                        required=("load_profile", "io_profile", "latency", "cpu"))


def _figures(value: Any, where: str) -> None:
    """A window that was measured has every section; one that was not has none to read."""
    obj({"window_seconds": optional(count)})(value, where)
    if value.get("window_seconds"):
        _MEASURED_FIGURES(value, where)


_SERIES_FIGURES = ("reads_per_s", "read_mib_per_s", "writes_per_s", "write_mib_per_s", "wal_mib_per_s", "avg_read_us",
                   "select_p99_us", "statements_per_s", "host_busy_pct", "host_user_pct", "host_system_pct",
                   "host_unsampled_pct", "host_iowait_pct", "host_steal_pct", "device_reads_per_s", "db_cpu_cores",
                   "wal_received_mib_per_s", "replay_lag_mib", "replay_lag_seconds")
_SERIES_ROW = obj({"k": whole, "t": number, "since_start": number, "work_to": FIGURE, "phase": optional(text),
                   **{name: FIGURE for name in _SERIES_FIGURES},
                   # a server's NULL among them (a connection authenticating) in results of an older dbio
                   "other_sessions_active": FIGURE, "other_session_names": optional(array(optional(text)))})
_HISTOGRAM = obj({"counts": array(count), "sum_us": FIGURE, "max_us": FIGURE})


def _histograms(value: Any, where: str) -> None:
    obj({"bounds_us": array(count)}, rest=_HISTOGRAM)(value, where)
    buckets = len(value.get("bounds_us") or []) + 1
    for kind, histogram in value.items():
        if kind != "bounds_us" and len(histogram.get("counts") or [None] * buckets) != buckets:
            raise Malformed(f"{where}.{kind}.counts has {len(histogram['counts'])} buckets, "
                            f"expected {buckets} (one more than bounds_us)")


def _setup(value: Any, where: str) -> None:
    obj({name: optional(count) for name in ("loaded_bytes", "seconds", "mb_per_s")})(value, where)
    if value.get("seconds") and value.get("loaded_bytes"):  # the report quotes the load rate with them
        count(value.get("mb_per_s"), f"{where}.mb_per_s")


class OtherKind(Malformed):
    """The document is another kind (its `format` is not the one asked for)."""


class UnknownVersion(Malformed):
    """format_version is not one this dbio reads."""


def check_header(document: Any, form: str, known_version: int, kind: str,
                 other: type[OtherKind] = OtherKind) -> None:
    """A versioned document of dbio's: its format (else `other`, "is not a dbio KIND") and its version
    (else UnknownVersion, saying which), checked before its shape is."""
    if not isinstance(document, dict) or document.get("format") != form:
        raise other(f"is not a dbio {kind}")
    try:
        check(document.get("format_version"), version(known_version))
    except Malformed as exc:
        raise UnknownVersion(str(exc)) from None


def version(known: int) -> Shape:
    """format_version: an integer this dbio knows (a string, a float or true is refused, not compared)."""
    def check_version(value: Any, where: str) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise Malformed(f"has format_version {json.dumps(value)}, not an integer")
        if value > known:
            raise Malformed(f"has result format {value}, from a newer dbio (this one reads formats 1 to {known})")
        if value < 1:
            raise Malformed(f"has format version {value}; result formats start at 1")
    return check_version


# the capabilities' facts reports word themselves with (engines/base.py Capabilities)
_CAPABILITY_FACTS = {"times_data_io": optional(flag), "times_redo_io": optional(flag), "cache_name": optional(text),
                     "redo_directory": optional(text), "settings_shown": optional(array(text)),
                     "maintenance_process": optional(text), "maintenance_name": optional(text)}
SNAPSHOT = both(COUNTERS, obj({"t": number}, required=("t",)))  # one node's raw snapshot
_RAW = optional(SNAPSHOT)
# What a run takes from a server as one node's reading (run/readings.refused): its raw snapshot and its
# normalized counters, each number real and never negative, so that the result is one its readers accept.
READING = real_counts(obj({"t": number}, required=("t",)))  # both(real_numbers, SNAPSHOT) in one walk
COUNTER_RECORD = real_counts()  # both(real_numbers, COUNTERS) in one walk
# a reading: every node's raw snapshot ("engine": the one node's, before result format 2) and /proc
_READING = obj({"engine": _RAW, "nodes": optional(obj(rest=_RAW)), "os": optional(COUNTERS)})
# a node's own sessions' counts (dbio merge adds them) and its server's identity (merge takes a server once)
_NODE_READING = both(COUNTERS, obj({"sessions": optional(obj(rest=optional(count)))}))
_NODE = obj({"name": text, "engine": optional(text), "role": text,
             "server": optional(obj({"identity": optional(text)})),
             "capabilities": optional(obj(_CAPABILITY_FACTS)),
             "normalized": optional(obj(rest=optional(_NODE_READING))),
             "figures": optional(_figures), "series": optional(array(_SERIES_ROW))},
            required=("name", "role"))


def result(known_version: int) -> Shape:
    return obj({
        "format": text, "format_version": version(known_version), "status": text, "status_reason": optional(text),
        "label": optional(text), "run_id": optional(either(text, whole, expected="a run id")),
        "dbio_version": optional(text), "created_at": optional(text),
        "timeline": optional(obj({name: optional(count) for name in (
            "window_seconds", "warmup_seconds", "connect_seconds", "slice_seconds", "interval_seconds")}
            | {"start_seconds": count, "window_start": optional(instant), "window_end": optional(instant)})),
        "config": obj({"workload": optional(obj({name: optional(count) for name in (
            "scale", "schemas", "sessions", "threads_per_schema")})),
            "run": optional(obj({"wait_sample_interval": optional(count)}))}),
        "setup": optional(_setup),
        "environment": optional(obj({
            "host": optional(obj({name: optional(count) for name in ("memory_bytes", "memory_available_bytes")})),
            "server": optional(obj({"settings": optional(obj(rest=optional(obj())))})),
            "storage": optional(obj({"data_directory": optional(obj())}))})),
        "capabilities": optional(obj({"missing": optional(array(obj({"figure": text, "why": text},
                                                                          required=("figure", "why")))),
                                      **_CAPABILITY_FACTS})),
        "plans": optional(obj({"select": optional(obj({"nodes": optional(array(text))}))})),
        "sessions": optional(array(obj())),
        "events": optional(array(obj({"t": FIGURE, "since_start": FIGURE, "kind": optional(text),
                                      "message": optional(text)}))),
        # engine counters that went back inside the window (stats/resets.py), which the verdict names
        "counter_resets": optional(array(obj({"node": optional(text), "counter": text, "since_start": FIGURE,
                                              "before": FIGURE, "after": FIGURE}, required=("counter",)))),
        "snapshots": optional(obj(rest=optional(_READING))),
        "normalized": optional(obj(rest=optional(both(COUNTERS, obj({"checkpoints": optional(obj(rest=optional(
            count)))}))))),
        "totals": optional(obj(rest=count)),
        "histograms": optional(_histograms),
        "series": optional(array(_SERIES_ROW)),
        "waits": optional(obj({"counts": optional(obj(rest=count)), "samples": optional(count),
                               "interval_seconds": optional(count)})),
        "figures": _figures,
        "baseline": optional(_BASELINE),
        "nodes": optional(array(_NODE)),
        # a part of one run (--part i/N): dbio merge relies on each of these
        "part": optional(obj({"index": whole, "of": whole, "run": text}, required=("index", "of", "run"))),
        # the signals that came once the window had opened (jobs/after_window.py)
        "signal": optional(obj({"name": text, "count": whole, "during": optional(text)}, required=("name", "count"))),
    }, required=("format", "format_version", "status", "config", "figures"))


# -- sweep.json ----------------------------------------------------------------------------------

def _step_name(value: Any, where: str) -> None:
    """A step's directory inside the sweep's: a plain name, never a path elsewhere."""
    text(value, where)
    if not value or "/" in value or "\0" in value or value in (".", ".."):
        raise Malformed(f"{where} is {value!r}, not the name of a step directory")


_STEP = obj({"index": whole, "name": _step_name, "status": text, "values": obj(rest=text),
             "headline": optional(obj({"reads_per_s": FIGURE, "avg_read_us": FIGURE})),
             "window_seconds": FIGURE, "seconds": FIGURE, "peak": flag, "error": optional(text),
             "earlier_attempts": array(text), "round": whole, "group": _step_name,
             "probe": obj({"valid": flag, "value_us": FIGURE, "why": optional(text), "asked_per_s": FIGURE,
                           "achieved_per_s": FIGURE, "held": optional(flag)}, required=("valid", "value_us"))},
            required=("name", "status", "values"))
# sweep --objective: the search's request and, per combination searched, its answer
_SEARCH = obj({"objective": text, "max_sessions": whole, "resolution": count, "gain": count, "axis": text,
               "max_rate": whole,
               "answers": array(obj({"group": text, "line": text, "best": optional(text), "reason": text},
                                    required=("group", "line", "reason")))},
              required=("objective", "max_sessions", "resolution", "gain", "answers"))


def sweep(known_version: int) -> Shape:
    return obj({"format": text, "format_version": version(known_version), "status": text, "label": optional(text),
                "created_at": optional(text), "dbio_version": optional(text), "client": optional(text),
                "base": obj(), "vary": array(array(either(text, array(text), expected="a key or its values"))),
                "until_peak": flag, "peak_gain": count, "knee_gain": count, "wall_seconds": optional(count),
                "baseline": optional(obj({"path": optional(text)})), "capacity": optional(obj()),
                "steps": array(_STEP), "repeat": whole, "search": optional(_SEARCH), "counted": optional(array(text)),
                "op": optional(obj({"operation": text}, required=("operation",)))},
               required=("format", "format_version", "status", "base", "steps"))


# -- repeat.json (run --repeat N) -----------------------------------------------------------------

_SPREAD = obj({"n": whole, "median": number, "min": number, "max": number, "spread_pct": optional(number)},
              required=("n", "median", "min", "max"))


def repeat_set(known_version: int) -> Shape:
    return obj({"format": text, "format_version": version(known_version), "status": text, "label": optional(text),
                "created_at": optional(text), "dbio_version": optional(text), "repeat": whole,
                "members": array(obj({"name": _step_name, "status": text}, required=("name", "status"))),
                "spread": obj(rest=_SPREAD)},
               required=("format", "format_version", "status", "repeat", "members"))


# -- samples.jsonl and run.json --------------------------------------------------------------------

_KIND_TALLY = obj({"count": count, "sum_us": count, "max_us": count, "hist": keyed(digits, count)},
                  required=("count", "sum_us", "max_us", "hist"))
STATEMENTS = obj({"select": _KIND_TALLY, "update": _KIND_TALLY, "scan": _KIND_TALLY, "hot": _KIND_TALLY,
                  "intended": _KIND_TALLY, "lag": _KIND_TALLY}, rest=count)

SAMPLE = obj({"k": whole, "t": number, "phase": optional(text), "engine": _RAW, "nodes": optional(obj(rest=_RAW)),
              "os": optional(COUNTERS), "waits": optional(obj(rest=count)),
              "statements": optional(STATEMENTS), "late_statements": optional(keyed(digits, STATEMENTS))})

MANIFEST = obj({
    "client": text, "run_id": either(whole, digits, expected="a run id"), "created": number,
    "plan": obj({"warmup": count, "run_time": count, "interval": count, "slice_seconds": count,
                 "bounds_us": array(count)}, required=("warmup", "run_time", "interval", "slice_seconds",
                                                      "bounds_us")),
    "config": obj({"workload": obj({name: count for name in ("scale", "schemas", "work_unit")},
                                   required=("scale", "schemas", "work_unit")),
                   "run": obj({"label": optional(text), "wait_sample_interval": count},
                              required=("label", "wait_sample_interval"))}, required=("workload", "run")),
    "server": obj({"settings": obj(rest=optional(obj())), "cache_bytes": count},
                  required=("settings", "cache_bytes")),
    "capabilities": obj({"direct_io": anything, "local": anything, **_CAPABILITY_FACTS}),
    "host": obj(), "setup": anything, "storage": anything,
    "nodes": optional(array(obj({"name": text, "engine": text, "role": text, "server": obj(), "capabilities": obj()},
                                required=("name", "engine", "role", "server", "capabilities")))),
}, required=("client", "run_id", "created", "plan", "config", "server", "capabilities", "host", "setup", "storage"))


# -- result.json of a maintenance operation (dbio ops, format dbio-ops) ------------------------------

_OPS_DEVICE = obj({"roles": optional(array(text)), **{name: FIGURE for name in (
    "reads_per_s", "writes_per_s", "read_mib_per_s", "write_mib_per_s", "read_bytes", "write_bytes", "avg_read_us",
    "avg_write_us", "utilization_pct", "avg_queue")}})
_OPS_READING = optional(obj({"t": number, "stat": optional(COUNTERS), "disks": optional(obj(rest=COUNTERS))},
                            required=("t",)))


def ops(known_version: int) -> Shape:
    return obj({
        "format": text, "format_version": version(known_version), "kind": text, "operation": text, "status": text,
        "status_reason": optional(text), "label": optional(text), "created_at": optional(text),
        "dbio_version": optional(text), "config": obj(), "environment": optional(obj()),
        "places": optional(obj(rest=array(text))), "detail": optional(obj()),
        "readings": optional(obj({"begin": _OPS_READING, "end": _OPS_READING})),
        "figures": obj({"seconds": FIGURE, "window_seconds": FIGURE, "bytes": FIGURE, "mb_per_s": FIGURE,
                        "devices": optional(obj(rest=_OPS_DEVICE)),
                        "cpu": optional(obj({"host": optional(_HOST_CPU_ANY)}))}, rest=optional(obj(rest=anything))),
    }, required=("format", "format_version", "kind", "operation", "status", "config", "figures"))
