"""DSS scans with and without parallel query workers (scan_workers): scan MiB/s, read size, the
workers' share of the bytes, host CPU, from dbio's own runs.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_scan_workers.py [--dir /var/tmp/dbio-bench-scans] [--scan-table 512MiB]
                                                 [--workers 2] [--rounds 3] [--seconds 15]

It creates its own embedded instance (direct I/O, shared_buffers 128MB), loads a 512 MiB data set
(4x the cache; never read, as every statement is a scan) and a scan table of --scan-table, and,
--rounds times, runs one session at scan pct 100 with scan_workers 0 and with --workers, one right
after the other, in the other order every other round (a pair). It prints each run's figures, the
medians and the median of the pairs' ratios (workers / none), then a Markdown block for
bench/RESULTS.md; raw figures go to <dir>/bench-scan-workers.json. The instance is removed at the
end (--keep keeps it).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from dbio.stats import catalogue

from benchkit import dbio, destroy, fresh_directory, heading, now, result_of, standard_options

FIGURES = ("scan_mib_per_s", "avg_scan_read_kib", "scan_worker_share_pct", "scans_per_s", "host_busy_pct")


def one_run(common: list[str], workers: int, label: str) -> dict:
    proc = dbio("run", *common, "--scan-workers", str(workers), "--label", label)
    f = catalogue.figures_of(result_of(proc))
    return {"workers": workers, **{name: catalogue.value(f, name) for name in FIGURES}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-scans"))
    parser.add_argument("--scan-table", default="512MiB")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = [*standard_options(data_dir, base / "results", "512MiB"), "--scan-table-size", args.scan_table,
              "--scan-pct", "100", "--threads-per-schema", "1", "--run-time", f"{args.seconds}s", "--warmup", "3s"]
    out: dict = {"date": now(), "scan_table": args.scan_table, "seconds": args.seconds, "workers": args.workers,
                 "runs": []}
    try:
        dbio("setup", *common)
        for rnd in range(args.rounds):
            order = (0, args.workers) if rnd % 2 == 0 else (args.workers, 0)
            for workers in order:
                row = {"round": rnd, **one_run(common, workers, f"r{rnd}-w{workers}")}
                out["runs"].append(row)
                print(f"round {rnd} scan_workers {workers}: {row['scan_mib_per_s'] or float('nan'):,.1f} MiB/s, "
                      f"{row['avg_scan_read_kib'] or float('nan'):,.0f} KiB reads, "
                      f"workers' share {row['scan_worker_share_pct'] or 0:.0f}%", flush=True)
    finally:
        (base / "bench-scan-workers.json").write_text(json.dumps(out, indent=1))
        if not args.keep:
            destroy(data_dir)
    print()
    print(markdown(out))


def _median(rows: list[dict], key: str) -> float:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else float("nan")


def _ratios(out: dict, key: str) -> list[float]:
    ratios = []
    for rnd in sorted({r["round"] for r in out["runs"]}):
        pair = {r["workers"]: r for r in out["runs"] if r["round"] == rnd}
        none, some = pair.get(0), pair.get(out["workers"])
        if none and some and none.get(key) and some.get(key) is not None:
            ratios.append(some[key] / none[key])
    return ratios


def markdown(out: dict) -> str:
    lines = [heading(out["date"], f", scan table {out['scan_table']}, {out['seconds']} s runs, 1 session, "
                                  "scan pct 100"), "",
             "| scan_workers | scan MiB/s | avg scan read KiB | workers' share of bytes % | scans/s | host CPU % |",
             "|---:|---:|---:|---:|---:|---:|"]
    for workers in (0, out["workers"]):
        mine = [r for r in out["runs"] if r["workers"] == workers]
        lines.append(f"| {workers} | {_median(mine, 'scan_mib_per_s'):,.1f} | {_median(mine, 'avg_scan_read_kib'):,.0f}"
                     f" | {_median(mine, 'scan_worker_share_pct'):.0f} | {_median(mine, 'scans_per_s'):.2f} | "
                     f"{_median(mine, 'host_busy_pct'):.0f} |")
    ratios = _ratios(out, "scan_mib_per_s")
    if ratios:
        lines += ["", f"scan MiB/s with {out['workers']} workers / without, median of the rounds' pairs: "
                      f"x{statistics.median(ratios):.2f} (pairs {', '.join(f'{r:.2f}' for r in ratios)})"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
