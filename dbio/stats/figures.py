"""The figures of a measured window, from its two snapshots and the sessions' own counts (pure).

Engine counters arrive already normalized (engine-neutral names); OS counters are /proc
readings. Every figure that cannot be computed is None, never a guess.
"""

from __future__ import annotations

from typing import Any

from dbio.collect import procfs
from dbio.stats import histogram, host_cpu, hotspot, access_profile, rate as rates, single_reads, writesets
from dbio.stats.counters import delta, get, rate, ratio
from dbio.stats.resets import without

MiB = 1 << 20
KINDS = ("select", "update", "scan", "hot")  # run/tally.KINDS
PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99_9", 0.999))


# The host's readings (CPU, devices) must span the window they are divided over: beyond this many
# seconds apart (or a tenth of the window), they are no figure of it (a lone server frozen to the end:
# its window closed at its last answer, the host's end reading came at the run's end, 9 s later).
OS_SPAN_SLACK = 0.5
# Client sessions not the run's own did at most this share (%) of the client sessions' reads or writes:
# below, noise (a catalog read); the report warns beyond it, dbio merge calls runs' counts apart beyond it.
OTHER_SESSIONS_SHARE_LIMIT_PCT = 1.0


def os_spans_window(window: dict[str, Any], seconds: float) -> bool:
    """Whether the host's begin and end readings cover the window's seconds (pure)."""
    ob, oe = window.get("os_begin"), window.get("os_end")
    if not ob or not oe or not isinstance(ob.get("t"), (int, float)) or not isinstance(oe.get("t"), (int, float)):
        return True  # nothing to judge: older results, or no readings (then no host figures anyway)
    return abs((oe["t"] - ob["t"]) - seconds) <= max(OS_SPAN_SLACK, 0.1 * seconds)


def derive(window: dict[str, Any]) -> dict[str, Any]:
    seconds = float(window["seconds"])
    if not os_spans_window(window, seconds):
        window = {**window, "os_begin": None, "os_end": None}
    # a counter that went back inside the window (stats/resets.py) differs by nothing true: no figure on it
    d = without(delta(window["engine_begin"], window["engine_end"]), window.get("reset_counters") or [])
    totals = window["totals"]
    out: dict[str, Any] = {"window_seconds": seconds}
    page = window.get("page_bytes") or 8192  # the engine's read unit (Capabilities.page_bytes)
    out["load_profile"] = _load_profile(d, totals, seconds, page)
    out["io_profile"] = _io_profile(d, seconds)
    out["latency"] = _latency(d, window["histograms"], io_timing=window.get("io_timing", True),
                              wal_io_timing=window.get("wal_io_timing", True))
    if window.get("read_probe") is not None:  # single reads' distribution (run/read_probe.py)
        out["latency"]["single_reads"] = single_reads.derive(window["read_probe"], window["histograms"]["bounds_us"],
                                                             get(d, "client", "reads"))
    out["cpu"] = _cpu(window, d, seconds)
    out["devices"] = _devices(window.get("os_begin"), window.get("os_end"), seconds)
    unread = procfs.unread_over(window.get("os_begin"), window.get("os_end"))
    if unread:  # named, so that the report says which device's figures are absent, and why
        out["devices_unread"] = unread
    out["validity"] = _validity(window, d, out["devices"], totals, whole=not unread)
    out["other_sessions"] = _other_sessions(d)
    out["replication"] = _replication(window["engine_end"], d, seconds)
    out["writesets"] = writesets.derive(window["engine_end"], d, seconds, totals)
    out["shape"] = access_profile.derive(d, totals, window, seconds)
    # --rate: the rate asked and achieved, the latency from the intended start (stats/rate.py); held is judged after
    scheduled = rates.derive(window.get("rate_asked_per_s"), window.get("rate_schedule") or "poisson",
                             window.get("latency_limit_us") or 0.0, totals, window["histograms"],
                             window.get("scheduled_seconds") or seconds)
    if scheduled is not None:
        out["rate"] = scheduled
    out["hotspot"] = hotspot.derive(totals, out["latency"]["statements"], out["load_profile"]["physical_reads_per_s"],
                                    out["latency"]["avg_read_us"], seconds)
    return out


