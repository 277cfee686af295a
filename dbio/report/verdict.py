"""Does a result measure storage? Rules, each with the figure that triggered it (pure).

Every rule returns at most one Finding; levels are invalid (the result does not measure what
it claims), warning (read it with this in mind) and info. Thresholds are named constants so a
reader can see exactly when a rule fires.
"""

from __future__ import annotations

from typing import Any, Callable

from dbio.report import limit_findings, node_verdicts, shape_findings, stack_findings
from dbio.report.finding import Finding
from dbio.result_records import Doc, Result, of
from dbio.stats import catalogue
from dbio.stats import figures as figure_math
from dbio.stats.catalogue import figure, value
from dbio.stats.counters import get
from dbio.units import format_bytes

ROWS_FROM_STORAGE_LIMIT = 0.5  # blocks read per row of the range statements (one row per block)
# Beyond this, a row cost more than one block read: the index's blocks (or more of the table's) came
# from storage too, so reads/s counts more than the rows' own blocks (a cache too small for the index)
BLOCKS_PER_ROW_HIGH = 1.2
DEVICE_SHARE_LIMIT = 0.9  # device reads / engine reads
CACHE_RATIO_WARNING = 2.0  # data set / cache below this: a large share of hits is likely
CPU_BUSY_LIMIT = 90.0  # % host CPU
# % of the window's CPU time the hypervisor gave to other guests: beyond, latency includes waiting
# for a CPU the guest was promised (on this project's kind of VM steal reached 40%)
STEAL_LIMIT = 5.0
RUNNABLE_LIMIT = 1.0  # sessions wanting a CPU per CPU, on average
# The sessions' measured wait for a CPU per read, as a share of the engine's average read: beyond, a
# tenth of what the report calls read latency is this host's CPUs (8 sessions on 2 CPUs: 516 of 817 us)
CPU_WAIT_SHARE_LIMIT = 0.1
CPU_WAIT_TIME_LIMIT = 10.0  # % of the sessions' time spent waiting for a CPU, however it falls
OVERHEAD_LIMIT = 5.0  # % of the host's busy CPU used by dbio's own measuring
DEVICE_BUSY_LIMIT = 95.0  # % device utilization
MAINTENANCE_SHARE_LIMIT = 1.0  # % of the window's I/O requests; below, routine checks of the catalog are noise
# The device did more than the engine: beyond this share, and beyond a floor that keeps noise out.
DEVICE_EXCESS_LIMIT = 0.02  # 2% more reads (requests) or writes (bytes) than the engine's
DEVICE_EXCESS_MIN_READS = 100  # requests: a shell or the kernel reads a handful during any window
# The filesystem's journal (ext4 commits a few KiB per WAL sync) and dbio's own samples file, fsynced
# every interval, reach the same device: 0.54 MiB/s beyond the engine's writes at 123 WAL syncs/s in
# tests/fixtures/result_complete.json. Their share grows with the window, so the floor is a rate.
DEVICE_EXCESS_MIN_WRITE_BYTES_PER_S = 1 << 20
# A run with no UPDATE: bytes written (data files and WAL, every process) per byte read. Beyond the
# limit it measured writes too (its reads rewrote pages an earlier run's updates left, or their dirty
# pages were flushed meanwhile) and is no read-only result; beyond the note it is said.
READ_ONLY_WRITE_LIMIT = 0.01
READ_ONLY_WRITE_NOTE = 0.001
# Beyond this ratio of the device's I/O to the engine's, a finding states both amounts, not a percentage.
PLAIN_RATIO = 10.0
# The engine's average read beyond this many blocks: its reads are multi-block (scans), and the device
# check compares bytes, not requests.
MULTI_BLOCK_READ = 1.5
# The database beside the raw device at the same sessions (a baseline): reads/s as a share of fio's.
EFFICIENCY_LOW = 0.8  # below: the database leaves much of the device unused
EFFICIENCY_HIGH = 1.1  # above: more than the device gives, so some reads came from a cache
DRIFT_LIMIT = 1.2  # fio after the run / before it (or its inverse): beyond, the device changed speed meanwhile
CPU_BOUND_PCT = 80.0  # % host CPU busy: beyond, CPU explains a low efficiency
OTHER_WAITS_SHARE = 0.2  # share of the sessions' samples waiting on neither I/O nor a CPU (locks and such)
OTHER_SESSIONS_SHARE_LIMIT = figure_math.OTHER_SESSIONS_SHARE_LIMIT_PCT  # % of the clients' I/O not dbio's
# The host's busy CPU used by neither the database servers, dbio nor the kernel's own interrupts and threads:
# beyond this share, and beyond a floor in CPUs that keeps a nearly idle host's noise out, other work shared
# the window.
OTHER_CPU_LIMIT = 15.0  # % of the host's busy CPU
OTHER_CPU_MIN_CORES = 0.05  # CPUs, on average over the window
# A complete run given a run time (no work_loop) whose window lasted less than this share of it measured something
# else than the run asked: a few slices (seen: 0.014 s of 4 s, its window opened past the deadline) are no rate.
SHORT_WINDOW_SHARE = 0.5


def findings(doc: Doc) -> list[Finding]:
    """All findings, the most serious first."""
    r = of(doc)
    out: list[Finding] = []
    for rule in (*stack_findings.RULES, *limit_findings.RULES, *RULES, *shape_findings.RULES):
        finding = rule(r.document)
        if finding is not None:
            out.append(finding)
    # a merge of several hosts' runs: each node is its own host, so the host's rules are judged per node
    out += node_verdicts.node_findings(r, NODE_RULES + (HOST_RULES if r.merged_from else ()), Finding)
    for event in r.events:
        if event.kind in ("cancelled", "session_failed", "readings_refused"):
            out.append(Finding("warning", event.kind, str(event.message)))
        if event.kind == "pending_writes" and not event.finished:  # written out before: nothing to say
            out.append(Finding("warning", "pending_writes", str(event.message)))
        if event.kind == "parts":  # a part not given, late or without a window (dbio merge)
            out.append(Finding("warning", "parts", str(event.message)))
    for counted in r.counting:  # runs that shared a server (dbio merge): did their counts agree?
        if counted.agree is False:
            diff = counted.difference_pct or 0.0
            out.append(Finding("warning", "counting", f"on {counted.description} the runs' sessions read "
                               f"{abs(diff):.1f}% {'less' if diff > 0 else 'more'} than the server: "
                               + ("other clients or the server's own processes shared it" if counted.others
                                  else "the sessions' count exceeds the server's (windows apart?)"),
                               "counting_difference_pct", counted.difference_pct))
    order = {"invalid": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda f: order[f.level])


