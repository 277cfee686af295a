"""The verdict's rules on the storage's truth (pure): did the device serve the engine's physical reads,
or did a cache (the engine's, the OS page cache) serve them; did the device do more than the engine (another
process on it); did a read-only run write; was the data set larger than the caches; was the device busy."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.report import stack_findings
from dbio.report.finding import Finding, found as _found
from dbio.report.words import cache_name
from dbio.result_records import Result
from dbio.stats import catalogue, device_reads
from dbio.stats.catalogue import value
from dbio.stats.device_reads import DEVICE_EXCESS_LIMIT
from dbio.units import format_bytes

ROWS_FROM_STORAGE_LIMIT = 0.5  # blocks read per row of the range statements (one row per block)
# Beyond this, a row cost more than one block read: the index's blocks (or more of the table's) came
# from storage too, so reads/s counts more than the rows' own blocks (a cache too small for the index)
BLOCKS_PER_ROW_HIGH = 1.2
CACHE_RATIO_WARNING = 2.0  # data set / cache below this: a large share of hits is likely
DEVICE_BUSY_LIMIT = 95.0  # % device utilization
# The device read more than the engine, or less: stats/device_reads.py. It wrote more: beyond DEVICE_EXCESS_LIMIT
# of the engine's bytes, and beyond a floor that keeps noise out. The filesystem's journal (ext4 commits a few
# KiB per WAL sync) and dbio's own samples file, fsynced every interval, reach the same device: 0.54 MiB/s beyond
# the engine's writes at 123 WAL syncs/s in tests/fixtures/result_complete.json. Their share grows with the
# window, so the floor is a rate.
DEVICE_EXCESS_MIN_WRITE_BYTES_PER_S = 1 << 20
# A run with no UPDATE: bytes written (data files and WAL, every process) per byte read. Beyond the
# limit it measured writes too (its reads rewrote pages an earlier run's updates left, or their dirty
# pages were flushed meanwhile) and is no read-only result; beyond the note it is said.
READ_ONLY_WRITE_LIMIT = 0.01
READ_ONLY_WRITE_NOTE = 0.001
# Beyond this ratio of the device's I/O to the engine's, a finding states both amounts, not a percentage.
PLAIN_RATIO = 10.0


def _window(r: Result) -> bool:
    return catalogue.measured(r.figures)


def hotspot_share(r: Result) -> float:
    """The share of the statements the configuration sends to the hot spot, which is there to be
    served from the cache (SLOB's HOTSPOT_FREQUENCY: every Nth statement); 0 without one."""
    every = r.config.hotspot_every
    return 0.0 if every is None else 1.0 / every


def rows_from_cache(r: Result) -> Finding | None:
    """The cache served the rows meant to come from storage: the cold ones (all of them, without a hot spot)."""
    per_row = value(r.figures, "blocks_read_per_row")
    hot = hotspot_share(r)
    cold = 1.0 - hot
    if not _window(r) or per_row is None:
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


def reads_beyond_rows(r: Result) -> Finding | None:
    per_row = value(r.figures, "blocks_read_per_row")
    if not _window(r) or per_row is None or per_row <= BLOCKS_PER_ROW_HIGH:
        return None
    return _found("warning", "reads_beyond_rows",
                  f"{per_row:.2f} blocks read per row of the range statements, not about 1: index blocks (or more "
                  f"of the table's) were read from storage too, so reads/s is not rows/s; {cache_name(r)} holds "
                  "too little of the index", "blocks_read_per_row", per_row)


def page_cache(r: Result) -> Finding | None:
    """Fewer of the engine's reads reached the device than it counted: a cache served the rest (judged as the
    live view does, stats/device_reads.py: bytes for multi-block reads, requests for single pages)."""
    f = r.figures
    reads = read_comparison(f, page_bytes(r))
    # some tables on a place no watched device holds: the devices saw a part (stack_findings.no_device says which)
    if not _window(r) or reads is None or reads.share is None or not value(f, "reads_per_s") \
            or stack_findings.uncovered_data(r):
        return None
    what, ref, ref_value = ("the bytes the engine read", "device_read_bytes", reads.device) if reads.by_bytes else \
        ("the engine's physical reads", "device_to_db_read_ratio", reads.share)
    if reads.cache():
        where = "the OS page cache served the rest" if not value(f, "direct_io") else \
            "with direct I/O on, check which device the data directory is on"
        judged = " (multi-block reads, judged by bytes)" if reads.by_bytes else ""
        return _found("invalid", "page_cache", f"only {100 * reads.share:.1f}% of {what} reached the device"
                                               f"{judged}: {where}", ref, ref_value)
    # more reads than the engine's: shared_device
    if not value(f, "direct_io") and reads.excess() is None:
        return _found("info", "page_cache", f"direct I/O is off, yet {100 * reads.share:.1f}% of {what} "
                                            "reached the device", ref, ref_value)
    return None


def read_only_wrote(r: Result) -> Finding | None:
    """A read-only run is judged by what it wrote: writes inside its window make it a mixed workload."""
    f = r.figures
    read, data, wal = value(f, "read_mib_per_s"), value(f, "write_mib_per_s"), value(f, "wal_bytes_per_s")
    if not _window(r) or r.config.update_pct != 0 or not read or data is None:
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


def page_bytes(r: Result) -> int:
    """The engine's read unit, what one buffer-cache miss reads."""
    return r.caps.page_bytes or 8192


def read_comparison(f: Mapping[str, Any], page_bytes: int) -> device_reads.Reads | None:
    """The window's device reads against the engine's, in the unit they are judged in (stats/device_reads.py)."""
    return device_reads.compared(value(f, "device_reads"), value(f, "device_read_bytes"), value(f, "db_reads"),
                                 value(f, "db_read_bytes"), page_bytes)


def read_excess(f: Mapping[str, Any], page_bytes: int) -> str | None:
    """The device's reads beyond the engine's physical reads, when they are significant: requests for
    single-block reads, bytes for multi-block reads (stats/device_reads.py, the live view's judgement too)."""
    reads = read_comparison(f, page_bytes)
    if reads is None or reads.excess() is None:
        return None
    device, engine = reads.device, reads.engine
    if reads.by_bytes:
        if device <= PLAIN_RATIO * engine:
            return (f"the device read {100 * device / engine:.1f}% of the engine's bytes (device "
                    f"{format_bytes(device)}, engine {format_bytes(engine)}: multi-block reads are judged by bytes)")
        return (f"the device read {format_bytes(device)} while the engine read {format_bytes(engine)} (multi-block "
                "reads are judged by bytes)")
    if engine and device <= PLAIN_RATIO * engine:
        return (f"the device did {100 * device / engine:.1f}% of the engine's physical reads (device {device:,.0f}, "
                f"engine {engine:,.0f} read requests)")
    # a ratio in the thousands of % says nothing: the counts do
    return f"the device did {device:,.0f} read requests while the engine did {engine:,.0f}"


def _write_excess(f: Mapping[str, Any], seconds: float) -> str | None:
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


def shared_device(r: Result) -> Finding | None:
    """The device under the data directory did more I/O than the engine: someone else used it."""
    f = r.figures
    if not _window(r):
        return None
    reads = None if stack_findings.uncovered_data(r) else read_excess(f, page_bytes(r))
    writes = _write_excess(f, value(f, "window_seconds"))
    if not reads and not writes:
        return None
    ahead = " (or, direct I/O being off, the kernel read ahead more than the engine asked)" \
        if reads and not value(f, "direct_io") else ""
    ratio = "device_to_db_read_ratio" if reads else "device_to_db_write_ratio"
    return _found("warning", "shared_device",
                  "; ".join(part for part in (reads, writes) if part) + f": another process used the device{ahead}"
                  + _event_programs(r) + ", so the device's figures (Device table) and the engine's disagree",
                  ratio, value(f, ratio))


def _event_programs(r: Result) -> str:
    """The --event programs (exec:) that read or wrote storage, by their own accounting: the other reader named."""
    named = [f"{e.get('program')} read {format_bytes(e.get('read_bytes') or 0)} and wrote "
             f"{format_bytes(e.get('write_bytes') or 0)}" for e in r.disruption_events
             if e.get("program") and (e.get("read_bytes") or e.get("write_bytes"))]
    if not named:
        return ""
    several = len(named) > 1
    return (f" (the --event program{'s' if several else ''} {'; '.join(named)}, by "
            f"{'their' if several else 'its'} own accounting)")


def small_data_set(r: Result) -> Finding | None:
    f = r.figures
    data, cache = value(f, "data_bytes"), value(f, "cache_bytes")
    if not _window(r) or not data or not cache:
        return None
    page_cache_bytes = 0
    if not value(f, "direct_io") and r.caps.local:
        page_cache_bytes = r.environment.host.get("memory_available_bytes") or 0
    total = cache + page_cache_bytes
    cached_by = f"{cache_name(r)} ({format_bytes(cache)})" + (
        f" plus the available page cache ({format_bytes(page_cache_bytes)})" if page_cache_bytes else "")
    if data <= total:
        return _found("invalid", "small_data_set", f"the data set ({format_bytes(data)}) fits in {cached_by}",
                      "data_to_cache_ratio", data / total)
    if data < CACHE_RATIO_WARNING * total:
        return _found("warning", "small_data_set", f"the data set ({format_bytes(data)}) is only {data / total:.1f}x "
                                                   f"{cached_by}: many reads may be cache hits",
                      "data_to_cache_ratio", data / total)
    return None


def device_saturated(r: Result) -> Finding | None:
    utilization = catalogue.member(catalogue.DEVICE_FIGURES, "utilization_pct")
    busy = [(name, utilization.value(d)) for name, d in catalogue.devices(r.figures).items()]
    busy = [(name, util) for name, util in busy if util is not None and util >= DEVICE_BUSY_LIMIT]
    if not _window(r) or not busy:
        return None
    name, util = max(busy, key=lambda x: x[1])
    return Finding("info", "device_busy", f"device {name} was busy {util:.0f}% of the window: requests queued at the "
                                          "device", f"devices.{name}.{utilization.ref}", util)


# The headline's caveats of these rules' warnings (report/verdict_rules.py): a few words beside the figure.

def shared_device_caveat(r: Result, finding: Finding) -> str:
    f = r.figures
    reads = read_comparison(f, page_bytes(r))
    ratio = None if reads is None else reads.share
    if reads is not None and ratio is not None and reads.excess() is not None:
        what = "the engine's bytes" if reads.by_bytes else "the engine's reads"
        did = f"{ratio:.1f}x {what}" if ratio >= 2 else f"{100 * ratio:.1f}% of {what}"
        return f"the device {'read' if reads.by_bytes else 'did'} {did}: other work shared the device"
    wrote = value(f, "device_to_db_write_ratio")
    return (f"the device wrote {wrote:.1f}x the engine's bytes" if wrote is not None else
            "the device wrote what the engine did not") + ": other work shared the device"


def small_data_set_caveat(r: Result, finding: Finding) -> str | None:
    if finding.value is None:
        return None
    return f"the data set is only {finding.value:.1f}x the cache: some reads may be cache hits"


def reads_beyond_rows_caveat(r: Result, finding: Finding) -> str | None:
    return None if finding.value is None else f"{finding.value:.2f} blocks read per row: index blocks too"


def read_only_wrote_caveat(r: Result, finding: Finding) -> str:
    return "a read-only run that wrote: the device did writes too"
