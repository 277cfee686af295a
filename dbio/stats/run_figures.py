"""The figures of a run's window, declared once (pure): where each lives in a window's figures, or
how it is derived from others there, and the readings of several figures together that verdicts
and reports share (a CPU wait within a read, scans dominating).

Read by name through stats/catalogue.py, never from here by path.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from dbio.stats.counters import get
from dbio.stats.figure_record import DIFFERENCE, HIGHER, LOWER, POINTS, Figure
from dbio.stats.figure_record import at_path as _fig
from dbio.stats.group_figures import devices


def _value(f: Mapping[str, Any] | None, name: str) -> Any:
    """A window figure by name, for the derivations below (stats/catalogue.py's `value` for everyone else)."""
    return BY_NAME[name].value(f)


def _present_sum(*values: Any) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _io_mib(f: Mapping[str, Any]) -> float | None:
    return _present_sum(*(_value(f, n) for n in ("read_mib_per_s", "write_mib_per_s", "wal_write_mib_per_s")))


def _dbio_cpu(f: Mapping[str, Any]) -> float:
    return (_value(f, "dbio_client_cpu_seconds") or 0) + (_value(f, "dbio_monitor_cpu_seconds") or 0)


def _dbio_overhead(f: Mapping[str, Any]) -> float | None:
    busy = _value(f, "host_busy_seconds")
    return 100.0 * _dbio_cpu(f) / busy if busy else None


def _ratio(numerator: Any, denominator: Any) -> float | None:
    return numerator / denominator if numerator is not None and denominator else None


def _db_cpu_us_per_read(f: Mapping[str, Any]) -> float | None:
    """The host's busy CPU per physical read, the database's side of the baseline comparison."""
    return _ratio(1e6, _value(f, "reads_per_host_cpu_second"))


# The device did the engine's reads (its requests within this share of the engine's): its average read is theirs.
DEVICE_MATCH = 0.05


def cpu_wait_in_read_parts(f: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(the wait for a CPU per read that can lie within the engine's timed reads, the I/O workers' part of it:
    None when none of it is theirs). The sessions' wait with the workers' doing their reads (io_method = worker),
    where it is no more than the engine's average read beyond the device's own, with the device doing the
    engine's reads. Waits after a commit's sync, between slices or in CPU work (scans) can make the sessions'
    more: then it is not a part of the read; when both together are more than fits, the larger that fits alone
    is placed. The workers' too is placed only where it fits: a worker also waits for reads read ahead that
    were done before a session needed them, which no session timed (the bitmap path)."""
    waited, avg = _value(f, "cpu_wait_us_per_read"), _value(f, "avg_read_us")
    match = _value(f, "device_to_db_read_ratio")
    helpers = _value(f, "io_worker_cpu_wait_us_per_read")
    if avg is None:
        return None, None
    timed = [(d["reads"], d["avg_read_us"]) for d in devices(f).values()
             if d.get("reads") and d.get("avg_read_us") is not None]
    if waited is None or match is None or abs(match - 1) > DEVICE_MATCH or not timed:
        return None, None
    beyond = avg - sum(n * us for n, us in timed) / sum(n for n, _ in timed)
    if helpers is None:
        return (waited, None) if waited <= beyond else (None, None)
    if waited + helpers <= beyond:
        return waited + helpers, helpers
    alone = sorted([(waited, None), (helpers, helpers)], key=lambda part: part[0], reverse=True)
    return next(((w, h) for w, h in alone if w <= beyond), (None, None))


def _cpu_wait_in_read(f: Mapping[str, Any]) -> float | None:
    return cpu_wait_in_read_parts(f)[0]


def workers_wait_alone_in_read(f: Mapping[str, Any]) -> bool:
    """Whether the wait placed in the read is the I/O workers' alone (the sessions' own did not fit in it)."""
    placed, helpers = cpu_wait_in_read_parts(f)
    return placed is not None and helpers == placed


# Scans' share of the bytes read from which a run is judged as scans: against fio's sequential
# bandwidth, not its random single-block reads.
SCAN_MAJORITY = 0.5


def scans_dominate(f: Mapping[str, Any]) -> bool:
    """Most of the bytes the run read were its scans' (multi-block reads)."""
    scan, read = _value(f, "scan_mib_per_s"), _value(f, "read_mib_per_s")
    return bool(scan and read and scan / read >= SCAN_MAJORITY)


def _efficiency(database: str, raw: str) -> Callable[[Mapping[str, Any]], float | None]:
    return lambda f: _ratio(_value(f, database), _value(f, raw))


def _hot(name: str, part: str, key: str, label: str, unit: str, kind: str, how: str = "", **more: Any) -> Figure:
    """A figure of a hot-spot run's part: derived, being absent (None) from a run without a hot spot."""
    return Figure(name, label, unit, kind, derive=lambda f: get(f, "hotspot", part, key), how=how, section="hotspot",
                  **more)


FIGURES: tuple[Figure, ...] = (
    _fig("window_seconds", "window_seconds", "Measured window", "s", "seconds", "length of the measured window"),
    # -- load profile: what the workload did, per second of the window
    _fig("logical_reads_per_s", "load_profile.logical_reads_per_s", "Logical reads/s", "blocks/s", "rate",
         "buffer hits plus blocks read"),
    _fig("reads_per_s", "load_profile.physical_reads_per_s", "Physical reads/s", "reads/s", "rate",
         "data-file read requests of every process", series="reads_per_s", noise=True, short="Reads/s",
         phrase="{:,.0f} physical reads/s", **HIGHER),
    _fig("read_blocks_per_s", "load_profile.physical_read_blocks_per_s", "Physical read blocks/s", "blocks/s", "rate",
         "data-file bytes read / 8 KiB"),
    _fig("writes_per_s", "load_profile.physical_writes_per_s", "Physical writes/s", "writes/s", "rate",
         "data-file write requests of every process", series="writes_per_s", noise=True, short="Writes/s"),
    _fig("wal_bytes_per_s", "load_profile.wal_bytes_per_s", "WAL generated/s", "bytes/s", "rate",
         "WAL bytes generated"),
    _fig("wal_writes_per_s", "load_profile.wal_writes_per_s", "WAL writes/s", "writes/s", "rate"),
    _fig("wal_syncs_per_s", "load_profile.wal_syncs_per_s", "WAL syncs/s", "syncs/s", "rate"),
    _fig("statements_per_s", "load_profile.statements_per_s", "Statements/s", "statements/s", "rate",
         "SELECTs, UPDATEs and scans the sessions finished", series="statements_per_s", noise=True, **HIGHER),
    _fig("selects_per_s", "load_profile.selects_per_s", "SELECTs/s", "statements/s", "rate"),
    _fig("updates_per_s", "load_profile.updates_per_s", "UPDATEs/s", "statements/s", "rate"),
    _fig("scans_per_s", "load_profile.scans_per_s", "Scans/s", "statements/s", "rate"),
    _fig("commits_per_s", "load_profile.commits_per_s", "Commits/s", "commits/s", "rate",
         "the workload's: one per UPDATE"),
    _fig("server_commits_per_s", "load_profile.server_commits_per_s", "Server transactions/s", "commits/s", "rate",
         "every commit the server counted, dbio's own slices and samples included"),
    _fig("rows_per_s", "load_profile.rows_per_s", "Rows touched/s", "rows/s", "rate"),
    # -- I/O profile: requests and bytes by file kind
    _fig("data_read_requests_per_s", "io_profile.data_read_requests_per_s", "Data read requests/s", "requests/s",
         "rate"),
    _fig("read_mib_per_s", "io_profile.data_read_mib_per_s", "Read MiB/s", "MiB/s", "rate", "data-file bytes read",
         series="read_mib_per_s", noise=True, phrase="{:,.1f} MiB/s", **HIGHER),
    _fig("data_write_requests_per_s", "io_profile.data_write_requests_per_s", "Data write requests/s",
         "requests/s", "rate"),
    _fig("write_mib_per_s", "io_profile.data_write_mib_per_s", "Write MiB/s", "MiB/s", "rate",
         "data-file bytes written", series="write_mib_per_s"),
    _fig("wal_write_requests_per_s", "io_profile.wal_write_requests_per_s", "WAL write requests/s", "requests/s",
         "rate"),
    _fig("wal_write_mib_per_s", "io_profile.wal_write_mib_per_s", "WAL MiB/s", "MiB/s", "rate",
         "WAL bytes written (generated, where the engine does not count written bytes)"),
    _fig("wal_write_mib_is_generated", "io_profile.wal_write_mib_is_generated", "WAL MiB/s is generated bytes",
         "flag", "text", "the engine counts WAL generated, not written"),
    _fig("total_requests_per_s", "io_profile.total_requests_per_s", "I/O requests/s", "requests/s", "rate",
         "data reads, data writes and WAL writes"),
    Figure("io_mib_per_s", "Data and WAL MiB/s", "MiB/s", "rate", derive=_io_mib, short="MiB/s",
           section="io_profile", how="data read, data write and WAL write MiB/s added up"),
    # -- latency, as the engine timed its I/O and as the work loop timed its statements
    _fig("avg_read_us", "latency.avg_read_us", "Avg physical read", "us", "us",
         "the client sessions' own read time / their reads (engine I/O timing; their parallel query workers' "
         "reads apart)", series="avg_read_us", noise=True,
         short="Avg read", phrase="{:,.0f} us avg read", **LOWER),
    _fig("avg_read_us_all_backends", "latency.avg_read_us_all_backends", "Avg physical read (all processes)", "us",
         "us", **LOWER),
    _fig("avg_write_us", "latency.avg_write_us", "Avg physical write", "us", "us", **LOWER),
    _fig("avg_wal_write_us", "latency.avg_wal_write_us", "Avg WAL write", "us", "us", **LOWER),
    _fig("avg_wal_sync_us", "latency.avg_wal_sync_us", "Avg WAL sync", "us", "us", **LOWER),
    _fig("select_mean_us", "latency.statements.select.mean_us", "SELECT mean", "us", "us", **LOWER),
    _fig("select_p50_us", "latency.statements.select.p50_us", "SELECT p50", "us", "us", **LOWER),
    _fig("select_p99_us", "latency.statements.select.p99_us", "SELECT p99", "us", "us",
         "99th percentile of the window's SELECT histogram", series="select_p99_us", **LOWER),
    _fig("select_p99_9_us", "latency.statements.select.p99_9_us", "SELECT p99.9", "us", "us", **LOWER),
    # an UPDATE in autocommit includes its commit: on a Galera node its replication and certification too
    _fig("update_mean_us", "latency.statements.update.mean_us", "UPDATE (with its commit) mean", "us", "us",
         short="UPDATE mean", **LOWER),
    _fig("update_p99_us", "latency.statements.update.p99_us", "UPDATE (with its commit) p99", "us", "us",
         short="UPDATE p99", **LOWER),
    # single reads, timed by the engine around each read of the read probe's lookups (run/read_probe.py)
    _fig("single_read_count", "latency.single_reads.count", "Single reads timed", "reads", "count",
         "the read probe's lookups that read exactly one block, each timed by the engine", compare=DIFFERENCE),
    _fig("single_read_p50_us", "latency.single_reads.p50_us", "Single read p50", "us", "us",
         "median of single reads' latency as the engine timed each (read probe)", **LOWER),
    _fig("single_read_p90_us", "latency.single_reads.p90_us", "Single read p90", "us", "us", **LOWER),
    _fig("single_read_p99_us", "latency.single_reads.p99_us", "Single read p99", "us", "us",
         "99th percentile of single reads' latency as the engine timed each (read probe)", short="Read p99",
         **LOWER),
    _fig("single_read_p99_9_us", "latency.single_reads.p99_9_us", "Single read p99.9", "us", "us", **LOWER),
    _fig("single_read_max_us", "latency.single_reads.max_us", "Single read max", "us", "us", **LOWER),
    _fig("single_read_fast_pct", "latency.single_reads.fast_pct", "Single reads under 20 us", "%", "pct",
         "reads faster than a device answers: from memory (the OS page cache) when the server reads through it",
         compare=POINTS),
    # -- CPU
    _fig("cores", "cpu.cores", "CPUs", "CPUs", "count"),
    _fig("host_busy_pct", "cpu.host.busy_pct", "Host CPU busy", "%", "pct",
         "time neither idle, I/O wait nor stolen / (elapsed x CPUs): user + system + unsampled, stats/host_cpu.py",
         series="host_busy_pct", noise=True,
         compare=POINTS, short="Host CPU"),
    _fig("host_user_pct", "cpu.host.user_pct", "Host CPU user", "%", "pct", series="host_user_pct", compare=POINTS,
         short="User"),
    _fig("host_system_pct", "cpu.host.system_pct", "Host CPU system", "%", "pct", series="host_system_pct",
         compare=POINTS, short="System"),
    _fig("host_unsampled_pct", "cpu.host.unsampled_pct", "Host CPU busy, unsampled", "%", "pct",
         "busy time the kernel's clock tick attributed to neither user nor system (short bursts between idle periods)",
         compare=POINTS, short="Unsampled"),
    _fig("host_iowait_pct", "cpu.host.iowait_pct", "Host CPU I/O wait", "%", "pct", series="host_iowait_pct",
         compare=POINTS, short="I/O wait"),
    _fig("host_steal_pct", "cpu.host.steal_pct", "Host CPU steal", "%", "pct", compare=POINTS, short="Steal"),
    _fig("host_idle_pct", "cpu.host.idle_pct", "Host CPU idle", "%", "pct", compare=POINTS, short="Idle"),
    _fig("host_accounted_pct", "cpu.host.accounted_pct", "Host CPU time accounted", "%", "pct",
         "the share of elapsed x CPUs the kernel accounted to any state", compare=POINTS),
    _fig("host_busy_cores", "cpu.host.busy_cores", "Busy CPUs", "CPUs", "rate",
         "busy CPU seconds / elapsed seconds", short="Busy CPUs"),
    _fig("host_busy_seconds", "cpu.host.busy_seconds", "Host busy CPU seconds", "s", "seconds"),
    _fig("reads_per_host_cpu_second", "cpu.reads_per_host_cpu_second", "Reads per host-CPU-second", "reads/CPU-s",
         "rate", "physical reads / the host's busy CPU seconds (server on this host only)",
         phrase="{:,.0f} reads per host-CPU-second", **HIGHER),
    _fig("db_cpu_seconds", "cpu.db_cpu_seconds", "DB CPU seconds (sessions)", "s", "seconds"),
    _fig("db_cpu_cores", "cpu.db_cpu_cores", "DB CPU in use (cores)", "CPUs", "rate",
         "the sessions' CPU seconds / the window's seconds", series="db_cpu_cores"),
    _fig("background_cpu_seconds", "cpu.background_cpu_seconds", "Background processes CPU seconds", "s", "seconds"),
    _fig("dbio_client_cpu_seconds", "cpu.dbio_client_cpu_seconds", "dbio client CPU seconds", "s", "seconds"),
    _fig("dbio_monitor_cpu_seconds", "cpu.dbio_monitor_cpu_seconds", "dbio monitor CPU seconds", "s", "seconds",
         "server processes answering dbio's sampling"),
    Figure("dbio_cpu_seconds", "dbio's own measuring, CPU seconds", "s", "seconds", derive=_dbio_cpu, section="cpu",
           how="dbio's client and the server processes answering its samples"),
    Figure("dbio_overhead_pct", "dbio's share of the host's busy CPU", "%", "pct", derive=_dbio_overhead,
           how="dbio's own measuring CPU seconds / the host's busy CPU seconds", compare=POINTS,
           section="cpu", **LOWER),
    _fig("reads_per_db_cpu_second", "cpu.reads_per_db_cpu_second", "Physical reads per DB CPU second", "reads/CPU-s",
         "rate", short="Reads/DB-CPU-s", **HIGHER),
    _fig("db_cpu_us_per_read", "cpu.db_cpu_us_per_read", "DB CPU per read", "us", "us",
         "the sessions' CPU seconds / physical reads", **LOWER),
    _fig("server_cpu_seconds", "cpu.server_cpu_seconds", "Database server CPU seconds (all its processes)", "s",
         "seconds", "every process or thread of the servers the sessions belong to, those that ended in the window "
         "included: sessions, helpers, other clients' sessions"),
    _fig("kernel_cpu_seconds", "cpu.kernel_cpu_seconds", "Kernel's own CPU seconds (interrupts, kernel threads)",
         "s", "seconds", "/proc/stat's interrupt time and the kernel threads' CPU: serving the reads, among others"),
    _fig("other_cpu_seconds", "cpu.other_cpu_seconds", "Other work's CPU seconds", "s", "seconds",
         "the host's busy CPU seconds less the database servers', dbio's client's and the kernel's own: other "
         "programs"),
    _fig("other_cpu_pct", "cpu.other_cpu_pct", "Other work's share of the host's busy CPU", "%", "pct",
         "other work's CPU seconds / the host's busy CPU seconds", compare=POINTS, **LOWER),
    _fig("cpu_wait_seconds", "cpu.cpu_wait_seconds", "Sessions' wait for a CPU, seconds", "s", "seconds",
         "time the sessions were ready to run but waited on a run queue (/proc/<pid>/schedstat)"),
    _fig("cpu_wait_us_per_read", "cpu.cpu_wait_us_per_read", "Wait for a CPU per read (sessions)", "us", "us",
         "the sessions' run-queue wait / their physical reads, wherever the wait fell (after a read, a commit, "
         "between slices)", short="CPU wait/read", **LOWER),
    _fig("io_worker_cpu_wait_seconds", "cpu.io_worker_cpu_wait_seconds", "I/O workers' wait for a CPU, seconds",
         "s", "seconds", "time the processes doing the sessions' reads for them (io_method = worker) were ready to "
         "run but waited on a run queue (/proc/<pid>/schedstat)"),
    _fig("io_worker_cpu_wait_us_per_read", "cpu.io_worker_cpu_wait_us_per_read", "I/O workers' wait for a CPU per read",
         "us", "us", "the I/O workers' run-queue wait / the physical reads of every process: a read waits for its "
         "worker to run", short="I/O worker CPU wait/read", **LOWER),
    Figure("cpu_wait_in_read_us", "Wait for a CPU within a read", "us", "us", derive=_cpu_wait_in_read,
           section="cpu", short="CPU wait in read", how="the sessions' wait for a CPU per read (and the I/O workers' "
           "doing their reads), where it is no more than the engine's average read beyond the device's own (the "
           "device doing the engine's reads): a session woken by its read's completion waits for a CPU before the "
           "engine's timing of the read ends", **LOWER),
    _fig("server_cpu_throttled_periods_pct", "cpu.server_cpu_throttled_periods_pct",
         "Server's CPU quota used up (share of its periods)", "%", "pct",
         "periods of the server's cgroup CPU quota in which it ran out and the server was held back (cpu.stat "
         "nr_throttled / nr_periods)", compare=POINTS, **LOWER),
    _fig("server_cpu_throttled_seconds", "cpu.server_cpu_throttled_seconds", "Server's run queues held by its CPU "
         "quota, seconds summed over CPUs", "s", "seconds", "time the server's run queues were held by its cgroup's "
         "CPU quota, summed over the CPUs' run queues (cpu.stat throttled time; with several CPUs it can exceed the "
         "window)"),
    _fig("cpu_wait_pct", "cpu.cpu_wait_pct", "Sessions' time waiting for a CPU", "%", "pct",
         "the sessions' run-queue wait / their time in the window", compare=POINTS, **LOWER),
    _fig("reads_per_second_per_core", "cpu.reads_per_second_per_core", "Physical reads/s per CPU core", "reads/s",
         "rate", **HIGHER),
    # -- validity: does the window measure storage
    # -- a hot-spot run's two parts (stats/hotspot.py): absent without a hot spot or in an older result
    _hot("hot_share_pct", "hot", "share_pct", "Hot-spot statements", "%", "pct", "the hot spot's SELECTs / every "
         "statement", compare=POINTS),
    _hot("hot_statements_per_s", "hot", "statements_per_s", "Hot-spot SELECTs/s", "statements/s", "rate"),
    _hot("hot_mean_us", "hot", "mean_us", "Hot-spot SELECT mean", "us", "us", "timed in the loop: the part meant to "
         "be served from memory", **LOWER),
    _hot("hot_p99_us", "hot", "p99_us", "Hot-spot SELECT p99", "us", "us", **LOWER),
    _hot("hot_rows_per_s", "hot", "rows_per_s", "Hot-spot rows/s", "rows/s", "rate"),
    _hot("cold_statements_per_s", "cold", "statements_per_s", "Cold statements/s", "statements/s", "rate",
         "every statement but the hot spot's SELECTs"),
    _hot("cold_mean_us", "cold", "mean_us", "Cold SELECT mean", "us", "us", "the range SELECTs outside the hot "
         "spot, timed in the loop: the part storage serves", **LOWER),
    _hot("cold_p99_us", "cold", "p99_us", "Cold SELECT p99", "us", "us", **LOWER),
    _hot("cold_rows_per_s", "cold", "rows_per_s", "Cold rows/s", "rows/s", "rate",
         "rows every statement but the hot spot's SELECTs touched"),
    # -- an open loop's (--rate, stats/rate.py): absent from a closed loop's window or an older result
    _fig("rate_asked_per_s", "rate.asked_per_s", "Rate asked", "statements/s", "rate",
         "--rate: the statements/s the sessions were scheduled for (this window's sessions' share)"),
    _fig("rate_achieved_per_s", "rate.achieved_per_s", "Rate achieved", "statements/s", "rate",
         "statements finished in the window / its seconds", **HIGHER),
    _fig("rate_achieved_pct", "rate.achieved_pct", "Rate achieved, % of asked", "%", "pct", compare=POINTS),
    _fig("rate_held", "rate.held", "Rate held", "", "text", "achieved within 1% of asked (a Poisson schedule's "
         "count within 3 standard deviations) and the schedule's lag bounded (its last interval's mean under "
         "0.1 s)"),
    _fig("intended_p50_us", "rate.intended_p50_us", "Latency from intended start p50", "us", "us",
         "each statement's end less its intended start on the schedule: its wait behind a late loop included",
         **LOWER),
    _fig("intended_p99_us", "rate.intended_p99_us", "Latency from intended start p99", "us", "us", **LOWER),
    _fig("intended_p99_9_us", "rate.intended_p99_9_us", "Latency from intended start p99.9", "us", "us", **LOWER),
    _fig("intended_mean_us", "rate.intended_mean_us", "Latency from intended start mean", "us", "us", **LOWER),
    _fig("schedule_lag_p50_us", "rate.lag_p50_us", "Schedule lag p50", "us", "us",
         "each statement's actual start less its intended start (pgbench's schedule lag)", **LOWER),
    _fig("schedule_lag_p99_us", "rate.lag_p99_us", "Schedule lag p99", "us", "us", **LOWER),
    _fig("schedule_lag_max_us", "rate.lag_max_us", "Schedule lag max", "us", "us", **LOWER),
    _fig("schedule_lag_first_us", "rate.lag_first_us", "Schedule lag, first interval's mean", "us", "us"),
    _fig("schedule_lag_last_us", "rate.lag_last_us", "Schedule lag, last interval's mean", "us", "us", **LOWER),
    _fig("late_statements", "rate.late", "Statements later than the latency limit", "statements", "count",
         "--latency-limit: latency from the intended start beyond it", compare=DIFFERENCE, **LOWER),
    _fig("late_pct", "rate.late_pct", "Statements later than the latency limit, %", "%", "pct", compare=POINTS,
         **LOWER),
    _fig("blocks_read_per_row", "validity.blocks_read_per_row", "Blocks read per row", "blocks", "rate",
         "single-block reads of the range statements / rows they touched"),
    _fig("buffer_hit_pct", "validity.buffer_hit_pct", "Buffer hits", "%", "pct", compare=POINTS),
    _fig("buffer_miss_pct", "validity.buffer_miss_pct", "Buffer misses", "%", "pct", compare=POINTS),
    _fig("device_reads", "validity.device_reads", "Device reads", "requests", "count", compare=DIFFERENCE),
    _fig("db_reads", "validity.db_reads", "Engine reads", "requests", "count", compare=DIFFERENCE),
    _fig("device_to_db_read_ratio", "validity.device_to_db_read_ratio", "Device reads / engine reads", "ratio",
         "rate"),
    _fig("device_read_bytes", "validity.device_read_bytes", "Device bytes read", "bytes", "count",
         compare=DIFFERENCE),
    _fig("db_read_bytes", "validity.db_read_bytes", "Engine bytes read", "bytes", "count", "data files",
         compare=DIFFERENCE),
    _fig("device_write_bytes", "validity.device_write_bytes", "Device bytes written", "bytes", "count",
         compare=DIFFERENCE),
    _fig("db_write_bytes", "validity.db_write_bytes", "Engine bytes written", "bytes", "count",
         "data files, WAL and temporary files", compare=DIFFERENCE),
    _fig("device_to_db_write_ratio", "validity.device_to_db_write_ratio", "Device bytes / engine bytes written",
         "ratio", "rate"),
    _fig("direct_io", "validity.direct_io", "Direct I/O", "flag", "text"),
    _fig("data_bytes", "validity.data_bytes", "Data set", "bytes", "count", compare=DIFFERENCE),
    _fig("cache_bytes", "validity.cache_bytes", "Buffer cache", "bytes", "count", compare=DIFFERENCE),
    _fig("data_to_cache_ratio", "validity.data_to_cache_ratio", "Data set / buffer cache", "ratio", "rate"),
    # -- the raw-device baseline (fio, same storage, same concurrency) and the database's efficiency
    _fig("raw_reads_per_s", "baseline.reads_per_s", "Raw reads/s (fio)", "reads/s", "rate",
         "fio's 8 KiB O_DIRECT synchronous random reads, one job per session, on the same files (half right before "
         "the database's run, half right after, pooled)", **HIGHER),
    _fig("raw_avg_read_us", "baseline.avg_read_us", "Raw avg read (fio)", "us", "us", **LOWER),
    _fig("raw_host_cpu_us_per_read", "baseline.host_cpu_us_per_read", "Raw host CPU per read (fio)", "us", "us",
         "the host's busy CPU seconds over fio's run, less fio's own starting and stopping, / its reads",
         **LOWER),
    _fig("raw_process_cpu_us_per_read", "baseline.process_cpu_us_per_read", "Raw readers' own CPU per read (fio)",
         "us", "us", "fio's jobs' CPU seconds while they read (their own rusage) / their reads: the readers' own, as "
         "DB CPU is the sessions'", **LOWER),
    _fig("raw_reads_per_s_low", "baseline.reads_per_s_low", "Raw reads/s, slowest round (fio)", "reads/s", "rate",
         "the slowest of fio's synchronous rounds before and after the database's run"),
    _fig("raw_reads_per_s_high", "baseline.reads_per_s_high", "Raw reads/s, fastest round (fio)", "reads/s", "rate",
         "the fastest of fio's synchronous rounds before and after the database's run"),
    _fig("raw_drift", "baseline.drift", "Raw reads/s after the run / before it (fio)", "ratio", "rate",
         "fio's synchronous reads right after the database's run against right before it: 1.00 when the device "
         "kept its speed through the window", short="Device drift"),
    _fig("raw_ceiling_reads_per_s", "baseline.ceiling_reads_per_s", "Device ceiling reads/s (fio, deep queue)",
         "reads/s", "rate", "fio's asynchronous random reads with a deep queue: what the device can do"),
    _fig("raw_writes_per_s", "baseline.writes_per_s", "Raw random writes/s (fio)", "writes/s", "rate",
         "fio's 8 KiB O_DIRECT random writes to a scratch file on the data's filesystem, one job per session"),
    _fig("raw_avg_write_us", "baseline.avg_write_us", "Raw avg write (fio)", "us", "us", **LOWER),
    _fig("raw_wal_syncs_per_s", "baseline.wal_syncs_per_s", "Raw redo log syncs/s", "syncs/s", "rate",
         "the engine's own sync test (PostgreSQL: pg_test_fsync, its wal_sync_method, one 8 KiB write per sync)"),
    _fig("raw_avg_wal_sync_us", "baseline.avg_wal_sync_us", "Raw redo log sync", "us", "us", **LOWER),
    Figure("host_cpu_us_per_read", "Host CPU per read", "us", "us", derive=_db_cpu_us_per_read, section="cpu",
           how="the host's busy CPU seconds / physical reads (1 / reads per host-CPU-second)", **LOWER),
    Figure("efficiency_reads", "Database efficiency (reads/s / raw)", "ratio", "rate",
           derive=_efficiency("reads_per_s", "raw_reads_per_s"), section="efficiency", short="Efficiency",
           how="the database's physical reads/s / fio's at the same concurrency", phrase="{:.2f} of the device's "
           "synchronous reads", **HIGHER),
    Figure("efficiency_reads_low", "Database efficiency against fio's fastest round", "ratio", "rate",
           derive=_efficiency("reads_per_s", "raw_reads_per_s_high"), section="efficiency",
           how="the database's physical reads/s / fio's fastest synchronous round"),
    Figure("efficiency_reads_high", "Database efficiency against fio's slowest round", "ratio", "rate",
           derive=_efficiency("reads_per_s", "raw_reads_per_s_low"), section="efficiency",
           how="the database's physical reads/s / fio's slowest synchronous round"),
    Figure("efficiency_latency", "Avg read, database / raw", "ratio", "rate",
           derive=_efficiency("avg_read_us", "raw_avg_read_us"), section="efficiency",
           how="the sessions' average read / fio's", phrase="each read took {:.2f}x fio's time", **LOWER),
    Figure("efficiency_cpu", "Host CPU per read, database / raw", "ratio", "rate",
           derive=_efficiency("host_cpu_us_per_read", "raw_host_cpu_us_per_read"), section="efficiency",
           how="host CPU per database read / per fio read", phrase="each read cost {:.1f}x fio's host CPU", **LOWER),
    Figure("efficiency_reader_cpu", "Readers' own CPU per read, sessions / fio", "ratio", "rate",
           derive=_efficiency("db_cpu_us_per_read", "raw_process_cpu_us_per_read"), section="efficiency",
           how="the sessions' CPU per read / fio's jobs' per read while they read: the work a read costs whoever "
           "reads, without what else ran on the host", phrase="the sessions' own CPU per read was {:.2f}x fio's",
           **LOWER),
    Figure("efficiency_ceiling", "Database reads/s / device ceiling", "ratio", "rate",
           derive=_efficiency("reads_per_s", "raw_ceiling_reads_per_s"), section="efficiency", **HIGHER),
    # -- the workload's shape (stats/access_profile.py): micro-transactions, read + write, DSS scans
    _fig("reads_per_statement", "shape.reads_per_statement", "Physical reads per statement", "reads", "rate",
         "the sessions' single-block reads / their range SELECTs and UPDATEs (scans apart)", short="Reads/stmt"),
    _fig("intended_reads_per_statement", "shape.intended_reads_per_statement", "Intended reads per statement",
         "reads", "rate", "rows each range statement touches (work_unit; update_work_unit for UPDATEs): one block "
         "each"),
    _fig("reads_per_statement_ratio", "shape.reads_per_statement_ratio", "Reads per statement, measured / intended",
         "ratio", "rate", "above 1: index or other pages were read too; below 1: the cache served rows"),
    _fig("data_writes_per_commit", "shape.data_writes_per_commit", "Data writes per commit", "writes", "rate",
         "data-file write requests of every process (the engine's writers) / the workload's commits"),
    _fig("wal_writes_per_commit", "shape.wal_writes_per_commit", "WAL writes per commit", "writes", "rate",
         "WAL write requests / the workload's commits: below 1 is group commit", short="WAL wr/commit"),
    _fig("wal_syncs_per_commit", "shape.wal_syncs_per_commit", "WAL syncs per commit", "syncs", "rate"),
    _fig("scan_reads_per_s", "shape.scan_reads_per_s", "Scan read requests/s", "requests/s", "rate",
         "the sessions' reads other than single-block reads through the cache, and their parallel query "
         "workers' reads (scan_workers): the scans'"),
    _fig("scan_mib_per_s", "shape.scan_mib_per_s", "Scan MiB/s", "MiB/s", "rate",
         "bytes the scans read, by the sessions and their parallel query workers",
         short="Scan MiB/s", **HIGHER),
    _fig("avg_scan_read_kib", "shape.avg_scan_read_kib", "Avg scan read size", "KiB", "rate",
         "the scans' bytes / their read requests"),
    _fig("scan_mib_per_scan", "shape.scan_mib_per_scan", "MiB read per scan", "MiB", "rate"),
    _fig("scan_worker_share_pct", "shape.scan_worker_share_pct", "Scan bytes read by parallel workers", "%", "pct",
         "the parallel query workers' bytes read / the scans' bytes (scan_workers)", compare=POINTS),
    _fig("scan_workers_planned_per_scan", "shape.scan_workers_planned_per_scan", "Parallel workers planned per scan",
         "workers", "rate", "parallel query workers the database's queries planned / the scans (PostgreSQL 18)"),
    _fig("scan_workers_launched_per_scan", "shape.scan_workers_launched_per_scan",
         "Parallel workers launched per scan", "workers", "rate",
         "parallel query workers started / the scans: fewer than planned when the server had no more to give"),
    _fig("raw_seq_read_mib_per_s", "baseline.seq_read_mib_per_s", "Raw sequential read MiB/s (fio)", "MiB/s",
         "rate", "fio's 1 MiB O_DIRECT sequential reads of the same files, deep queue: the device's bandwidth"),
    Figure("scan_bandwidth_share", "Scan MiB/s / device sequential MiB/s", "ratio", "rate",
           derive=_efficiency("scan_mib_per_s", "raw_seq_read_mib_per_s"), section="efficiency",
           how="the scans' MiB/s / fio's sequential MiB/s on the same files"),
    # -- client sessions that are not dbio's (PostgreSQL 18 on)
    _fig("other_read_share_pct", "other_sessions.read_share_pct", "Other sessions' share of reads", "%", "pct",
         compare=POINTS, **LOWER),
    _fig("other_write_share_pct", "other_sessions.write_share_pct", "Other sessions' share of writes", "%", "pct",
         compare=POINTS, **LOWER),
    # -- a hot standby's replication (read on the standby: received, replayed, the last replayed transaction's age)
    _fig("wal_received_mib_per_s", "replication.wal_received_mib_per_s", "WAL received", "MiB/s", "rate",
         "WAL the standby received from its primary per second", series="wal_received_mib_per_s",
         short="WAL recv MiB/s"),
    _fig("replay_lag_mib_max", "replication.replay_lag_mib_max", "Replay lag, WAL (largest)", "MiB", "rate",
         "WAL received and not yet replayed, the largest of any sample in the window", series="replay_lag_mib",
         short="Lag MiB", **LOWER),
    _fig("replay_lag_seconds_max", "replication.replay_lag_seconds_max", "Replay lag, time (largest)", "s", "rate",
         "age of the last transaction replayed while WAL waited to be replayed, the largest of any sample",
         series="replay_lag_seconds", short="Lag s", **LOWER),
    # -- a node of a multi-writer cluster (Galera): its write-sets, conflicts and flow control (stats/writesets.py)
    _fig("writesets_replicated_per_s", "writesets.replicated_per_s", "Write-sets replicated", "/s", "rate",
         "the node's own commits sent to the cluster per second", short="WS repl/s"),
    _fig("writesets_replicated_kib_per_s", "writesets.replicated_kib_per_s", "Write-sets replicated, bytes", "KiB/s",
         "rate", "bytes of the write-sets the node replicated per second", short="Repl KiB/s"),
    _fig("writesets_received_per_s", "writesets.received_per_s", "Write-sets received", "/s", "rate",
         "the other nodes' write-sets (and the cluster's messages) the node received per second", short="WS recv/s"),
    _fig("writesets_received_kib_per_s", "writesets.received_kib_per_s", "Write-sets received, bytes", "KiB/s", "rate",
         "bytes of the write-sets the node received per second", short="Recv KiB/s"),
    _fig("writesets_applied_per_s", "writesets.applied_per_s", "Write-sets applied", "/s", "rate",
         "replicated + received: every node applies every write-set of the cluster", short="Applied/s"),
    _fig("cert_failures_per_s", "writesets.cert_failures_per_s", "Certification failures", "/s", "rate",
         "the node's transactions rolled back because a write-set committed first elsewhere touched their rows",
         short="Cert fail/s", compare=DIFFERENCE, **LOWER),
    _fig("bf_aborts_per_s", "writesets.bf_aborts_per_s", "Brute-force aborts", "/s", "rate",
         "the node's transactions aborted by another node's write-set taking their locks", short="BF abort/s",
         compare=DIFFERENCE, **LOWER),
    _fig("replays_per_s", "writesets.replays_per_s", "Replays", "/s", "rate",
         "transactions the server ran again after a brute-force abort", short="Replay/s", compare=DIFFERENCE,
         **LOWER),
    _fig("conflict_retries_per_s", "writesets.retries_per_s", "UPDATEs retried after a conflict", "/s", "rate",
         "UPDATEs the sessions' loop ran again after a conflict rolled them back", short="Retry/s",
         compare=DIFFERENCE, **LOWER),
    _fig("flow_control_paused_s", "writesets.flow_control_paused_s", "Flow control paused", "s", "seconds",
         "time the node's commits waited for a node's receive queue to shrink (a cluster's: the mean of its nodes')",
         short="FC paused s",
         compare=DIFFERENCE, **LOWER),
    _fig("flow_control_paused_pct", "writesets.flow_control_paused_pct", "Flow control paused, share of the window",
         "%", "pct", "flow control's paused time / the window (a cluster's: the mean of its nodes')",
         short="FC paused %", compare=POINTS, **LOWER),
    _fig("recv_queue_end", "writesets.recv_queue_end", "Receive queue at the window's end", "write-sets", "count",
         "write-sets received and not yet applied", short="Recv q", compare=DIFFERENCE, **LOWER),
    _fig("cluster_size_end", "writesets.cluster_size_end", "Cluster size at the window's end", "nodes", "count",
         "the nodes of the primary component the node was in as the window closed", compare=DIFFERENCE),
    _fig("send_queue_end", "writesets.send_queue_end", "Send queue at the window's end", "write-sets", "count",
         "write-sets waiting to be sent", short="Send q", compare=DIFFERENCE, **LOWER),
)

BY_NAME = {f.name: f for f in FIGURES}
assert len(BY_NAME) == len(FIGURES), "two figures share a name"