def _plain(doc: Doc) -> dict[str, Any]:
    """The document the rules read (each rule still walks its part of it by path)."""
    return doc.document if isinstance(doc, Result) else dict(doc) if not isinstance(doc, dict) else doc


def _figures(doc: dict[str, Any]) -> dict[str, Any]:
    return catalogue.figures_of(doc)


def _caps(doc: dict[str, Any]) -> dict[str, Any]:
    """The facts the engine declared (the run's first node's): names and what it measures."""
    caps = doc.get("capabilities")
    return caps if isinstance(caps, dict) else {}


def cache_name(given: Doc) -> str:
    """What the engine's users call its buffer cache."""
    doc = _plain(given)
    return _caps(doc).get("cache_name") or "the buffer cache"


def _window(doc: dict[str, Any]) -> bool:
    return catalogue.measured(_figures(doc))


def _found(level: str, code: str, message: str, name: str, at: float | None) -> Finding:
    """A finding triggered by a catalogued figure: it names the figure as findings always have."""
    return Finding(level, code, message, figure(name).ref, at)


def status(doc: dict[str, Any]) -> Finding | None:
    state = doc.get("status")
    if state == "complete":
        return None
    reason = doc.get("status_reason") or "no reason recorded"
    covers = "" if "the figures cover" in reason else "; the figures cover the part that ran"  # a lost run's says so
    return Finding("warning", "status", f"run {str(state).upper()}: {reason}{covers}")


def stalled(doc: dict[str, Any]) -> Finding | None:
    """The window holds stretches in which nothing was measured or nothing moved: its averages
    include them. The status stays complete (the window ran to its end); this says when and how long."""
    stalls = [s for s in doc.get("stalls") or [] if isinstance(s, dict)
              and all(isinstance(s.get(k), (int, float)) for k in ("offset", "seconds"))]
    if not _window(doc) or not stalls:
        return None
    total = sum(s["seconds"] for s in stalls)
    window = value(_figures(doc), "window_seconds")
    where = ", ".join(f"at +{s['offset']:.0f} s for {s['seconds']:.0f} s" for s in stalls)
    share = 100 * total / window
    return Finding("warning", "stalled", f"the window stalled {where} ({share:.0f}% of the window): no sample "
                                         "could be taken or no statement finished and no counter moved; the "
                                         "window's averages include it", "stalls.seconds", total)


def counters_reset(doc: dict[str, Any]) -> Finding | None:
    """An engine counter went back inside the window (run/assemble, stats/resets.py): its statistics were reset or
    its server restarted. What it counted in the window is unknown, so are the figures built on it (absent)."""
    resets = [r for r in doc.get("counter_resets") or [] if isinstance(r, dict) and isinstance(r.get("counter"), str)]
    if not resets:
        return None
    several = len(doc.get("nodes") or []) > 1
    told = []
    for r in resets[:3]:
        where = f" of {r['node']}" if several and isinstance(r.get("node"), str) else ""
        when = f" at +{r['since_start']:.1f} s" if isinstance(r.get("since_start"), (int, float)) else ""
        values = f" ({r['before']:,.0f} to {r['after']:,.0f})" \
            if all(isinstance(r.get(k), (int, float)) for k in ("before", "after")) else ""
        told.append(f"{r['counter']}{where}{when}{values}")
    more = f" and {len(resets) - 3} more" if len(resets) > 3 else ""
    return Finding("invalid", "counter_reset",
                   f"the engine's counters went back inside the window: {'; '.join(told)}{more}: its statistics were "
                   "reset or its server restarted, so the figures built on them are absent; run again without "
                   "resetting statistics during the run", "counter_resets", len(resets))


def short_window(doc: dict[str, Any]) -> Finding | None:
    """A complete run whose measured window lasted far less than the run time it was given (the configuration's
    workload.run_time, when no work_loop ends it earlier on purpose): why, when the result tells."""
    workload = (doc.get("config") or {}).get("workload") or {}
    asked, window = workload.get("run_time"), value(_figures(doc), "window_seconds")
    if doc.get("status") != "complete" or workload.get("work_loop") or not _window(doc) \
            or not isinstance(asked, (int, float)) or asked <= 0 or not isinstance(window, (int, float)) \
            or window >= SHORT_WINDOW_SHARE * asked:
        return None
    why = []
    opened = next((e.get("since_start") for e in doc.get("events") or []
                   if isinstance(e, dict) and e.get("kind") == "window_open"), None)
    warmup = workload.get("warmup")
    if isinstance(opened, (int, float)) and isinstance(warmup, (int, float)) and opened > warmup + asked / 2:
        why.append(f"it opened +{opened:.1f} s after the start, not after the {warmup:g} s warm-up")
    for node in doc.get("nodes") or []:
        if isinstance(node, dict) and isinstance(node.get("stopped"), dict):
            why.append(node_verdicts.stopped_briefly(node, node_verdicts.warmup_of(doc)))
    told = f": {'; '.join(why)}" if why else ""
    return _found("invalid", "short_window", f"the measured window lasted {window:.2f} s of the {asked:g} s asked"
                                             f"{told}; its figures are no rate over the run asked: run again",
                  "window_seconds", window)


def no_window(doc: dict[str, Any]) -> Finding | None:
    if _window(doc):
        return None
    return Finding("invalid", "no_window", "no measured window: nothing was measured")


