"""The verdict's rules on the database beside its raw device (pure): a baseline ran fio at the same sessions;
how much of the device the database delivered, why it fell short, and whether the device held still."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.report.cpu_findings import CPU_WAIT_TIME_LIMIT, large_wait_in_reads, workers_part
from dbio.report.finding import Finding, found as _found
from dbio.result_records import Result
from dbio.stats import catalogue
from dbio.stats.catalogue import value

# The database beside the raw device at the same sessions (a baseline): reads/s as a share of fio's.
EFFICIENCY_LOW = 0.8  # below: the database leaves much of the device unused
EFFICIENCY_HIGH = 1.1  # above: more than the device gives, so some reads came from a cache
DRIFT_LIMIT = 1.2  # fio after the run / before it (or its inverse): beyond, the device changed speed meanwhile
CPU_BOUND_PCT = 80.0  # % host CPU busy: beyond, CPU explains a low efficiency
OTHER_WAITS_SHARE = 0.2  # share of the sessions' samples waiting on neither I/O nor a CPU (locks and such)


def _window(r: Result) -> bool:
    return catalogue.measured(r.figures)


def database_vs_device(r: Result) -> Finding | None:
    """A baseline ran: the database beside fio at the same sessions, each access pattern against its own
    raw counterpart (single-block reads against fio's random reads, scans against its sequential
    bandwidth), and why they differ."""
    f = r.figures
    if not _window(r):
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
    return _efficiency_finding(r, f, told, figure_name, eff)


def _efficiency_finding(r: Result, f: Mapping[str, Any], told: str, figure_name: str,
                        eff: float) -> Finding:
    if eff > EFFICIENCY_HIGH:
        return _found("warning", "beyond_device", f"{told}: more than the device, so some reads came from a cache "
                      "(the OS page cache or the storage's): a finding, not a triumph", figure_name, eff)
    if eff >= EFFICIENCY_LOW:
        return _found("info", "efficiency", told, figure_name, eff)
    return _found("warning", "below_device", f"{told}: {_why_below(r, f)}", figure_name, eff)


def device_drift(r: Result) -> Finding | None:
    """fio read at one speed before the database's run and at another after it: the efficiency figures
    compare the database with a device that did not hold still, so they carry that spread."""
    f = r.figures
    drift, reads = value(f, "raw_drift"), value(f, "reads_per_s")
    runs = r.baseline.runs if r.baseline else {}
    before, after = (run.reads_per_s if run else None for run in (runs.get("sync"), runs.get("sync_after")))
    if not _window(r) or drift is None or not reads or 1 / DRIFT_LIMIT <= drift <= DRIFT_LIMIT:
        return None
    if before is None or after is None:  # the drift without fio's two runs it is made of: nothing to say of them
        return None
    low = value(f, "raw_reads_per_s_low") or min(before, after)
    high = value(f, "raw_reads_per_s_high") or max(before, after)
    more = sum(1 for name in runs if name.startswith("sync_more_"))
    rounds = (f"; in {more} more round{'s' if more != 1 else ''} after it, {low:,.0f} to {high:,.0f} in all"
              if more else "")
    return _found("warning", "device_drift", f"the device changed speed during the run: fio read {before:,.0f} "
                  f"reads/s right before it and {after:,.0f} right after (x{drift:.2f}){rounds}, so the database's "
                  f"efficiency lies between {reads / high:.2f} and {reads / low:.2f}; repeat the run to see whether "
                  "the storage settles", "raw_drift", drift)


def _why_below(r: Result, f: Mapping[str, Any]) -> str:
    """What the CPU figures and the sessions' wait samples show about a database behind its device."""
    busy, cpu = value(f, "host_busy_pct"), value(f, "efficiency_cpu")
    counts = r.waits.counts
    samples = sum(counts.values())
    other = {k: n for k, n in counts.items() if k != "CPU" and not k.startswith("IO:")}
    if busy is not None and busy >= CPU_BOUND_PCT:
        cost = f", each read cost {cpu:.1f}x fio's host CPU" if cpu is not None else ""
        return f"CPU-bound: the host's CPU was {busy:.0f}% busy{cost}"
    share, large = value(f, "cpu_wait_pct"), large_wait_in_reads(f)
    if large is not None:  # measured, where the wait samples show it as the read's I/O event
        in_read, avg = large
        if catalogue.workers_wait_alone_in_read(f):  # the sessions' own is not in it
            of_time = (f" (the sessions' own, {share:.0f}% of their time, not counted in it)"
                       if share is not None else "")
            return f"CPU-queued: the I/O workers doing the reads waited {in_read:,.0f} us of the {avg:,.0f} us the " \
                   f"engine timed per read for a CPU{of_time}"
        of_time = f" ({share:.0f}% of their time)" if share is not None else ""
        return f"CPU-queued: the sessions waited {in_read:,.0f} us of the {avg:,.0f} us the engine timed per read " \
               f"for a CPU{workers_part(f, in_read)}{of_time}"
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


def beyond_device_caveat(r: Result, finding: Finding) -> str:
    """The headline's caveat of a database faster than its raw device (report/verdict_rules.py)."""
    return "more than the raw device gave: some reads came from a cache"
