"""Where each physical read's CPU goes: a perf profile of the whole host while dbio runs.

Usage (from the repository, after the README's setup command; needs perf, Debian's linux-perf):

    .venv/bin/python bench/bench_cpu.py [--sessions 1,4,8] [--seconds 10] [--scale 2GiB]

It creates its own embedded instance (direct I/O, shared_buffers 128MB, index plan, work unit 8,
update pct 0), loads the data set, and at each session count runs dbio and, inside the measured
window, `perf record -e cpu-clock -a` for --seconds: every CPU sample of the host, attributed to
the process (postgres, python for dbio's client, the rest) and the code it was in (the kernel,
the postgres binary, PL/pgSQL, libc...). CPU per physical read is samples x the sampling period
/ the reads the engine counted in the same seconds (its reads/s over the window x the profiled
seconds). It prints a Markdown block for bench/RESULTS.md and removes its instance at the end.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import threading
import time
from collections import defaultdict
from pathlib import Path

from benchkit import DBIO, REPO, dbio, destroy, fresh_directory, heading, now, result_of, standard_options

FREQUENCY = 4000  # perf's cpu-clock samples per second and CPU: one sample is 250 us of CPU
IDLE = "idle"
GROUPS = (  # (process, code) -> what it is; the first match wins
    ("swapper", "", IDLE),
    ("postgres", "[kernel.kallsyms]", "backends and I/O workers: kernel (read syscalls, scheduling)"),
    ("postgres", "plpgsql.so", "backends: the PL/pgSQL work loop"),
    ("postgres", "postgres", "backends: PostgreSQL (executor, buffer manager, index scan)"),
    ("postgres", "", "backends: libc and other libraries"),
    ("python", "", "dbio's client (slices, sampling)"),
    ("", "[kernel.kallsyms]", "other processes: kernel"),
    ("", "", "other processes"),
)


def profile(seconds: float, output: Path) -> None:
    subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", str(FREQUENCY), "-a", "-o", str(output), "--",
                    "sleep", str(seconds)], check=True, capture_output=True)


def breakdown(data: Path) -> dict[str, int]:
    """Samples per group, from perf's per-(process, object) table."""
    report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "comm,dso",
                             "-F", "sample,comm,dso"], check=True, capture_output=True, text=True).stdout
    out: dict[str, int] = defaultdict(int)
    for line in report.splitlines():
        m = re.match(r"\s*(\d+)\s+(\S+)\s+(\S+)", line)
        if not m or line.lstrip().startswith("#"):
            continue
        samples, comm, dso = int(m.group(1)), m.group(2), m.group(3)
        comm = "postgres" if comm.startswith("postgres") else "python" if comm.startswith("python") else comm
        for process, code, group in GROUPS:
            if (not process or comm == process) and (not code or dso == code):
                out[group] += samples
                break
    return dict(out)


def one(common: list[str], sessions: int, seconds: float, base: Path) -> dict:
    data = base / f"perf-{sessions}.data"
    warmup = 3.0
    run_time = seconds + 6.0  # the profile sits inside the window, clear of its first and last seconds
    started = time.monotonic()
    holder: dict = {}

    def run() -> None:
        holder["proc"] = subprocess.run(DBIO + ["run", *common, "-t", str(sessions), "--run-time", f"{run_time:g}s",
                                                "--warmup", f"{warmup:g}s", "--label", f"cpu-{sessions}"],
                                        text=True, capture_output=True, cwd=REPO)

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(max(0.0, warmup + 6.0 - (time.monotonic() - started)))  # connect, warm up, 3 s into the window
    profile(seconds, data)
    worker.join()
    if holder["proc"].returncode != 0:
        raise SystemExit(holder["proc"].stdout + holder["proc"].stderr)
    doc = result_of(holder["proc"])
    reads_per_s = doc["figures"]["load_profile"]["physical_reads_per_s"]
    groups = breakdown(data)
    reads = reads_per_s * seconds
    return {"sessions": sessions, "reads_per_s": reads_per_s, "samples": groups,
            "us_per_read": {g: n * 1e6 / FREQUENCY / reads for g, n in groups.items()},
            "total_us_per_read": sum(n for g, n in groups.items() if g != IDLE) * 1e6 / FREQUENCY / reads}


def markdown(out: dict) -> str:
    groups = [g for _, _, g in GROUPS]
    lines = [heading(out["date"], f", {out['scale']}, perf cpu-clock at {FREQUENCY} Hz for {out['seconds']} s"), "",
             "| CPU us per physical read | " + " | ".join(f"{r['sessions']} session(s)" for r in out["rows"]) + " |",
             "|---|" + "---:|" * len(out["rows"])]
    lines.append("| reads/s | " + " | ".join(f"{r['reads_per_s']:,.0f}" for r in out["rows"]) + " |")
    for g in groups:
        if g == IDLE:
            continue
        lines.append(f"| {g} | " + " | ".join(f"{r['us_per_read'].get(g, 0):.1f}" for r in out["rows"]) + " |")
    lines.append("| **all busy CPU** | "
                 + " | ".join(f"**{r['total_us_per_read']:.1f}**" for r in out["rows"]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-cpu"))
    parser.add_argument("--scale", default="2GiB")
    parser.add_argument("--sessions", default="1,4,8")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = standard_options(data_dir, base / "results", args.scale)
    out: dict = {"date": now(), "scale": args.scale, "seconds": args.seconds, "rows": []}
    try:
        dbio("setup", *common)
        for sessions in [int(s) for s in args.sessions.split(",")]:
            row = one(common, sessions, args.seconds, base)
            out["rows"].append(row)
            print(f"{sessions} session(s): {row['reads_per_s']:,.0f} reads/s, {row['total_us_per_read']:.1f} us of "
                  f"sampled CPU per read", flush=True)
        print(markdown(out))
    finally:
        destroy(data_dir, base)


if __name__ == "__main__":
    main()