def hotspot_share(doc: dict[str, Any]) -> float:
    """The share of the statements the configuration sends to the hot spot, which is there to be
    served from the cache (SLOB's HOTSPOT_FREQUENCY: every Nth statement); 0 without one."""
    workload = (doc.get("config") or {}).get("workload") or {}
    every = workload.get("hotspot_frequency")
    if not workload.get("hotspot") or not isinstance(every, int) or every < 1:
        return 0.0
    return 1.0 / every


def rows_from_cache(doc: dict[str, Any]) -> Finding | None:
    """The cache served the rows meant to come from storage: the cold ones (all of them, without a hot spot)."""
    per_row = value(_figures(doc), "blocks_read_per_row")
    hot = hotspot_share(doc)
    cold = 1.0 - hot
    if not _window(doc) or per_row is None:
        return None
    if cold <= 0:  # hotspot_frequency 1: every statement goes where the cache serves it
        return _found("invalid", "rows_from_cache",
                      f"every statement goes to the hot spot (hotspot_frequency 1), which is there to be served from "
                      f"the cache ({100 * per_row:.0f}% of the rows were read from storage): this measures memory, "
                      "not storage", "blocks_read_per_row", per_row)
    if per_row / cold >= ROWS_FROM_STORAGE_LIMIT:
        return None
    if not hot:
        return _found("invalid", "rows_from_cache",
                      f"only {100 * per_row:.0f}% of the rows the range statements touched were read from storage "
                      f"(one row per block): the buffer cache served {100 * (1 - per_row):.0f}%; this measures "
                      "memory, not storage", "blocks_read_per_row", per_row)
    return _found("invalid", "rows_from_cache",
                  f"only {100 * per_row:.0f}% of the rows the range statements touched were read from storage "
                  f"(one row per block), where the hot spot (1 statement in {round(1 / hot)}, meant to be cached) "
                  f"leaves {100 * cold:.0f}% to come from storage: the buffer cache served "
                  f"{100 * (1 - per_row / cold):.0f}% "
                  "of the cold rows too; this measures memory, not storage", "blocks_read_per_row", per_row)


def reads_beyond_rows(doc: dict[str, Any]) -> Finding | None:
    per_row = value(_figures(doc), "blocks_read_per_row")
    if not _window(doc) or per_row is None or per_row <= BLOCKS_PER_ROW_HIGH:
        return None
    return _found("warning", "reads_beyond_rows",
                  f"{per_row:.2f} blocks read per row of the range statements, not about 1: index blocks (or more "
                  f"of the table's) were read from storage too, so reads/s is not rows/s; {cache_name(doc)} holds "
                  "too little of the index", "blocks_read_per_row", per_row)


def page_cache(doc: dict[str, Any]) -> Finding | None:
    f = _figures(doc)
    ratio = value(f, "device_to_db_read_ratio")
    reads = value(f, "reads_per_s")
    # some tables on a place no watched device holds: the devices saw a part (stack_findings.no_device says which)
    if not _window(doc) or ratio is None or not reads or stack_findings.uncovered_data(doc):
        return None
    if ratio < DEVICE_SHARE_LIMIT:
        where = "the OS page cache served the rest" if not value(f, "direct_io") else \
            "with direct I/O on, check which device the data directory is on"
        return _found("invalid", "page_cache", f"only {100 * ratio:.1f}% of the engine's physical reads reached the "
                                               f"device: {where}", "device_to_db_read_ratio", ratio)
    # more reads than the engine's: shared_device
    if not value(f, "direct_io") and _read_excess(f, _page_bytes(doc)) is None:
        return _found("info", "page_cache", f"direct I/O is off, yet {100 * ratio:.1f}% of the engine's physical "
                                            "reads reached the device", "device_to_db_read_ratio", ratio)
    return None


def read_only_wrote(doc: dict[str, Any]) -> Finding | None:
    """A read-only run is judged by what it wrote: writes inside its window make it a mixed workload."""
    workload = (doc.get("config") or {}).get("workload") or {}
    f = _figures(doc)
    read, data, wal = value(f, "read_mib_per_s"), value(f, "write_mib_per_s"), value(f, "wal_bytes_per_s")
    if not _window(doc) or workload.get("update_pct") != 0 or not read or data is None:
        return None
    written = data + (wal or 0.0) / (1 << 20)
    share = written / read
    if share <= READ_ONLY_WRITE_NOTE:
        return None
    writers = {kind: (row.get("write_mib_per_s") or 0.0) + (row.get("wal_write_mib_per_s") or 0.0)
               for kind, row in catalogue.by_backend(f).items() if isinstance(row, dict)}
    total = sum(writers.values())
    who = ", ".join(f"{kind} {100 * mib / total:.0f}%" for kind, mib in sorted(writers.items(), key=lambda kv: -kv[1])
                    if mib > 0.005 * total) if total else ""
    what = (f"this run has no UPDATE, yet it wrote {format_bytes(data * (1 << 20))}/s of data pages and "
            f"{format_bytes(wal or 0.0)}/s of WAL, {100 * share:.1f}% of the "
            f"{format_bytes(read * (1 << 20))}/s it read" + (f" ({who})" if who else ""))
    if share > READ_ONLY_WRITE_LIMIT:
        return _found("invalid", "read_only_wrote", f"{what}: not a read-only result; its reads rewrote pages "
                      "an earlier run's updates left, or their dirty pages were written meanwhile (before a read-only "
                      "run "
                      "the data set is settled: see the events for what was done)", "write_mib_per_s", data)
    return _found("warning", "read_only_wrote", what, "write_mib_per_s", data)


def _page_bytes(doc: dict[str, Any]) -> int:
    """The engine's read unit, what one buffer-cache miss reads."""
    page = _caps(doc).get("page_bytes")
    return page if isinstance(page, int) and page > 0 else 8192


