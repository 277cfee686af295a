"""A primary and its hot standby on this machine: the start skew across the two nodes, and the same
total sessions on both nodes against on the primary alone.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_nodes.py [--sessions 8] [--rounds 3] [--seconds 10] [--scale 1GiB]

One embedded instance with WAL for replication (shared_buffers 128MB, direct I/O) is loaded with
one schema of --scale; a pg_basebackup of it (the bundled binary) is started as a streaming hot
standby with its own socket and port. Every round runs, back to back in alternating order, the
sessions on both nodes (dealt in turn) and the same sessions on the primary alone, update pct 0.
It prints a Markdown block for bench/RESULTS.md (medians over the rounds) and writes the raw
figures to <dir>/bench-nodes.json. Both servers and --dir are removed at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from benchkit import REPO, fresh_directory, heading, now

sys.path.insert(0, str(REPO))
from tests.integration import standby as replica  # noqa: E402  (the tests' standby, made the same way)
from tests.integration.conftest import dbio, load_result, result_dir  # noqa: E402


def run(dsns: list[str], results: Path, sessions: int, seconds: int, label: str) -> dict:
    args = ["run", *[a for dsn in dsns for a in ("--dsn", dsn)], "--results-dir", str(results), "--warmup", "2s",
            "--run-time", f"{seconds}s", "-t", str(sessions), "--update-pct", "0", "--label", label]
    done = dbio(*args, timeout=600)
    if done.code != 0:
        raise SystemExit(f"dbio {' '.join(args)} failed ({done.code}):\n{done.text}")
    doc = load_result(result_dir(done))
    figures = doc["figures"]
    return {"reads_per_s": figures["load_profile"]["physical_reads_per_s"],
            "avg_read_us": figures["latency"]["avg_read_us"],
            "reads_per_host_cpu_second": figures["cpu"]["reads_per_host_cpu_second"],
            "start_skew_s": (doc.get("cluster") or {}).get("start_skew_seconds"),
            "nodes": {n["name"]: {"reads_per_s": (n.get("figures") or {}).get("load_profile", {}).get(
                "physical_reads_per_s"), "start": n.get("start")} for n in doc["nodes"]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--scale", default="1GiB")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-nodes"))
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    primary, standby = None, None
    try:
        primary = replica.make_primary(base, scale=args.scale, shared_buffers="128MiB")
        standby = replica.make_standby(primary, base / "standby")
        both = [primary.conninfo(replica.DATABASE), standby.conninfo()]
        rounds = []
        for i in range(args.rounds):
            order = ("both", "primary") if i % 2 == 0 else ("primary", "both")
            rounds.append({which: run(both if which == "both" else both[:1], base / "results", args.sessions,
                                      args.seconds, f"{which}-{i}") for which in order})
    finally:
        if primary is not None:
            replica.destroy(primary, standby)
    report(rounds, args)
    (args.dir / "bench-nodes.json").write_text(json.dumps(rounds, indent=1))
    print(f"raw figures: {args.dir / 'bench-nodes.json'} (remove {args.dir} when done)")


def report(rounds: list[dict], args: argparse.Namespace) -> None:
    med = lambda xs: statistics.median([x for x in xs if x is not None]) if any(x is not None for x in xs) else None  # noqa: E731
    skews = [r["both"]["start_skew_s"] for r in rounds]
    ratio = med([r["both"]["reads_per_s"] / r["primary"]["reads_per_s"] for r in rounds])
    print(heading(now(), f", {args.scale}, {args.sessions} sessions, {args.rounds} rounds of {args.seconds} s"))
    print()
    print("| | primary + standby | primary alone |")
    print("|---|---:|---:|")
    for key, label in (("reads_per_s", "reads/s"), ("avg_read_us", "avg read (us)"),
                       ("reads_per_host_cpu_second", "reads per host-CPU-second")):
        print(f"| {label} | {med([r['both'][key] for r in rounds]):,.0f} | "
              f"{med([r['primary'][key] for r in rounds]):,.0f} |")
    print(f"| median ratio both/alone (reads/s, per pair) | {ratio:.2f} | |")
    print(f"| start skew across the nodes, median (max; recorded to 0.1 ms) | {1000 * med(skews):.1f} ms "
          f"({1000 * max(skews):.1f} ms) | - |")


if __name__ == "__main__":
    main()
