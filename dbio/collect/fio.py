"""fio, the raw-I/O reference a baseline runs: finding it, its job options, running it, reading
its JSON output. Job options and parsing are pure; nothing here is ever downloaded."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

from dbio.collect import procfs
from dbio.errors import DbioError, Interrupted, UsageError

PACKAGE = "fio"  # Debian's (and most distributions') package that provides it
BLOCK_BYTES = 8192  # the engine's block: one data-file read (PostgreSQL's; Job.block gives another engine's)
SYNC_ENGINE = "psync"  # one synchronous pread at a time per job, as a database session reads
DEEP_ENGINE = "libaio"
DEEP_QUEUE = 32  # requests in flight per job of the ceiling run
SEQ_BLOCK = 1 << 20  # the sequential run's reads: large, as a scan's bandwidth is measured
SEQ_QUEUE = 8  # its requests in flight (one job): the device's sequential bandwidth, not one read's latency
EXTRA_SECONDS = 60  # what fio may take beyond its runtime (startup, laying out a scratch file) before dbio gives up
STOP_SECONDS = 2.0  # what fio may take to end its jobs when dbio stops it


def find() -> str:
    """fio's path; one line naming the package when it is not installed."""
    path = shutil.which("fio")
    if path is None:
        raise UsageError("fio is not installed: the raw-device baseline runs it",
                         f"install the {PACKAGE} package (apt-get install {PACKAGE}), or run without --baseline")
    return path


def version(path: str) -> str:
    done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    return done.stdout.strip() or done.stderr.strip()


@dataclass(frozen=True)
class Job:
    """One fio run: random 8 KiB reads with O_DIRECT over files (or one scratch file of size bytes)."""

    name: str
    files: tuple[str, ...]
    jobs: int
    seconds: int
    engine: str = SYNC_ENGINE
    iodepth: int = 1
    size: int | None = None  # a scratch file fio lays out first (then it is not read-only)
    rw: str = "randread"  # randwrite: the write side, on a scratch file only; read: sequential
    block: int = BLOCK_BYTES  # bytes per request: one read of the engine's (InnoDB's page: 16 KiB by default)

    @property
    def side(self) -> str:
        return "write" if "write" in self.rw else "read"

    def options(self) -> list[str]:
        """fio's exact command-line options, as recorded in the result."""
        out = [f"--name={self.name}", f"--filename={':'.join(_escaped(f) for f in self.files)}",
               f"--rw={self.rw}", f"--bs={self.block // 1024}k", "--direct=1", f"--ioengine={self.engine}",
               f"--iodepth={self.iodepth}", f"--numjobs={self.jobs}", "--time_based", f"--runtime={self.seconds}s",
               "--norandommap", "--randrepeat=0",
               f"--file_service_type={'sequential' if self.rw == 'read' else 'random'}", "--group_reporting",
               "--output-format=json"]
        if self.size is None:
            out.insert(2, "--readonly")  # the instance's own files: fio must never write them
        else:
            out.insert(2, f"--size={self.size}")
        return out


def sequential(name: str, files: tuple[str, ...], seconds: int, size: int | None = None) -> Job:
    """Large sequential reads with a queue: the bandwidth a DSS scan is judged against."""
    return Job(name, files, 1, seconds, engine=DEEP_ENGINE, iodepth=SEQ_QUEUE, size=size, rw="read",
               block=SEQ_BLOCK)


def mib_per_s(run: dict[str, Any]) -> float | None:
    """A sequential run's MiB/s (its reads/s are SEQ_BLOCK reads)."""
    reads = run.get("reads_per_s")
    return None if reads is None else reads * SEQ_BLOCK / (1 << 20)


def _escaped(path: str) -> str:
    return path.replace(":", "\\:")  # fio separates file names with ':'


class Stopped(Interrupted):
    """fio was stopped before its end because `stop` said so (a signal came)."""