def _read_excess(f: dict[str, Any], page_bytes: int) -> str | None:
    """The device's reads beyond the engine's physical reads, when they are significant. Requests,
    as the device counts them, for single-block reads: with direct I/O each read of the engine is one
    device request (they matched within 0.1% on this project's VM); read bytes would count the
    kernel's read-ahead. Bytes for multi-block reads (scans): the block layer splits a 128 KiB read
    that crosses a file extent into several requests (+6% requests, the same bytes)."""
    device, engine = value(f, "device_reads"), value(f, "db_reads")
    if device is None or engine is None:
        return None
    excess = device - engine
    if excess <= DEVICE_EXCESS_LIMIT * engine or excess < DEVICE_EXCESS_MIN_READS:
        return None
    if engine and device <= PLAIN_RATIO * engine:
        said = (f"the device did {100 * device / engine:.1f}% of the engine's physical reads (device {device:,.0f}, "
                f"engine {engine:,.0f} read requests)")
    else:  # a ratio in the thousands of % says nothing: the counts do
        said = f"the device did {device:,.0f} read requests while the engine did {engine:,.0f}"
    device_bytes, engine_bytes = value(f, "device_read_bytes"), value(f, "db_read_bytes")
    if device_bytes is None or not engine or not engine_bytes or engine_bytes <= MULTI_BLOCK_READ * page_bytes * engine:
        return said
    if device_bytes - engine_bytes <= DEVICE_EXCESS_LIMIT * engine_bytes:
        return None  # multi-block reads split into more requests on their way down: the same bytes
    return (f"{said} and {100 * device_bytes / engine_bytes:.1f}% of its bytes (device {format_bytes(device_bytes)}, "
            f"engine {format_bytes(engine_bytes)}: multi-block reads are judged by bytes)")


def _write_excess(f: dict[str, Any], seconds: float) -> str | None:
    """The device's written bytes beyond the engine's (data files, WAL, temporary files)."""
    device, engine = value(f, "device_write_bytes"), value(f, "db_write_bytes")
    if device is None or engine is None:
        return None
    excess = device - engine
    if excess <= DEVICE_EXCESS_LIMIT * engine or excess < DEVICE_EXCESS_MIN_WRITE_BYTES_PER_S * max(1.0, seconds):
        return None
    if engine and device <= PLAIN_RATIO * engine:
        return (f"the device wrote {100 * device / engine:.1f}% of the bytes the engine wrote (device "
                f"{format_bytes(device)}, engine {format_bytes(engine)} of data files, WAL and temporary files)")
    # a ratio in the thousands of % says nothing: the amounts do
    return (f"the device wrote {format_bytes(device)} while the engine wrote "
            f"{format_bytes(engine) if engine else 'nothing'} (data files, WAL and temporary files)")


def shared_device(doc: dict[str, Any]) -> Finding | None:
    """The device under the data directory did more I/O than the engine: someone else used it."""
    f = _figures(doc)
    if not _window(doc):
        return None
    reads = None if stack_findings.uncovered_data(doc) else _read_excess(f, _page_bytes(doc))
    writes = _write_excess(f, value(f, "window_seconds"))
    if not reads and not writes:
        return None
    ahead = " (or, direct I/O being off, the kernel read ahead more than the engine asked)" \
        if reads and not value(f, "direct_io") else ""
    ratio = "device_to_db_read_ratio" if reads else "device_to_db_write_ratio"
    return _found("warning", "shared_device",
                  "; ".join(part for part in (reads, writes) if part) + f": another process used the device{ahead}, "
                  "so the device's figures (Device table) and the engine's disagree", ratio, value(f, ratio))


def other_sessions(doc: dict[str, Any]) -> Finding | None:
    """Client sessions that are not dbio's worked on the server during the window."""
    if not _window(doc):
        return None
    f = _figures(doc)
    measured = [r for r in doc.get("series") or [] if r.get("phase") == "measured"]
    active = [r for r in measured if r.get("other_sessions_active")]
    shares = {k: value(f, f"other_{k}_share_pct") for k in ("read", "write")}
    worst = max((v for v in shares.values() if v is not None), default=None)
    if not active and not worst:
        return None
    # a server's NULL (a connection still authenticating) is in results written before names were made safe
    names = sorted({n if isinstance(n, str) else "(no name yet)" for r in active
                    for n in r.get("other_session_names") or []})
    who = (f"{max(r['other_sessions_active'] for r in active):.0f} other session(s)"
           + (f" ({', '.join(names[:5])})" if names else "")
           + f" active in {len(active)} of {len(measured)} intervals") if active else "other sessions"
    if worst is None:
        return Finding("warning", "other_sessions", f"{who} of the window: they shared the server and its storage "
                                                    "(their share of the I/O is measured from PostgreSQL 18 on)")
    share = ", ".join(f"{v:.1f}% of the client sessions' {k}s" for k, v in shares.items() if v)
    level = "warning" if worst >= OTHER_SESSIONS_SHARE_LIMIT else "info"
    part = doc.get("part") if isinstance(doc.get("part"), dict) else None
    if part:  # the run's other parts share the server by design: dbio merge counts each read once
        return _found("info", "other_sessions", f"{who} did {share or 'no I/O'} in the window, this run's other "
                      f"parts among them (part {part.get('index')} of {part.get('of')}): the server's figures "
                      "include their I/O; dbio merge of the parts counts each read once", "other_read_share_pct",
                      shares["read"])
    return _found(level, "other_sessions", f"{who} did {share or 'no I/O'} in the window: the engine's figures "
                                           "include their I/O", "other_read_share_pct", shares["read"])


def other_cpu(doc: dict[str, Any]) -> Finding | None:
    """Work outside the database server and dbio used the host's CPUs in the window: the reads' host-CPU cost
    counts it, and the sessions and the server competed with it for CPUs."""
    f = _figures(doc)
    share, seconds = value(f, "other_cpu_pct"), value(f, "other_cpu_seconds")
    window = value(f, "window_seconds")
    if not _window(doc) or share is None or share < OTHER_CPU_LIMIT or not window \
            or seconds / window < OTHER_CPU_MIN_CORES:
        return None
    return _found("warning", "other_cpu", f"other work used {seconds:,.1f} CPU-seconds in the window, {share:.0f}% "
                  "of the host's busy CPU (processes other than the database server and dbio; the kernel's own "
                  "interrupts and threads apart): reads per host-CPU-second count it, and the sessions competed with "
                  "it for CPUs", "other_cpu_pct", share)


