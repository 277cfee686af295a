"""What performance_schema's statement instruments cost the MySQL loop: alternate pairs of runs on
one managed instance with the statement/* instruments on (the server's default) and off.

Usage (from the repository, after the README's setup command; needs mariadb-server):

    .venv/bin/python bench/bench_mysql_pfs.py [--dir /var/tmp/dbio-bench-mysql-pfs] [--scale 1GiB] \
        [--sessions 1] [--pairs 3] [--seconds 15]

The instruments are switched at run time in performance_schema.setup_instruments (no restart);
the file I/O and wait instruments dbio's figures use stay on. Each pair runs "on" and "off" back
to back, in the other order every other pair; it prints the medians of the pairs' ratios
(off / on) of DB CPU per read and reads/s. Raw figures go to <dir>/bench-mysql-pfs.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

from dbio.stats import catalogue

from benchkit import DBIO, REPO, dbio, fresh_directory, now, result_of

FIGURES = ("reads_per_s", "db_cpu_us_per_read", "reads_per_host_cpu_second")


def instruments(socket: Path, enabled: bool) -> None:
    flag = "YES" if enabled else "NO"
    subprocess.run(["mariadb", f"--socket={socket}", "-uroot", "-e",
                    f"UPDATE performance_schema.setup_instruments SET ENABLED = '{flag}', TIMED = '{flag}' "
                    "WHERE NAME LIKE 'statement/%'"], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-mysql-pfs"))
    parser.add_argument("--scale", default="1GiB")
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=15)
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = ["--engine", "mysql", "--data-dir", str(data_dir), "--buffer-pool", "64MiB", "--scale", args.scale,
              "--scan-table-size", "0", "--work-unit", "8", "--update-pct", "0", "--results-dir", str(base / "results")]
    out: dict = {"date": now(), "scale": args.scale, "sessions": args.sessions, "seconds": args.seconds, "pairs": []}
    try:
        dbio("instance", "init", "--engine", "mysql", "--data-dir", str(data_dir), "--buffer-pool", "64MiB")
        out["setup"] = dbio("setup", *common).stdout.strip().splitlines()[-1]
        for pair in range(args.pairs):
            row: dict = {}
            for state in (("on", "off") if pair % 2 == 0 else ("off", "on")):
                instruments(data_dir / "socket" / "mysqld.sock", state == "on")
                doc = result_of(dbio("run", *common, "-t", str(args.sessions), "--run-time", f"{args.seconds}s",
                                     "--warmup", "3s", "--label", f"pfs-{state}-{pair}"))
                f = catalogue.figures_of(doc)
                row[state] = {name: catalogue.value(f, name) for name in FIGURES}
            out["pairs"].append(row)
            print(json.dumps(row), flush=True)
    finally:
        (base / "bench-mysql-pfs.json").write_text(json.dumps(out, indent=1))
        subprocess.run(DBIO + ["instance", "destroy", "--engine", "mysql", "--yes", "--data-dir", str(data_dir)],
                       capture_output=True, cwd=REPO)
    for name in FIGURES:
        ratios = [p["off"][name] / p["on"][name] for p in out["pairs"] if p["off"][name] and p["on"][name]]
        on = statistics.median(p["on"][name] for p in out["pairs"] if p["on"][name] is not None)
        off = statistics.median(p["off"][name] for p in out["pairs"] if p["off"][name] is not None)
        print(f"{name}: on {on:,.1f}, off {off:,.1f}, off/on (median of pairs) "
              f"{statistics.median(ratios) if ratios else float('nan'):.2f}")


if __name__ == "__main__":
    main()
