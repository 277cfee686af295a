"""Load rate of the mysql engine's managed instance (MariaDB/MySQL from the machine's packages).

Usage (from the repository, after the README's setup command, with mariadb-server installed):

    .venv/bin/python bench/bench_mysql_load.py [--dir /var/tmp/dbio-bench-mysql] [--scale 1GiB] [--rounds 3]

It creates two managed instances, one with 16 KiB pages and one with 8 KiB pages (one row a page
in both: each row is loaded with a partner row deleted after the load), both with O_DIRECT and a
128 MiB buffer pool, and loads the same data set into each in turn, round after round (teardown,
then setup), so that both page sizes are measured in the same time window. The rate is the setup
record's: loaded bytes (rows x 8 KiB, whatever the page size) over the load's seconds, from an empty
database to loaded, indexed and analysed tables; the command's wall time is given too. It prints
a Markdown block for bench/RESULTS.md and writes the raw figures to <dir>/bench-mysql-load.json.
The instances are removed at the end (--keep keeps them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchkit import dbio, fresh_directory, heading, now

PAGES = ("16k", "8k")


def common(data_dir: Path, scale: str) -> list[str]:
    return ["--engine", "mysql", "--data-dir", str(data_dir), "--buffer-pool", "128MiB", "--scale", scale,
            "--scan-table-size", "0"]


def setup_record(data_dir: Path) -> dict:
    """The setup record the load wrote, read from the instance (as root: MariaDB's unix_socket auth)."""
    import pymysql

    conn = pymysql.connect(unix_socket=str(data_dir / "socket" / "mysqld.sock"), user="root", database="dbio")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT seconds, loaded_bytes, streams, steps, server_version FROM dbio_setup")
            seconds, loaded, streams, steps, version = cur.fetchone()
            cur.execute("SELECT DISTINCT rows_per_page FROM dbio_setup_tables")
            per_page = sorted(row[0] for row in cur.fetchall())
    finally:
        conn.close()
    return {"seconds": seconds, "loaded_bytes": loaded, "streams": streams, "steps": json.loads(steps or "{}"),
            "server_version": version, "mib_per_s": loaded / 2**20 / seconds, "rows_per_page": per_page}


def one_load(data_dir: Path, scale: str) -> dict:
    dbio("teardown", "--engine", "mysql", "--data-dir", str(data_dir))
    began = time.monotonic()
    dbio("setup", *common(data_dir, scale))
    wall = time.monotonic() - began
    record = setup_record(data_dir)
    return {**record, "wall_seconds": wall, "wall_mib_per_s": record["loaded_bytes"] / 2**20 / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-mysql"))
    parser.add_argument("--scale", default="1GiB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--markdown", type=Path, help="only print the block for a bench-mysql-load.json written before")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text())))
        return
    base = fresh_directory(args.dir)
    dirs = {page: base / f"instance-{page}" for page in PAGES}
    runs: dict[str, list[dict]] = {page: [] for page in PAGES}
    started = now()
    try:
        for page, data_dir in dirs.items():
            dbio("instance", "init", "--engine", "mysql", "--data-dir", str(data_dir), "--innodb-page-size", page,
                 "--buffer-pool", "128MiB")
        for round_no in range(args.rounds):
            order = PAGES if round_no % 2 == 0 else PAGES[::-1]  # alternate which page size goes first
            for page in order:
                runs[page].append(one_load(dirs[page], args.scale))
                print(f"round {round_no + 1} {page}: {runs[page][-1]['mib_per_s']:.1f} MiB/s", flush=True)
    finally:
        if not args.keep:
            for data_dir in dirs.values():
                dbio("instance", "destroy", "--yes", "--engine", "mysql", "--data-dir", str(data_dir))
    out = {"started": started, "scale": args.scale, "rounds": args.rounds, "runs": runs}
    (base / "bench-mysql-load.json").write_text(json.dumps(out, indent=2) + "\n")
    print(markdown(out))


def rows_per_page(runs: list[dict]) -> str:
    """As the loads recorded it (runs written before it was kept: '?')."""
    seen = sorted({n for r in runs for n in r.get("rows_per_page", [])})
    return "/".join(map(str, seen)) or "?"


def markdown(out: dict) -> str:
    runs = out["runs"]
    version = runs[PAGES[0]][0]["server_version"]
    streams = sorted({r["streams"] for page in PAGES for r in runs[page]})
    lines = [heading(out["started"], f", {version}"), "",
             f"`.venv/bin/python bench/bench_mysql_load.py --scale {out['scale']} --rounds {out['rounds']}`; "
             f"buffer pool 128 MiB, O_DIRECT, one schema and no scan table ({'/'.join(map(str, streams))} load "
             "stream). Medians of the rounds (each round: teardown, then setup, both page sizes in alternating "
             "order); MiB are rows x 8 KiB.", "",
             "| page size | rows a page | load MiB/s (record) | wall MiB/s (command) | insert s | index s | "
             "rounds (MiB/s) |", "|---|---|---|---|---|---|---|"]
    for page in PAGES:
        rates = [r["mib_per_s"] for r in runs[page]]
        lines.append(f"| {page} | {rows_per_page(runs[page])} | {statistics.median(rates):.1f} | "
                     f"{statistics.median(r['wall_mib_per_s'] for r in runs[page]):.1f} | "
                     f"{statistics.median(r['steps'].get('load', 0) for r in runs[page]):.1f} | "
                     f"{statistics.median(r['steps'].get('index', 0) for r in runs[page]):.1f} | "
                     f"{', '.join(f'{x:.1f}' for x in rates)} |")
    ratio = statistics.median(r["mib_per_s"] for r in runs["8k"]) / statistics.median(
        r["mib_per_s"] for r in runs["16k"])
    lines += ["", f"8k / 16k load rate: {ratio:.2f}"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