def small_data_set(doc: dict[str, Any]) -> Finding | None:
    f = _figures(doc)
    data, cache = value(f, "data_bytes"), value(f, "cache_bytes")
    if not _window(doc) or not data or not cache:
        return None
    page_cache_bytes = 0
    if not value(f, "direct_io") and get(doc, "capabilities", "local"):
        page_cache_bytes = get(doc, "environment", "host", "memory_available_bytes") or 0
    total = cache + page_cache_bytes
    cached_by = f"{cache_name(doc)} ({format_bytes(cache)})" + (
        f" plus the available page cache ({format_bytes(page_cache_bytes)})" if page_cache_bytes else "")
    if data <= total:
        return _found("invalid", "small_data_set", f"the data set ({format_bytes(data)}) fits in {cached_by}",
                      "data_to_cache_ratio", data / total)
    if data < CACHE_RATIO_WARNING * total:
        return _found("warning", "small_data_set", f"the data set ({format_bytes(data)}) is only {data / total:.1f}x "
                                                   f"{cached_by}: many reads may be cache hits",
                      "data_to_cache_ratio", data / total)
    return None


def cpu_saturated(doc: dict[str, Any]) -> Finding | None:
    busy = value(_figures(doc), "host_busy_pct")
    if not _window(doc) or busy is None or busy <= CPU_BUSY_LIMIT or not get(doc, "capabilities", "local"):
        return None
    return _found("warning", "cpu_saturated", f"host CPU {busy:.0f}% busy: the result reflects CPU, not only storage",
                  "host_busy_pct", busy)


def cpu_stolen(doc: dict[str, Any]) -> Finding | None:
    """The hypervisor ran other guests on this host's CPUs for a share of the window."""
    steal = value(_figures(doc), "host_steal_pct")
    if not _window(doc) or steal is None or steal <= STEAL_LIMIT or not get(doc, "capabilities", "local"):
        return None
    return _found("warning", "cpu_steal", f"the hypervisor took {steal:.1f}% of this host's CPU time (steal) in the "
                  "window: sessions and the server waited for CPUs other guests used; latency and CPU figures "
                  "include it", "host_steal_pct", steal)


def _large_wait_in_reads(f: dict[str, Any]) -> tuple[float, float] | None:
    """(the wait for a CPU within a read, the engine's average read) when that wait is a tenth of the read or
    more: the read latency is then partly this host's CPUs."""
    in_read, avg = value(f, "cpu_wait_in_read_us"), value(f, "avg_read_us")
    return (in_read, avg) if in_read is not None and avg and in_read >= CPU_WAIT_SHARE_LIMIT * avg else None


def _workers_part(f: dict[str, Any], in_read: float) -> str:
    """The I/O workers' part of a read's wait for a CPU, where they did the reads (io_method = worker)."""
    placed, helpers = catalogue.cpu_wait_in_read_parts(f)
    if helpers is None or placed != in_read:
        return ""
    if catalogue.workers_wait_alone_in_read(f):
        return " (all of it the I/O workers' doing the reads)"
    return f" ({helpers:,.0f} us of it the I/O workers' doing the reads)"


def cpu_wait_in_latency(doc: dict[str, Any]) -> Finding | None:
    """The measured wait for a CPU (the sessions', their I/O workers') is a large part of the sessions' time, or
    of a read's: latency and throughput are partly the host's CPUs."""
    f = _figures(doc)
    share, large = value(f, "cpu_wait_pct"), _large_wait_in_reads(f)
    if not _window(doc) or share is None:
        return None
    if share < CPU_WAIT_TIME_LIMIT and large is None:
        return None
    held = value(f, "server_cpu_throttled_periods_pct")
    # a quota that ran out holds the sessions back too (cpu_limit says so first)
    whose = "this host's CPUs" if held is None or held < 1.0 else \
        f"this host's CPUs or the server's CPU quota (used up in {held:.0f}% of its periods)"
    told = f"the sessions waited for a CPU {share:.0f}% of their time (on a run queue, ready to run)"
    in_read = large[0] if large is not None else value(f, "cpu_wait_in_read_us")
    avg = value(f, "avg_read_us")
    if in_read is not None and avg is not None:
        told += (f", {in_read:,.0f} us of the {avg:,.0f} us the engine timed per read{_workers_part(f, in_read)}: read "
                 f"latency includes waiting for {whose}, not only the storage")
    else:
        told += f": their latency and throughput include waiting for {whose}"
    return _found("warning", "cpu_wait", told, "cpu_wait_pct", share)


def sessions_queue_for_cpu(doc: dict[str, Any]) -> Finding | None:
    """On average, more sessions wanted a CPU than the host has: CPU queueing inflates latency. Sampled: a
    result with the sessions' measured wait for a CPU is judged by cpu_wait_in_latency instead."""
    if value(_figures(doc), "cpu_wait_pct") is not None:
        return None
    counts = get(doc, "waits", "counts") or {}
    samples = sum(counts.values())
    sessions = get(doc, "config", "workload", "sessions") or 0
    cores = value(_figures(doc), "cores") or 0
    if not _window(doc) or not samples or not cores or sessions <= cores:
        return None
    on_cpu = sessions * counts.get("CPU", 0) / samples
    if on_cpu / cores <= RUNNABLE_LIMIT:
        return None
    return Finding("warning", "cpu_queue", f"{sessions} sessions on {cores} CPUs: on average {on_cpu:.1f} sessions "
                                           "were on or waiting for a CPU; latency includes CPU queueing",
                   "waits.counts.CPU", on_cpu)


def checkpoint_in_window(doc: dict[str, Any]) -> Finding | None:
    norm = doc.get("normalized") or {}
    begin, end = get(norm, "begin", "checkpoints") or {}, get(norm, "end", "checkpoints") or {}
    if not _window(doc) or not begin or not end:
        return None
    done = (end.get("done") or 0) - (begin.get("done") or 0)
    if done <= 0:
        return None
    wrote = ""
    if end.get("buffers_written") is not None and begin.get("buffers_written") is not None:
        wrote = f" and wrote {end['buffers_written'] - begin['buffers_written']:,.0f} buffers"
    return Finding("warning", "checkpoint", f"{done:.0f} checkpoint(s) ran inside the window{wrote}: writes and "
                                            "latency include them", "checkpoints.done", done)


