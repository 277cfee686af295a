"""Two dbio checkouts' MySQL work loops on one managed instance, in alternate pairs: CPU per read.

Usage (from the repository, after the README's setup command; needs fio and mariadb-server):

    .venv/bin/python bench/bench_mysql_ab.py --other /path/to/other/checkout [--dir /var/tmp/dbio-bench-mysql-ab] \
        [--scale 1GiB] [--buffer-pool 64MiB] [--sessions 1,2,4] [--rounds 2] [--seconds 15]

This checkout makes the instance (dbio instance init --engine mysql) and loads it once; then per
round and session count both checkouts run `dbio run --baseline` back to back (each installs its
own loop procedure; fio reads the same files before each run), this checkout first in even rounds
and second in odd ones. It prints each side's medians and the medians of the pairs' ratios
(this / other); raw figures go to <dir>/bench-mysql-ab.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from dbio.stats import catalogue

from benchkit import REPO, fresh_directory, now

FIGURES = ("reads_per_s", "raw_reads_per_s", "efficiency_reads", "efficiency_cpu", "reads_per_host_cpu_second",
           "db_cpu_us_per_read", "avg_read_us", "blocks_read_per_row", "device_to_db_read_ratio")


def dbio_of(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    """dbio from a checkout: its own venv's python, run from its directory (so `-m dbio` is its dbio)."""
    proc = subprocess.run([str(checkout / ".venv" / "bin" / "python"), "-m", "dbio", *args], text=True,
                          capture_output=True, cwd=checkout)
    if proc.returncode != 0:
        raise SystemExit(f"dbio {' '.join(args)} ({checkout}) failed ({proc.returncode}):\n"
                         f"{proc.stdout}\n{proc.stderr}")
    return proc


def one_run(checkout: Path, common: list[str], sessions: int, seconds: int, label: str) -> dict:
    proc = dbio_of(checkout, "run", *common, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", "3s",
                   "--label", label, "--baseline")
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("result: "))
    f = catalogue.figures_of(json.loads(Path(line.split(": ", 1)[1]).read_text()))
    return {name: catalogue.value(f, name) for name in FIGURES}


def ratio_medians(rows: list[dict], sessions: int) -> dict:
    """Per figure, the median over rounds of this / other within each pair (pure)."""
    out = {}
    for name in FIGURES:
        pairs = [(r["this"][name], r["other"][name]) for r in rows if r["sessions"] == sessions]
        ratios = [a / b for a, b in pairs if a is not None and b]
        out[name] = statistics.median(ratios) if ratios else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--other", type=Path, required=True, help="the other checkout (with its own .venv)")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-mysql-ab"))
    parser.add_argument("--scale", default="1GiB")
    parser.add_argument("--buffer-pool", default="64MiB")
    parser.add_argument("--sessions", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=15)
    args = parser.parse_args()
    if not (args.other / ".venv" / "bin" / "python").exists():
        raise SystemExit(f"{args.other} has no .venv/bin/python: make its venv first (README's setup command)")
    base = fresh_directory(args.dir)
    where = ["--data-dir", str(base / "instance"), "--buffer-pool", args.buffer_pool]
    common = ["--engine", "mysql", *where, "--scale", args.scale, "--scan-table-size", "0", "--work-unit", "8",
              "--update-pct", "0", "--results-dir", str(base / "results")]
    out: dict = {"date": now(), "other": str(args.other), "scale": args.scale, "seconds": args.seconds, "rows": []}
    try:
        dbio_of(REPO, "instance", "init", "--engine", "mysql", *where)
        out["setup"] = dbio_of(REPO, "setup", *common).stdout.strip().splitlines()[-1]
        print(out["setup"], flush=True)
        for rnd in range(args.rounds):
            for sessions in [int(s) for s in args.sessions.split(",")]:
                row: dict = {"round": rnd, "sessions": sessions}
                order = [("this", REPO), ("other", args.other)]
                for side, checkout in order if rnd % 2 == 0 else order[::-1]:
                    row[side] = one_run(checkout, common, sessions, args.seconds, f"ab-{side}-r{rnd}-s{sessions}")
                out["rows"].append(row)
                print(json.dumps(row), flush=True)
    finally:
        (base / "bench-mysql-ab.json").write_text(json.dumps(out, indent=1))
        subprocess.run([sys.executable, "-m", "dbio", "instance", "destroy", "--engine", "mysql", "--yes",
                        "--data-dir", str(base / "instance")], capture_output=True, cwd=REPO)
    print_summary(out)


def print_summary(out: dict) -> None:
    rows = out["rows"]
    print("| sessions | side | reads/s | fio reads/s | dbio / fio | DB CPU us per read | reads per host-CPU-s |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for sessions in sorted({r["sessions"] for r in rows}):
        for side in ("other", "this"):
            def med(name: str) -> float:
                values = [r[side][name] for r in rows if r["sessions"] == sessions and r[side].get(name) is not None]
                return statistics.median(values) if values else float("nan")
            print(f"| {sessions} | {side} | {med('reads_per_s'):,.0f} | {med('raw_reads_per_s'):,.0f} | "
                  f"{med('efficiency_reads'):.2f} | {med('db_cpu_us_per_read'):.1f} | "
                  f"{med('reads_per_host_cpu_second'):,.0f} |")
        r = ratio_medians(rows, sessions)
        print(f"| {sessions} | this/other (median of pairs) | {r['reads_per_s'] or float('nan'):.2f} | | "
              f"{r['efficiency_reads'] or float('nan'):.2f} | {r['db_cpu_us_per_read'] or float('nan'):.2f} | "
              f"{r['reads_per_host_cpu_second'] or float('nan'):.2f} |")


if __name__ == "__main__":
    main()
