"""An embedded primary with 2 standbys against the primary alone, and how the standbys get the load.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_cluster.py [--dir /var/tmp/dbio-bench-cluster] [--scale 512MiB]
        [--sessions 6] [--seconds 10] [--rounds 3] [--parts load,run]

load: for each round, a fresh instance with 2 standbys is set up twice over, alternating: once as
dbio does by default (the primary loads with wal_level = minimal, then each standby is copied
from it by pg_basebackup: "copy") and once with --wal-level replica (the standbys stream the load:
"stream"). Each setup is timed from its start until every standby holds the setup, with the host's
CPU seconds (/proc/stat) and the bytes written to the block devices (/proc/diskstats) meanwhile.

run: one instance with 2 standbys, loaded once; then, alternating, a run over all three members
and a run on the primary alone (--nodes primary), each with the same total sessions and update
pct 0. Per run: reads/s, reads per host-CPU-second (the result's own figures) and the start skew
across nodes when the result records one.

Prints medians and a Markdown block for bench/RESULTS.md; raw figures go to bench/results/<date>-cluster.json.
Everything it made is removed at the end (--keep keeps it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from dbio.collect import procfs
from dbio.stats import catalogue  # the figures as the result declares them

from benchkit import DBIO, REPO, RESULTS, dbio, destroy, fresh_directory, heading, now, result_of

SHARED = ["--shared-buffers", "128MiB"]
STRATEGIES = {"copy": [], "stream": ["--wal-level", "replica"]}


def disk_written_bytes() -> int:
    """Bytes written to the whole block devices (partitions and device-mapper targets left out)."""
    disks = {p.name for p in Path("/sys/block").iterdir() if not p.name.startswith(("loop", "ram", "dm-"))}
    total = 0
    for line in Path("/proc/diskstats").read_text().splitlines():
        parts = line.split()
        if parts[2] in disks:
            total += int(parts[9]) * 512
    return total


def timed_setup(base: Path, name: str, scale: str, extra: list[str]) -> dict[str, Any]:
    data_dir = base / name
    place = ["--data-dir", str(data_dir), *SHARED]
    dbio("instance", "init", *place, "--standbys", "2", *extra)
    cpu, written, started = procfs.HostBusy(), disk_written_bytes(), time.monotonic()
    proc = dbio("setup", *place, "--scale", scale, "--scan-table-size", "0", *extra)
    row = {"seconds": time.monotonic() - started, "host_cpu_seconds": cpu.seconds(),
           "written_bytes": disk_written_bytes() - written}
    assert proc.stdout.count("holds setup") == 2, proc.stdout  # both standbys hold the load
    destroy(data_dir)
    return row


def load_part(base: Path, scale: str, rounds: int) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in STRATEGIES}
    for rnd in range(rounds):
        order = list(STRATEGIES) if rnd % 2 == 0 else list(reversed(STRATEGIES))  # alternate pairs
        for name in order:
            row = timed_setup(base, f"load-{name}-{rnd}", scale, STRATEGIES[name])
            out[name].append(row)
            print(f"load {name} round {rnd + 1}: {row['seconds']:.1f} s, host CPU {row['host_cpu_seconds']:.1f} s, "
                  f"written {row['written_bytes'] / 2**20:.0f} MiB", flush=True)
    return out


def start_skew(doc: dict[str, Any]) -> float | None:
    """The start skew across nodes the result records: its own spread (latest node start minus the
    earliest) when it gives one, else the spread of the nodes' starts; None when it records none."""
    found: dict[str, list[float]] = {}

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif "skew" in key and isinstance(value, (int, float)) and not isinstance(value, bool):
            found.setdefault(key, []).append(float(value))

    walk({k: v for k, v in doc.items() if k not in ("snapshots", "series", "samples")})
    if found.get("start_skew_seconds"):
        return max(found["start_skew_seconds"])
    starts = found.get("start_skew_s") or []
    return max(starts) - min(starts) if len(starts) > 1 else None