def maintenance_in_window(doc: dict[str, Any]) -> Finding | None:
    """The engine's background maintenance (the process kind its capabilities name) did I/O."""
    caps = _caps(doc)
    process, name = caps.get("maintenance_process"), caps.get("maintenance_name") or "background maintenance"
    work = catalogue.by_backend(_figures(doc)).get(process) if process else None
    if not _window(doc) or not work:
        return None
    requests = sum(catalogue.member(catalogue.BACKEND_FIGURES, figure_name).value(work) or 0
                   for figure_name in ("read_requests_per_s", "write_requests_per_s"))
    if requests <= 0:
        return None
    total = value(_figures(doc), "total_requests_per_s") or 0
    share = 100.0 * requests / total if total else 100.0
    ref = f"io_profile.by_backend.{process}"
    if share < MAINTENANCE_SHARE_LIMIT:
        return Finding("info", "maintenance", f"{name} did {requests:,.1f} I/O requests/s inside the window, "
                       f"{share:.2g}% of all: too little to matter", ref, requests)
    return Finding("warning", "maintenance", f"{name} worked inside the window ({requests:,.1f} I/O requests/s, "
                   f"{share:.1f}% of all I/O requests)", ref, requests)


def device_saturated(doc: dict[str, Any]) -> Finding | None:
    utilization = catalogue.member(catalogue.DEVICE_FIGURES, "utilization_pct")
    busy = [(name, utilization.value(d)) for name, d in catalogue.devices(_figures(doc)).items()]
    busy = [(name, util) for name, util in busy if util is not None and util >= DEVICE_BUSY_LIMIT]
    if not _window(doc) or not busy:
        return None
    name, util = max(busy, key=lambda x: x[1])
    return Finding("info", "device_busy", f"device {name} was busy {util:.0f}% of the window: requests queued at the "
                                          "device", f"devices.{name}.{utilization.ref}", util)


def overhead(doc: dict[str, Any]) -> Finding | None:
    f = _figures(doc)
    share = value(f, "dbio_overhead_pct")  # None without the host's busy CPU seconds
    if not _window(doc) or share is None or not get(doc, "capabilities", "local"):
        return None
    level = "warning" if share > OVERHEAD_LIMIT else "info"
    return _found(level, "overhead", f"dbio's own measuring used {value(f, 'dbio_cpu_seconds'):.2f} CPU seconds, "
                                     f"{share:.1f}% of the host's busy CPU", "dbio_overhead_pct", share)


def database_vs_device(doc: dict[str, Any]) -> Finding | None:
    """A baseline ran: the database beside fio at the same sessions, each access pattern against its own
    raw counterpart (single-block reads against fio's random reads, scans against its sequential
    bandwidth), and why they differ."""
    f = _figures(doc)
    if not _window(doc):
        return None
    if catalogue.scans_dominate(f):
        eff = value(f, "scan_bandwidth_share")
        if eff is None:  # no sequential baseline: random reads are no yardstick for scans (scan_bound says so)
            return None
        told = (f"the database's scans delivered {eff:.2f} of the device's sequential bandwidth "
                f"({value(f, 'scan_mib_per_s'):,.1f} vs fio's {value(f, 'raw_seq_read_mib_per_s'):,.1f} MiB/s)")
        figure_name = "scan_bandwidth_share"
    else:
        eff = value(f, "efficiency_reads")
        if eff is None:
            return None
        told = (f"the database delivered {eff:.2f} of the device's synchronous reads "
                f"({value(f, 'reads_per_s'):,.0f} vs fio's {value(f, 'raw_reads_per_s'):,.0f} reads/s)")
        figure_name = "efficiency_reads"
    return _efficiency_finding(doc, f, told, figure_name, eff)


def _efficiency_finding(doc: dict[str, Any], f: dict[str, Any], told: str, figure_name: str,
                        eff: float) -> Finding:
    if eff > EFFICIENCY_HIGH:
        return _found("warning", "beyond_device", f"{told}: more than the device, so some reads came from a cache "
                      "(the OS page cache or the storage's): a finding, not a triumph", figure_name, eff)
    if eff >= EFFICIENCY_LOW:
        return _found("info", "efficiency", told, figure_name, eff)
    return _found("warning", "below_device", f"{told}: {_why_below(doc, f)}", figure_name, eff)


def device_drift(doc: dict[str, Any]) -> Finding | None:
    """fio read at one speed before the database's run and at another after it: the efficiency figures
    compare the database with a device that did not hold still, so they carry that spread."""
    f = _figures(doc)
    drift, reads = value(f, "raw_drift"), value(f, "reads_per_s")
    runs = (doc.get("baseline") or {}).get("runs") or {}
    if not _window(doc) or drift is None or not reads or 1 / DRIFT_LIMIT <= drift <= DRIFT_LIMIT:
        return None
    before, after = runs["sync"]["reads_per_s"], runs["sync_after"]["reads_per_s"]
    low = value(f, "raw_reads_per_s_low") or min(before, after)
    high = value(f, "raw_reads_per_s_high") or max(before, after)
    more = sum(1 for name in runs if name.startswith("sync_more_"))
    rounds = (f"; in {more} more round{'s' if more != 1 else ''} after it, {low:,.0f} to {high:,.0f} in all"
              if more else "")
    return _found("warning", "device_drift", f"the device changed speed during the run: fio read {before:,.0f} "
                  f"reads/s right before it and {after:,.0f} right after (x{drift:.2f}){rounds}, so the database's "
                  f"efficiency lies between {reads / high:.2f} and {reads / low:.2f}; repeat the run to see whether "
                  "the storage settles", "raw_drift", drift)