def run(path: str, job: Job, stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Run one job: its figures, fio's own CPU while its jobs read (what a database's sessions are
    compared with), the host's busy CPU seconds over its run less fio's own starting and stopping
    (at a few tenths of a CPU second, a large share of a run of seconds), and its exact options.
    stop: asked while fio runs; once true, fio and its jobs are stopped and Stopped is raised."""
    options = job.options()
    host, started = procfs.HostBusy(), time.time()
    code, out, err, fio_cpu = run_counting_cpu([path, *options], job.seconds + EXTRA_SECONDS, job.name, stop)
    busy, ended = host.seconds(), time.time()
    if code != 0:
        first = (err.strip() or out.strip() or "no message").splitlines()[0]
        raise DbioError(f"fio ({job.name}) failed: {first}", "run the recorded options by hand to see why")
    side = job.side
    figures = parse(out, side)
    reading = figures["fio_cpu_pct"] / 100 * (figures.get("job_seconds") or figures["seconds"] * job.jobs)
    outside = max(0.0, fio_cpu - reading)
    busy = max(0.0, busy - outside)
    done_ios = figures[f"{side}s"]
    return {"name": job.name, "engine": job.engine, "iodepth": job.iodepth, "jobs": job.jobs,
            "options": options, "started_at": started, "ended_at": ended, "host_busy_seconds": busy,
            "process_cpu_seconds": reading, "fio_outside_cpu_seconds": outside,
            **figures, f"host_cpu_us_per_{side}": busy * 1e6 / done_ios if done_ios else None,
            f"process_cpu_us_per_{side}": reading * 1e6 / done_ios if done_ios else None}


def run_counting_cpu(argv: list[str], timeout: float, name: str,
                     stop: Callable[[], bool] | None = None) -> tuple[int, str, str, float]:
    """Run argv to its end: exit code, output, error output, and the CPU seconds it and the children it
    reaped used (fio forks a process per job and waits for each: wait4 counts them all). stop: as in run."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # in a process group of its own: fio and the job processes it forks are stopped together
        proc = subprocess.Popen(argv, stdout=out, stderr=err, start_new_session=True)
        deadline = time.monotonic() + timeout
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:  # reaped here: Popen must not signal or wait for that pid again
                    proc.returncode = os.waitstatus_to_exitcode(status)
                    break
                if time.monotonic() > deadline:
                    raise DbioError(f"fio ({name}) did not finish within {timeout:.0f} s",
                                    "check the storage under test (it may be stalled)")
                if stop is not None and stop():
                    raise Stopped(f"fio ({name}) stopped before its end")
                time.sleep(0.05)
        except BaseException:  # a timeout, a stop, or Ctrl-C: neither fio nor its jobs may outlive dbio's command
            if proc.returncode is None:
                _stop_group(proc)
            raise
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                usage.ru_utime + usage.ru_stime)


def _stop_group(proc: subprocess.Popen) -> None:
    """Stop fio and every job it forked: SIGTERM (fio ends its jobs), then SIGKILL for what is left. The group's
    id stays taken while any member lives, so the second signal cannot reach another process."""
    for sig, wait in ((signal.SIGTERM, STOP_SECONDS), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass  # the whole group has ended
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass


def parse(output: str, side: str = "read") -> dict[str, Any]:
    """The read (or write) figures of fio's JSON output (one group, --group_reporting), pure."""
    start = output.find("{")  # fio may print notes before its JSON
    try:
        doc = json.loads(output[start:]) if start >= 0 else {}
        read = doc["jobs"][0][side]
    except (ValueError, KeyError, IndexError, TypeError):
        raise DbioError("fio's output was not the JSON dbio asked for", "run the recorded options by hand") from None
    seconds = (read.get("runtime") or 0) / 1000.0
    percentiles = (read.get("clat_ns") or {}).get("percentile") or {}
    p99 = percentiles.get("99.000000")
    job = doc["jobs"][0]
    return {f"{side}s": int(read.get("total_ios") or 0), "seconds": seconds,
            f"{side}s_per_s": float(read.get("iops") or 0.0),
            f"avg_{side}_us": (read.get("lat_ns") or {}).get("mean", 0.0) / 1000.0,
            f"p99_{side}_us": p99 / 1000.0 if p99 is not None else None,
            # each job's CPU while it read, as a share of its run (group_reporting averages the jobs')
            "fio_cpu_pct": (job.get("usr_cpu") or 0.0) + (job.get("sys_cpu") or 0.0),
            "job_seconds": job["job_runtime"] / 1000.0 if job.get("job_runtime") else None}  # the jobs' runs summed