def _replication(end: dict[str, Any], d: dict[str, Any], s: float) -> dict[str, Any] | None:
    """A standby's WAL received per second in the window and its replay lag at the window's end (its
    largest in any interval is added from the series, see run/assemble.py). None: not a standby."""
    received = get(d, "replication", "wal_received_bytes")
    if not isinstance((end or {}).get("replication"), dict):
        return None
    lag = get(end, "gauges", "replay_lag_bytes")
    return {"wal_received_mib_per_s": rate(_mib(received), s),
            "replay_lag_mib_end": _mib(lag), "replay_lag_seconds_end": get(end, "gauges", "replay_lag_seconds"),
            "replay_lag_mib_max": _mib(lag), "replay_lag_seconds_max": get(end, "gauges", "replay_lag_seconds")}


def lag_maxima(replication: dict[str, Any] | None, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A standby's replication figures with the largest replay lag of the window's samples (pure)."""
    if replication is None:
        return None
    out = dict(replication)
    for key, name in (("replay_lag_mib", "replay_lag_mib_max"), ("replay_lag_seconds", "replay_lag_seconds_max")):
        seen = [r[key] for r in rows if r.get("phase") == "measured" and r.get(key) is not None]
        if out.get(name) is not None:
            seen.append(out[name])
        out[name] = max(seen) if seen else None
    return out


def _percent(part: float | None, whole: float | None) -> float | None:
    share = ratio(part, whole)
    return None if share is None else 100.0 * share


def _other_sessions(d: dict[str, Any]) -> dict[str, Any] | None:
    """What client sessions other than the run's own did in the window: every client session's
    data-file I/O less the run's sessions' own (where the engine counts them apart)."""
    ours, clients = d.get("sessions"), d.get("client")
    if not isinstance(ours, dict) or not isinstance(clients, dict):
        return None
    out: dict[str, Any] = {}
    for key in ("reads", "writes"):
        total, own = clients.get(key), ours.get(key)
        other = None if total is None or own is None else max(0.0, total - own)
        out[key] = other
        out[f"{key[:-1]}_share_pct"] = None if other is None or not total else 100.0 * other / total
    return out


def _load_profile(d: dict[str, Any], totals: dict[str, Any], s: float, page: int) -> dict[str, Any]:
    reads = get(d, "data", "reads")
    read_blocks = _blocks(get(d, "data", "read_bytes"), page)
    hits = get(d, "data", "hits")
    statements = sum(totals.get(k, 0) for k in ("selects", "updates", "scans"))
    logical = None if hits is None or read_blocks is None else hits + read_blocks
    return {
        "logical_reads_per_s": rate(logical, s),
        "physical_reads_per_s": rate(reads, s),
        "physical_read_blocks_per_s": rate(read_blocks, s),
        "physical_writes_per_s": rate(get(d, "data", "writes"), s),
        "wal_bytes_per_s": rate(get(d, "wal", "bytes"), s),
        "wal_writes_per_s": rate(get(d, "wal", "writes"), s),
        "wal_syncs_per_s": rate(get(d, "wal", "syncs"), s),
        "statements_per_s": rate(statements, s),
        "selects_per_s": rate(totals.get("selects"), s),
        "updates_per_s": rate(totals.get("updates"), s),
        "scans_per_s": rate(totals.get("scans"), s),
        "commits_per_s": rate(totals.get("updates"), s),  # the workload's: one per UPDATE
        "server_commits_per_s": rate(get(d, "db", "commits"), s),  # includes dbio's own slices and samples
        "rows_per_s": rate(totals.get("rows"), s),
        "iterations_per_s": rate(totals.get("iterations"), s),
        "per_statement": {
            "logical_reads": ratio(logical, statements),
            "physical_reads": ratio(reads, statements),
            "physical_writes": ratio(get(d, "data", "writes"), statements),
            "wal_bytes": ratio(get(d, "wal", "bytes"), statements),
        },
    }


def _io_profile(d: dict[str, Any], s: float) -> dict[str, Any]:
    data_reads, data_writes = get(d, "data", "reads"), get(d, "data", "writes")
    wal_writes = get(d, "wal", "writes")
    wal_write_bytes = get(d, "wal", "write_bytes")
    profile: dict[str, Any] = {
        "data_read_requests_per_s": rate(data_reads, s),
        "data_read_mib_per_s": rate(_mib(get(d, "data", "read_bytes")), s),
        "data_write_requests_per_s": rate(data_writes, s),
        "data_write_mib_per_s": rate(_mib(get(d, "data", "write_bytes")), s),
        "wal_write_requests_per_s": rate(wal_writes, s),
        "wal_write_mib_per_s":
            rate(_mib(wal_write_bytes if wal_write_bytes is not None else get(d, "wal", "bytes")), s),
        "wal_write_mib_is_generated": wal_write_bytes is None,
        "client_read_requests_per_s": rate(get(d, "client", "reads"), s),
    }
    total_requests = _sum(data_reads, data_writes, wal_writes)
    profile["total_requests_per_s"] = rate(total_requests, s)
    by_backend = d.get("by_backend")
    if by_backend:
        profile["by_backend"] = {
            btype: {"read_requests_per_s": rate(v.get("reads"), s),
                    "read_mib_per_s": rate(_mib(v.get("read_bytes")), s),
                    "write_requests_per_s": rate(v.get("writes"), s),
                    "write_mib_per_s": rate(_mib(v.get("write_bytes")), s),
                    "wal_write_requests_per_s": rate(v.get("wal_writes"), s),
                    "wal_write_mib_per_s": rate(_mib(v.get("wal_write_bytes")), s)}
            for btype, v in sorted(by_backend.items())
            if any((v.get(k) or 0) > 0 for k in ("reads", "writes", "wal_writes"))
        }
    else:
        profile["by_backend"] = None
    return profile


def _latency(d: dict[str, Any], hists: dict[str, Any], *, io_timing: bool, wal_io_timing: bool) -> dict[str, Any]:
    def avg_us(time_ms: Any, count: Any, timed: bool = io_timing) -> float | None:
        # Without the server's I/O timing the summed times are zero: unavailable, not 0 us.
        r = ratio(time_ms, count) if timed else None
        return None if r is None else r * 1000.0

    out: dict[str, Any] = {
        # The client sessions' own reads only: when they read nothing, their latency is absent,
        # never another process's (background maintenance, I/O workers) standing in for it.
        "avg_read_us": avg_us(get(d, "client", "read_time_ms"), get(d, "client", "reads")),
        "avg_read_us_all_backends": avg_us(get(d, "data", "read_time_ms"), get(d, "data", "reads")),
        "avg_write_us": avg_us(get(d, "data", "write_time_ms"), get(d, "data", "writes")),
        "avg_wal_write_us": avg_us(get(d, "wal", "write_time_ms"), get(d, "wal", "writes"), wal_io_timing),
        "avg_wal_sync_us": avg_us(get(d, "wal", "sync_time_ms"), get(d, "wal", "syncs"), wal_io_timing),
    }
    bounds = hists["bounds_us"]
    statements: dict[str, Any] = {}
    for kind in KINDS:
        h = hists.get(kind)
        if not h or not histogram.total(h["counts"]):
            continue
        counts, n = h["counts"], histogram.total(h["counts"])
        stats = {"count": n, "mean_us": h["sum_us"] / n, "max_us": h["max_us"]}
        for name, q in PERCENTILES:
            stats[f"{name}_us"] = histogram.percentile(counts, bounds, q, h["max_us"])
        buckets = histogram.awr_buckets(counts, bounds)
        stats["awr_buckets"] = [{"bucket": label, "count": c, "pct": 100.0 * c / n} for label, c in buckets]
        statements[kind] = stats
    out["statements"] = statements
    return out


def _cpu(window: dict[str, Any], d: dict[str, Any], s: float) -> dict[str, Any]:
    cores = window.get("cores") or 1
    ob, oe = window.get("os_begin") or {}, window.get("os_end") or {}
    stat = delta(ob.get("stat"), oe.get("stat")) if ob.get("stat") and oe.get("stat") else None
    reads = get(d, "data", "reads")
    out: dict[str, Any] = {"cores": cores}
    busy = None
    if stat:
        # /proc counters move continuously: they are priced over the readings' own times.
        out["host"] = host_cpu.shares(stat, _elapsed(ob, oe) or s, cores)
        busy = out["host"]["busy_seconds"] if out["host"] else None
        # Host CPU is this machine's: it prices the reads only when the server runs here.
        out["reads_per_host_cpu_second"] = ratio(reads, busy) if window.get("local", True) else None
    else:
        out["host"] = None
        out["reads_per_host_cpu_second"] = None
    db_cpu = _sessions_cpu_delta(ob.get("session_cpu"), oe.get("session_cpu"))
    # per read of the sessions' own (the reads whose average the report gives), where the engine counts them apart
    own_reads = get(d, "client", "reads")
    out.update(_cpu_wait(ob.get("session_run_delay"), oe.get("session_run_delay"),
                         reads if own_reads is None else own_reads, _elapsed(ob, oe) or s))
    out.update(_read_helpers_wait(ob.get("read_helper_run_delay"), oe.get("read_helper_run_delay"), reads))
    out.update(_throttling(ob.get("server_cpu_throttling"), oe.get("server_cpu_throttling")))
    bg_cpu = _cpu_delta(ob.get("background_cpu"), oe.get("background_cpu"))
    client_cpu = delta(ob.get("client_cpu"), oe.get("client_cpu"))
    server_cpu = delta(ob.get("server_cpu_total"), oe.get("server_cpu_total"))
    # the kernel's own: interrupts (serving the reads among others) and its threads (kworkers, dm-crypt, ...)
    kernel_cpu = None if not stat else (stat.get("irq") or 0.0) + (stat.get("softirq") or 0.0) + \
        (delta(ob.get("kernel_threads_cpu_total"), oe.get("kernel_threads_cpu_total")) or 0.0)
    out.update(_other_cpu(busy if window.get("local", True) else None, server_cpu, client_cpu, kernel_cpu))
    monitor_cpu = delta(ob.get("monitor_cpu_total"), oe.get("monitor_cpu_total"))
    out.update({
        "db_cpu_seconds": db_cpu,
        "db_cpu_cores": rate(db_cpu, s),
        "background_cpu_seconds": bg_cpu,
        "dbio_client_cpu_seconds": client_cpu,
        "dbio_monitor_cpu_seconds": monitor_cpu,  # server processes answering dbio's sampling
        "reads_per_db_cpu_second": ratio(reads, db_cpu),
        "reads_per_second_per_core": ratio(rate(reads, s), cores),
        "db_cpu_us_per_read": None if db_cpu is None or not reads else 1e6 * db_cpu / reads,
    })
    return out


def _elapsed(begin: dict[str, Any], end: dict[str, Any]) -> float | None:
    """Real seconds between two /proc readings, when both carry their time."""
    if begin.get("t") is None or end.get("t") is None or end["t"] <= begin["t"]:
        return None
    return end["t"] - begin["t"]


def _other_cpu(busy: float | None, server: float | None, client: float | None,
               kernel: float | None) -> dict[str, Any]:
    """The host's busy CPU that neither the database servers (every process or thread of theirs, helpers and
    other clients' sessions included), dbio, nor the kernel's own interrupts and threads used: other programs.
    None where one of them was not read."""
    out: dict[str, Any] = {"server_cpu_seconds": server, "kernel_cpu_seconds": kernel, "other_cpu_seconds": None,
                           "other_cpu_pct": None}
    if busy is None or server is None or client is None or kernel is None:
        return out
    # a kernel that accounts by ticks counts an interrupt in the interrupted process's time too (no
    # IRQ_TIME_ACCOUNTING), so this can take too much: other work is understated then, never below nothing
    out["other_cpu_seconds"] = other = max(0.0, busy - server - client - kernel)
    out["other_cpu_pct"] = 100.0 * other / busy if busy else None
    return out


def _cpu_wait(begin: dict[str, float] | None, end: dict[str, float] | None, reads: float | None,
              seconds: float) -> dict[str, Any]:
    """What the sessions waited for a CPU, ready to run (/proc schedstat run delay); None when not read
    (an older result, a remote server, a kernel without schedstat). Per read, as DB CPU is; and as a
    share of the time of the sessions seen at both ends (all of the window's, or no figure)."""
    waited = _sessions_cpu_delta(begin, end)
    sessions = len(set(begin or {}) & set(end or {}))
    return {"cpu_wait_seconds": waited,
            "cpu_wait_us_per_read": None if waited is None or not reads else 1e6 * waited / reads,
            "cpu_wait_pct": None if waited is None or not sessions or seconds <= 0 else
            100.0 * waited / (sessions * seconds)}


def _throttling(begin: dict[str, float] | None, end: dict[str, float] | None) -> dict[str, Any]:
    """How hard the server's CPU quota (a cgroup's) held it back in the window: the share of the quota's
    periods (100 ms by default) in which it ran out, and the time its CPUs' run queues were held. None
    when the server has no quota or it was not read at both ends, or not of the same cgroups at both (a quota
    set in the window, a node's server gone: a sum of other cgroups' counters is no delta)."""
    if not begin or not end or begin.get("cgroups") != end.get("cgroups"):
        return {"server_cpu_throttled_seconds": None, "server_cpu_throttled_periods_pct": None}
    periods = delta(begin.get("periods"), end.get("periods"))
    throttled = delta(begin.get("throttled_periods"), end.get("throttled_periods"))
    return {"server_cpu_throttled_seconds": delta(begin.get("throttled_seconds"), end.get("throttled_seconds")),
            "server_cpu_throttled_periods_pct": None if throttled is None or not periods else
            100.0 * throttled / periods}


def _read_helpers_wait(begin: dict[str, float] | None, end: dict[str, float] | None,
                       reads: float | None) -> dict[str, Any]:
    """What the processes doing the reads for the sessions (I/O workers) waited for a CPU: a session's read
    waits for its worker to run, so it all lies within the reads; per read of every process, as the workers
    serve them all. None when there are none (io_method is not worker) or they were not read."""
    waited = _cpu_delta(begin, end)
    return {"io_worker_cpu_wait_seconds": waited,
            "io_worker_cpu_wait_us_per_read": None if waited is None or not reads else 1e6 * waited / reads}


def _sessions_cpu_delta(begin: dict[str, float] | None, end: dict[str, float] | None) -> float | None:
    """CPU seconds of the sessions over the window; None when one seen at its start is not at its end (it
    ended, or failed): its CPU up to then is not known, and the reads it made are in the window's."""
    if not begin or not end or any(pid not in end for pid in begin):
        return None
    return _cpu_delta(begin, end)


def _cpu_delta(begin: dict[str, float] | None, end: dict[str, float] | None) -> float | None:
    """CPU seconds of processes seen at both ends (a process that ended is not counted)."""
    if not begin or not end:
        return None
    return sum(max(0.0, end[pid] - begin[pid]) for pid in end if pid in begin)


def _devices(ob: dict[str, Any] | None, oe: dict[str, Any] | None, s: float) -> dict[str, Any]:
    if not ob or not oe or not ob.get("disks") or not oe.get("disks"):
        return {}
    out = {}
    for name, end in oe["disks"].items():
        if name not in ob["disks"]:  # unread at the start: its counts since boot are no figure of the window
            continue
        d = delta(ob["disks"][name], end)
        if d is None:
            continue
        reads, writes = d.get("reads"), d.get("writes")
        out[name] = {
            "reads_per_s": rate(reads, s), "read_mib_per_s": rate(_mib(_sectors(d.get("sectors_read"))), s),
            "avg_read_us": _times_1000(ratio(d.get("read_ms"), reads)),
            "writes_per_s": rate(writes, s), "write_mib_per_s": rate(_mib(_sectors(d.get("sectors_written"))), s),
            "avg_write_us": _times_1000(ratio(d.get("write_ms"), writes)),
            "utilization_pct": None if s <= 0 or d.get("io_ms") is None else min(100.0,
                                                                                 100.0 * d["io_ms"] / (s * 1000)),
            "avg_queue": None if s <= 0 or d.get("weighted_io_ms") is None else d["weighted_io_ms"] / (s * 1000),
            "reads": reads, "writes": writes, "write_bytes": _sectors(d.get("sectors_written")),
            "read_bytes": _sectors(d.get("sectors_read")),
        }
    return out


def _validity(window: dict[str, Any], d: dict[str, Any], devices: dict[str, Any],
              totals: dict[str, Any], whole: bool = True) -> dict[str, Any]:
    """whole: every device was read at both ends; else the devices' sums are a part, and no figure."""
    if not whole:
        devices = {}
    reads = get(d, "data", "reads")
    # Rows of the random-range statements (a SELECT touches work_unit rows, an UPDATE
    # update_work_unit) against the single-block reads that served them; the scan table's
    # ring-buffer reads are apart.
    work_unit = window.get("work_unit") or 0
    random_rows = totals.get("selects", 0) * work_unit + totals.get("updates", 0) * (
        window.get("update_work_unit") or work_unit)
    page = window.get("page_bytes") or 8192
    random_blocks = _blocks(get(d, "client_normal", "read_bytes"), page)
    read_blocks = _blocks(get(d, "data", "read_bytes"), page)
    hits = get(d, "data", "hits")
    device_reads = sum(v["reads"] or 0 for v in devices.values()) if devices else None
    device_read_bytes = sum(v.get("read_bytes") or 0 for v in devices.values()) if devices else None
    device_write_bytes = sum(v["write_bytes"] or 0 for v in devices.values()) if devices else None
    db_write_bytes = _engine_write_bytes(d)
    data_bytes = window.get("data_bytes")
    cache = window.get("cache_bytes")
    requests = None if hits is None or read_blocks is None else hits + read_blocks
    return {
        "buffer_hit_pct": _percent(hits, requests),
        "buffer_miss_pct": _percent(read_blocks, requests),
        # One row per block (InnoDB: per page): ~1 block read per row
        # touched means every row came from storage; more, that index blocks were read too.
        "blocks_read_per_row": ratio(random_blocks, random_rows or None),
        "device_reads": device_reads,
        "db_reads": reads,
        # bytes too: a multi-block read (a scan's 128 KiB) crossing a file extent is split by the block
        # layer into several device requests, whose bytes still add up to the engine's
        "device_read_bytes": device_read_bytes,
        "db_read_bytes": get(d, "data", "read_bytes"),
        "device_to_db_read_ratio": ratio(device_reads, reads),
        "device_write_bytes": device_write_bytes,
        "db_write_bytes": db_write_bytes,
        "device_to_db_write_ratio": ratio(device_write_bytes, db_write_bytes),
        "direct_io": window.get("direct_io"),
        "data_bytes": data_bytes,
        "cache_bytes": cache,
        "data_to_cache_ratio": ratio(data_bytes, cache),
    }


def _engine_write_bytes(d: dict[str, Any]) -> float | None:
    """Bytes the engine wrote, to compare with the device's: data files (every backend type,
    extensions included), WAL and temporary files. Bytes, not requests: the kernel merges and
    splits buffered writes (the WAL's, the temporary files') before the device counts them, but
    it moves every byte (a run whose WAL size is only known as generated is not compared)."""
    data, extends, wal = get(d, "data", "write_bytes"), get(d, "data", "extend_bytes"), get(d, "wal", "write_bytes")
    if data is None or wal is None:
        return None
    return data + (extends or 0) + wal + (get(d, "db", "temp_bytes") or 0)


def _times_1000(value: float | None) -> float | None:
    return None if value is None else 1000.0 * value


def _blocks(nbytes: float | None, page: int = 8192) -> float | None:
    return None if nbytes is None else nbytes / page


def _mib(nbytes: float | None) -> float | None:
    return None if nbytes is None else nbytes / MiB


def _sectors(count: float | None) -> float | None:
    return None if count is None else count * 512


def _sum(*values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None