def _why_below(doc: dict[str, Any], f: dict[str, Any]) -> str:
    """What the CPU figures and the sessions' wait samples show about a database behind its device."""
    busy, cpu = value(f, "host_busy_pct"), value(f, "efficiency_cpu")
    counts = get(doc, "waits", "counts") or {}
    samples = sum(counts.values())
    other = {k: n for k, n in counts.items() if k != "CPU" and not k.startswith("IO:")}
    if busy is not None and busy >= CPU_BOUND_PCT:
        cost = f", each read cost {cpu:.1f}x fio's host CPU" if cpu is not None else ""
        return f"CPU-bound: the host's CPU was {busy:.0f}% busy{cost}"
    share, large = value(f, "cpu_wait_pct"), _large_wait_in_reads(f)
    if large is not None:  # measured, where the wait samples show it as the read's I/O event
        in_read, avg = large
        if catalogue.workers_wait_alone_in_read(f):  # the sessions' own is not in it
            of_time = (f" (the sessions' own, {share:.0f}% of their time, not counted in it)"
                       if share is not None else "")
            return f"CPU-queued: the I/O workers doing the reads waited {in_read:,.0f} us of the {avg:,.0f} us the " \
                   f"engine timed per read for a CPU{of_time}"
        of_time = f" ({share:.0f}% of their time)" if share is not None else ""
        return f"CPU-queued: the sessions waited {in_read:,.0f} us of the {avg:,.0f} us the engine timed per read " \
               f"for a CPU{_workers_part(f, in_read)}{of_time}"
    if share is not None and share >= CPU_WAIT_TIME_LIMIT:
        return f"CPU-queued: the sessions waited for a CPU {share:.0f}% of their time"
    if samples and sum(other.values()) / samples >= OTHER_WAITS_SHARE:
        top = max(other, key=lambda k: other[k])
        return (f"lock-bound: {100 * sum(other.values()) / samples:.0f}% of the sessions' samples waited on neither "
                f"I/O nor a CPU (mostly {top})")
    if samples and counts.get("CPU", 0) / samples >= 0.5:
        return f"the sessions were on a CPU in {100 * counts['CPU'] / samples:.0f}% of samples: the engine's work " \
               "per read, not the device, sets the pace"
    latency, own = value(f, "efficiency_latency"), value(f, "efficiency_reader_cpu")
    parts = ([f"took {latency:.1f}x fio's time"] if latency is not None else []) + \
        ([f"cost the sessions {own:.1f}x the CPU fio's jobs spent on one"] if own is not None else [])
    slower = f" each read {' and '.join(parts)};" if parts else ""
    return f"neither CPU nor locks stand out in the samples;{slower} the engine's own path per read is the gap"


def not_measured(given: Doc) -> list[dict[str, str]]:
    """The figures the engine could not give on this server, each with why (its capabilities say)."""
    doc = _plain(given)
    missing = get(doc, "capabilities", "missing") or []
    return [{"figure": str(m.get("figure")), "why": str(m.get("why"))} for m in missing if isinstance(m, dict)]


def unavailable(doc: dict[str, Any]) -> Finding | None:
    missing = not_measured(doc)
    if not missing:
        return None
    names = "; ".join(f"{m['figure']} ({m['why']})" for m in missing)
    return Finding("info", "unavailable", f"not measured: {names}")


RULES: tuple[Callable[[dict[str, Any]], Finding | None], ...] = (
    status, stalled, counters_reset, no_window, short_window, rows_from_cache, reads_beyond_rows, read_only_wrote,
    page_cache, shared_device, other_sessions, other_cpu,
    small_data_set, cpu_saturated, cpu_stolen, cpu_wait_in_latency, sessions_queue_for_cpu,
    checkpoint_in_window, maintenance_in_window, device_saturated, overhead, device_drift, database_vs_device,
    unavailable)

# What is judged again on each node's own figures when a run has several (report/node_verdicts.py).
NODE_RULES = (rows_from_cache, page_cache, shared_device)
# ...and, in a merge of several hosts' runs, what each host's own CPU figures say (the total has none).
HOST_RULES = (other_cpu, cpu_saturated, cpu_stolen, cpu_wait_in_latency)


# The one-line headline, in this order; the first must be there for a line at all.
HEADLINE = catalogue.figures("reads_per_s", "avg_read_us", "read_mib_per_s", "reads_per_host_cpu_second")


def invalid(given: Doc) -> list[Finding]:
    """The findings that say the result does not measure storage (the run's or a node's)."""
    doc = _plain(given)
    return [x for x in findings(doc) if x.level == "invalid"]


# How an invalid result is named wherever its figures would be quoted as storage's (headlines, tables).
NOT_STORAGE = "not a storage result"
INVALID_MARK = "(INVALID)"


def not_storage(names: list[str]) -> str:
    """Results (or steps) named where their figures are quoted: 'b INVALID: not a storage result'."""
    return f"{', '.join(names)} INVALID: " + (NOT_STORAGE if len(names) == 1 else "not storage results")


def headline(given: Doc) -> str:
    """One line a user can quote, with its caveats: a figure a warning shows is partly not the storage's
    says so where it stands, so that a quote of the line carries it (a warning about none of its figures
    is named at its end). An invalid result's line quotes no storage figure: it says the result is none,
    and what the engine counted, as the engine's count (or, with no count to quote, why)."""
    doc = _plain(given)
    f = _figures(doc)
    if not catalogue.measured(f):
        return "no measured window"
    found = findings(doc)
    bad = [x for x in found if x.level == "invalid"]
    reads = HEADLINE[0].value(f)
    if bad:
        if any(x.code == "counter_reset" for x in bad):  # the verdict names them: here, what it means
            return (f"{NOT_STORAGE} {INVALID_MARK}: the engine's counters went back inside the window (statistics "
                    "reset or server restarted): what they counted in it is unknown")
        short = next((x for x in bad if x.code == "short_window"), None)
        if reads is None or short is not None:
            return f"{NOT_STORAGE} {INVALID_MARK}: {(short or bad[0]).message}"
        return (f"{NOT_STORAGE} {INVALID_MARK}: the engine counted {reads:,.0f} reads/s as physical, "
                "but storage was not shown to serve them")
    if reads is None:
        return "no measured window"
    caveats, others = headline_caveats(doc, found)
    line = ", ".join(str(fig.phrase).format(fig.value(f))
                     + (f" ({'; '.join(caveats[fig.name])})" if caveats.get(fig.name) else "")
                     for fig in HEADLINE if fig.value(f) is not None)
    return line + (f" (also: {'; '.join(others)})" if others else "")


