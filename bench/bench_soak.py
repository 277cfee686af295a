"""The soak benchmark: a 30-minute sustained run, 64 sessions, update pct 20, client memory over time.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_soak.py [--dir /var/tmp/dbio-bench-soak] [--duration 30m] [--sessions 64]

It creates its own embedded instance (direct I/O, shared_buffers 128MB), loads the data, runs
`dbio run --duration 30m --interval 10s -t 64 --update-pct 20`, and reads the client's resident
memory from every interval of samples.jsonl: it must stay flat within 10% once the run is
measuring. Prints a Markdown block for bench/RESULTS.md and keeps the run's report in
bench/results/; removes the instance (--keep keeps it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

from benchkit import DBIO, REPO, RESULTS, destroy, fresh_directory, heading, now

from dbio.report import model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-soak"))
    parser.add_argument("--scale", default="2GiB")
    parser.add_argument("--duration", default="30m")
    parser.add_argument("--interval", default="10s")
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    common = ["--data-dir", str(base / "instance"), "--shared-buffers", "128MiB", "--scale", args.scale,
              "--scan-table-size", "0", "--results-dir", str(base / "results")]
    try:
        subprocess.run(DBIO + ["setup", *common], cwd=REPO, check=True, capture_output=True)
        proc = subprocess.run(DBIO + ["run", *common, "-t", str(args.sessions), "--update-pct", "20",
                                      "--duration", args.duration, "--interval", args.interval, "--warmup", "30s",
                                      "--label", "soak"], cwd=REPO, text=True, capture_output=True)
        print(proc.stdout, proc.stderr, sep="\n")
        if proc.returncode != 0:
            raise SystemExit(f"dbio run failed ({proc.returncode})")
        directory = Path(next(ln for ln in proc.stdout.splitlines() if ln.startswith("result: ")).split(": ",
                                                                                                        1)[1]).parent
        samples = [json.loads(line) for line in (directory / "samples.jsonl").read_text().splitlines() if line.strip()]
        measured = [s for s in samples if s.get("phase") == "measured" and (s.get("os") or {}).get("client_rss")]
        rss = [s["os"]["client_rss"] for s in measured]
        first, low, high, last = rss[0], min(rss), max(rss), rss[-1]
        doc = json.loads((directory / "result.json").read_text())
        stability = next(t for s in model.build(doc)["sections"]
                         if s["id"] == "stability" for t in s["tables"])
        date = now()
        stamp = date[:10]
        RESULTS.mkdir(exist_ok=True)
        shutil.copy(directory / "report.txt", RESULTS / f"{stamp}-soak-report.txt")
        (RESULTS / f"{stamp}-soak-memory.json").write_text(json.dumps(
            {"since_start": [s["engine"]["t"] - samples[0]["t"] for s in measured], "client_rss": rss}) + "\n")
        f = doc["figures"]
        print(f"\n{heading(date)}\n")
        print(f"- {args.sessions} sessions, update pct 20, {args.duration} measured in {len(measured)} intervals of "
              f"{args.interval}: {f['load_profile']['physical_reads_per_s']:,.0f} reads/s, "
              f"{f['load_profile']['physical_writes_per_s']:,.0f} writes/s, "
              f"{f['latency']['avg_read_us']:,.0f} us average read, status {doc['status']}")
        print(f"- client memory (RSS) while measuring: first {first / 2**20:.1f} MiB, min {low / 2**20:.1f}, "
              f"max {high / 2**20:.1f}, last {last / 2**20:.1f} MiB: {100 * (high - low) / low:.1f}% spread "
              f"(limit 10%)")
        print("- stability (per interval):")
        for row in stability["rows"]:
            cells = [row[0]] + [c.get("value") if isinstance(c, dict) else c for c in row[1:]]
            print(f"  - {cells[0]}: mean {cells[1]:,.1f}, CV {cells[2]:.1f}%, worst {cells[3]:,.1f} at "
                  f"{cells[4]:.0f} s, p99/p1 {cells[5]:,.1f}, drift {cells[6] if cells[6] is not None else 0:+.1f}%")
        print(f"- report: bench/results/{stamp}-soak-report.txt")
    finally:
        if not args.keep:
            destroy(base / "instance", base)


if __name__ == "__main__":
    main()