def one_run(common: list[str], sessions: int, seconds: int, label: str, nodes: list[str]) -> dict[str, Any]:
    args = ["run", *common, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", "3s", "--label", label,
            *nodes]
    proc = subprocess.run(DBIO + args, text=True, capture_output=True, cwd=REPO)
    if proc.returncode != 0:
        return {"failed": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
    doc = result_of(proc)
    f = catalogue.figures_of(doc)
    return {"reads_per_s": catalogue.value(f, "reads_per_s"),
            "reads_per_host_cpu_second": catalogue.value(f, "reads_per_host_cpu_second"),
            "nodes": [n["name"] for n in doc["nodes"]], "start_skew_s": start_skew(doc)}


def run_part(base: Path, scale: str, sessions: int, seconds: int, rounds: int) -> dict[str, list[dict[str, Any]]]:
    data_dir = base / "cluster"
    dbio("instance", "init", "--data-dir", str(data_dir), *SHARED, "--standbys", "2")
    common = ["--data-dir", str(data_dir), *SHARED, "--scale", scale, "--scan-table-size", "0", "--work-unit", "8",
              "--update-pct", "0", "--results-dir", str(base / "results")]
    dbio("setup", *common)
    kinds = {"cluster": [], "primary alone": ["--nodes", "primary"]}
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in kinds}
    for rnd in range(rounds):
        order = list(kinds) if rnd % 2 == 0 else list(reversed(kinds))
        for name in order:
            row = one_run(common, sessions, seconds, f"{name.replace(' ', '-')}-{rnd}", kinds[name])
            out[name].append(row)
            print(f"run {name} round {rnd + 1}: {row}", flush=True)
    destroy(data_dir)
    return out


def median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else None


def markdown(out: dict[str, Any]) -> str:
    lines = [heading(out["date"], f", {out['scale']}, 2 standbys, shared machine"), ""]
    if "load" in out:
        lines += ["| standbys get the load by | setup wall time (s) | host CPU (s) | written to disk (MiB) |",
                  "|---|---:|---:|---:|"]
        for name, rows in out["load"].items():
            written = median(rows, "written_bytes")
            lines.append(f"| {name} | {median(rows, 'seconds'):.1f} | {median(rows, 'host_cpu_seconds'):.1f} | "
                         f"{written / 2**20:.0f} |")
        lines.append("")
    if "run" in out:
        lines += [f"| {out['sessions']} sessions, {out['seconds']} s | reads/s | reads per host-CPU-second | "
                  "start skew across nodes |", "|---|---:|---:|---:|"]
        for name, rows in out["run"].items():
            failed = [r["failed"] for r in rows if "failed" in r]
            if failed:
                lines.append(f"| {name} | failed: {failed[0]} | | |")
                continue
            skew = median(rows, "start_skew_s")
            lines.append(f"| {name} | {median(rows, 'reads_per_s'):,.0f} | "
                         f"{median(rows, 'reads_per_host_cpu_second'):,.0f} | "
                         f"{'-' if skew is None else f'{skew * 1000:.1f} ms'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-cluster"))
    parser.add_argument("--scale", default="512MiB")
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parts", default="load,run")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    out: dict[str, Any] = {"date": now(), "scale": args.scale, "sessions": args.sessions, "seconds": args.seconds}
    try:
        if "load" in args.parts:
            out["load"] = load_part(base, args.scale, args.rounds)
        if "run" in args.parts:
            out["run"] = run_part(base, args.scale, args.sessions, args.seconds, args.rounds)
    finally:
        raw = RESULTS / f"{out['date'][:10]}-cluster.json"
        raw.write_text(json.dumps(out, indent=1) + "\n")
        if not args.keep:
            for child in list(base.iterdir()):
                if (child / "dbio-instance.json").exists():
                    destroy(child)
            destroy(base / "nothing", base)
    print(markdown(out))
    print(f"raw figures: {raw.relative_to(REPO)}")


if __name__ == "__main__":
    main()