def reads_caveats(given: Doc) -> list[str]:
    """The caveats of a result's reads/s where a line quotes it alone (a sweep's best step, a comparison): the
    headline's of that figure and those of none of its figures."""
    doc = _plain(given)
    by_figure, others = headline_caveats(doc)
    return by_figure.get(HEADLINE[0].name, []) + others


# Warnings about the database beside its raw device (a baseline): the efficiency line printed beside the
# headline says them, and the headline's figures are no less the storage's for them.
BESIDE_THE_HEADLINE = ("below_device", "device_drift")


def headline_caveats(given: Doc, found: list[Finding] | None = None) -> tuple[dict[str, list[str]], list[str]]:
    """The headline's caveats: each warning in a few words beside the figure of the headline it qualifies
    ({figure name: [words]}), and the warnings about none of them, named (pure)."""
    doc = _plain(given)
    f = _figures(doc)
    shown = {fig.name for fig in HEADLINE if fig.value(f) is not None}
    by_figure: dict[str, list[str]] = {}
    others: list[str] = []
    for finding in findings(doc) if found is None else found:
        if finding.level != "warning" or finding.code in BESIDE_THE_HEADLINE:
            continue
        name, words = _caveat(doc, f, finding)
        if name in shown:
            by_figure.setdefault(name, []).append(words)
        else:
            others.append(words)
    large = _large_wait_in_reads(f)  # measured within each read: said beside the latency even without a warning
    if large is not None and not any("waiting for a CPU" in w for w in by_figure.get("avg_read_us", [])):
        by_figure.setdefault("avg_read_us", []).append(f"{large[0]:,.0f} us of it waiting for a CPU")
    return by_figure, list(dict.fromkeys(others))


def _caveat(doc: dict[str, Any], f: dict[str, Any], finding: Finding) -> tuple[str | None, str]:
    """(the headline figure a warning qualifies, or None; the warning in a few words)."""
    code = finding.code
    if code == "shared_device":
        ratio = value(f, "device_to_db_read_ratio")
        if _read_excess(f, _page_bytes(doc)) is not None and ratio is not None:
            did = f"{ratio:.1f}x the engine's reads" if ratio >= 2 else f"{100 * ratio:.1f}% of the engine's reads"
            return "reads_per_s", f"the device did {did}: other work shared the device"
        wrote = value(f, "device_to_db_write_ratio")
        return "reads_per_s", (f"the device wrote {wrote:.1f}x the engine's bytes" if wrote is not None else
                               "the device wrote what the engine did not") + ": other work shared the device"
    if code == "small_data_set" and finding.value is not None:
        return "reads_per_s", f"the data set is only {finding.value:.1f}x the cache: some reads may be cache hits"
    if code == "beyond_device":
        return "reads_per_s", "more than the raw device gave: some reads came from a cache"
    if code == "reads_beyond_rows" and finding.value is not None:
        return "reads_per_s", f"{finding.value:.2f} blocks read per row: index blocks too"
    if code == "other_sessions":
        share = value(f, "other_read_share_pct")
        return "reads_per_s", (f"other sessions did {share:.1f}% of the client reads" if share else
                               "other sessions were active")
    if code == "status":
        return "reads_per_s", f"run {str(doc.get('status')).upper()}: the figures cover the part that ran"
    if code == "node_stopped":
        stopped = [n for n in get(doc, "cluster", "stopped_nodes") or [] if isinstance(n, str)]
        return "reads_per_s", f"{', '.join(stopped) or 'a node'} stopped: the totals are partial"
    if code == "stalled":
        window = value(f, "window_seconds")
        share = f" {100 * finding.value / window:.0f}% of its time" if finding.value is not None and window else ""
        return "reads_per_s", f"the window stalled{share}"
    if code == "readings_refused":
        return "reads_per_s", "readings refused: gaps in the series"
    if code == "maintenance":
        return "reads_per_s", f"{_caps(doc).get('maintenance_name') or 'background maintenance'} did I/O in the window"
    if code == "cpu_saturated" and finding.value is not None:
        return "reads_per_s", f"host CPU {finding.value:.0f}% busy"
    if code == "cpu_wait":
        large = _large_wait_in_reads(f)
        if large is not None:
            return "avg_read_us", f"{large[0]:,.0f} us of it waiting for a CPU"
        return "avg_read_us", f"the sessions waited for a CPU {finding.value:.0f}% of their time" \
            if finding.value is not None else "the sessions waited for a CPU"
    if code == "cpu_steal" and finding.value is not None:
        return "avg_read_us", f"{finding.value:.1f}% of the CPU time stolen by the hypervisor"
    if code == "checkpoint" and finding.value is not None:
        return "avg_read_us", f"{finding.value:.0f} checkpoint(s) in the window"
    if code == "other_cpu":
        return "reads_per_host_cpu_second", f"{value(f, 'other_cpu_pct'):.0f}% of that CPU other work's"
    if code == "read_only_wrote":
        return "reads_per_s", "a read-only run that wrote: the device did writes too"
    return None, code.replace("_", " ")


VALID_LINE = "VALID storage result"


def summary(given: Doc) -> dict[str, Any]:
    """The machine-readable verdict, from the findings the report makes: valid unless one says the result
    does not measure storage; the reasons one line each, in the engine's own words."""
    doc = _plain(given)
    from dbio.report import words

    reasons = [words.say(doc, x.message) for x in invalid(doc)]
    return {"valid": not reasons, "reasons": reasons}


def summary_line(verdict: dict[str, Any]) -> str:
    """Every format's first line: 'VALID storage result' or 'NOT VALID: <reasons>'."""
    return VALID_LINE if verdict.get("valid") else "NOT VALID: " + "; ".join(verdict.get("reasons") or ["no reason"])
