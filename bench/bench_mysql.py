"""dbio on MySQL/MariaDB beside fio and sysbench, in one window: physical reads/s, reads per host
CPU second, the device's reads against the engine's, at 1, 2, 4 and 8 sessions.

Usage (from the repository, after the README's setup command; needs fio, sysbench and, for the
default target, mariadb-server's binaries: Debian packages fio, sysbench, mariadb-server):

    .venv/bin/python bench/bench_mysql.py [--dir /var/tmp/dbio-bench-mysql] [--scale 1GiB] [--sessions 1,2,4,8]
    .venv/bin/python bench/bench_mysql.py --dsn 'mysql://root@localhost/dbio?unix_socket=/path' --sysbench-db sbtest
    .venv/bin/python bench/bench_mysql.py --managed     # the managed instance (dbio instance init --engine mysql)

Targets: by default a throwaway mariadbd (bench/scratch_mariadbd.py: its own data directory under
--dir, own socket, no TCP, O_DIRECT, --buffer-pool, performance_schema on, run as user mysql),
removed at the end. The MariaDB service of the machine is no target: it reads through the page
cache (its reads are not device reads). --dsn: any server on this host (fio reads its table
files, diskstats its device). --managed: dbio's own instance (--engine mysql without --dsn).

Per round and session count, in this order and back to back: `dbio run --baseline` (fio's
synchronous reads of dbio's own table files at the same jobs, at the engine's page size, then
dbio's run), then sysbench's oltp_point_select at the same threads on its own tables, with the
device's reads (/proc/diskstats) and the host's CPU (/proc/stat) around it. It prints medians and
a Markdown block for bench/RESULTS.md; raw figures go to <dir>/bench-mysql.json.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from dbio.collect import host, procfs
from dbio.stats import catalogue

import scratch_mariadbd
from benchkit import DBIO, dbio, fresh_directory, heading, now, result_of

FIGURES = ("reads_per_s", "raw_reads_per_s", "efficiency_reads", "efficiency_cpu", "efficiency_reader_cpu",
           "reads_per_host_cpu_second",
           "avg_read_us", "raw_avg_read_us", "device_to_db_read_ratio", "blocks_read_per_row", "db_cpu_us_per_read")


def one_run(common: list[str], sessions: int, seconds: int, label: str) -> dict:
    doc = result_of(dbio("run", *common, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", "3s",
                         "--label", label, "--baseline"))
    f = catalogue.figures_of(doc)
    return {name: catalogue.value(f, name) for name in FIGURES}


class Sysbench:
    """sysbench's oltp_point_select on its own database of the same server."""

    def __init__(self, socket: str, user: str, database: str, rows: int, seconds: int, devices: list[str]):
        self.base = ["sysbench", "oltp_point_select", "--db-driver=mysql", f"--mysql-socket={socket}",
                     f"--mysql-user={user}", f"--mysql-db={database}", "--tables=1", f"--table-size={rows}",
                     # uniform keys, as dbio's: sysbench's default ("special") sends most queries to 1% of
                     # the rows, which the buffer pool then serves
                     "--rand-type=uniform"]
        self.seconds, self.devices, self.socket, self.user = seconds, set(devices), socket, user

    def prepare(self) -> float:
        began = time.monotonic()
        done = subprocess.run(self.base + ["--threads=2", "prepare"], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"sysbench prepare failed: {done.stderr.strip() or done.stdout.strip()}")
        return time.monotonic() - began

    def data_reads(self) -> float:
        """InnoDB's own count of data-file reads (the device also serves whoever else uses it)."""
        done = subprocess.run(["mariadb", f"--socket={self.socket}", f"-u{self.user}", "-N", "-B", "-e",
                               "SHOW GLOBAL STATUS LIKE 'Innodb_data_reads'"], capture_output=True, text=True)
        return float(done.stdout.split()[1]) if done.returncode == 0 and done.stdout.split() else float("nan")

    def run(self, threads: int) -> dict:
        """sysbench's own rate, the engine's and the device's reads and the host's CPU over its run."""
        subprocess.run(self.base + [f"--threads={threads}", "--time=3", "run"], capture_output=True)  # warm-up
        engine = self.data_reads()
        disks, cpu, began = procfs.read_diskstats(self.devices).counters, procfs.HostBusy(), time.time()
        done = subprocess.run(self.base + [f"--threads={threads}", f"--time={self.seconds}", "run"],
                              capture_output=True, text=True)
        elapsed = time.time() - began
        disks_end, busy = procfs.read_diskstats(self.devices).counters, cpu.seconds()
        engine = self.data_reads() - engine
        if done.returncode != 0:
            raise SystemExit(f"sysbench run failed: {done.stderr.strip() or done.stdout.strip()}")
        match = re.search(r"queries:\s+\d+\s+\(([\d.]+) per sec", done.stdout)
        reads = sum(disks_end[d]["reads"] - disks[d]["reads"] for d in disks_end if d in disks)
        qps = float(match.group(1)) if match else None
        return {"sysbench_qps": qps, "sysbench_device_reads_per_s": reads / elapsed,
                "sysbench_engine_reads_per_s": engine / elapsed,
                "sysbench_engine_reads_per_query": engine / elapsed / qps if qps else None,
                "sysbench_engine_reads_per_host_cpu_second": engine / busy if busy > 0 else None,
                "sysbench_device_reads_per_host_cpu_second": reads / busy if busy > 0 else None}


def target(args: argparse.Namespace, base: Path) -> tuple[list[str], scratch_mariadbd.Scratch | None, str | None]:
    """dbio's target options, the scratch server (when the bench made one), and sysbench's socket."""
    if args.dsn:
        return ["--dsn", args.dsn], None, args.sysbench_socket
    if args.managed:  # its socket: <dir>/instance/socket/mysqld.sock, root through unix_socket
        data_dir = base / "instance"
        pool = args.buffer_pool + "iB" if args.buffer_pool[-1:] in "KMG" else args.buffer_pool  # 64M -> 64MiB
        where = ["--data-dir", str(data_dir), "--buffer-pool", pool]
        dbio("instance", "init", "--engine", "mysql", *where)
        socket = args.sysbench_socket or str(data_dir / "socket" / "mysqld.sock")
        subprocess.run(["mariadb", f"--socket={socket}", "-uroot", "-e",
                        f"CREATE DATABASE IF NOT EXISTS {args.sysbench_db}"], check=True)
        return where, None, socket
    why = scratch_mariadbd.binaries_present()
    if why:
        raise SystemExit(why)
    scratch = scratch_mariadbd.start(base / "mariadbd", buffer_pool=args.buffer_pool)
    scratch.client("-e", f"CREATE DATABASE IF NOT EXISTS {args.sysbench_db}")
    return ["--dsn", scratch.dsn()], scratch, scratch.socket


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-mysql"))
    parser.add_argument("--dsn", help="an existing server on this host (mysql://...)")
    parser.add_argument("--managed", action="store_true", help="dbio's managed MySQL instance")
    parser.add_argument("--buffer-pool", default="64M", help="the scratch server's innodb_buffer_pool_size")
    parser.add_argument("--scale", default="1GiB")
    parser.add_argument("--sessions", default="1,2,4,8")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--sysbench-db", default="sbtest")
    parser.add_argument("--sysbench-socket", help="sysbench's socket (with --dsn or --managed); none: no sysbench")
    parser.add_argument("--sysbench-rows", type=int, default=2_000_000)
    args = parser.parse_args()
    for tool in ("fio", "sysbench"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed: install the {tool} package (apt-get install {tool})")
    base = fresh_directory(args.dir)
    out: dict = {"date": now(), "scale": args.scale, "seconds": args.seconds, "rows": []}
    scratch = None
    try:
        where, scratch, socket = target(args, base)
        common = ["--engine", "mysql", *where, "--scale", args.scale, "--scan-table-size", "0", "--work-unit", "8",
                  "--update-pct", "0", "--results-dir", str(base / "results")]
        out.update(measure(args, common, socket, out))
    finally:
        (base / "bench-mysql.json").write_text(json.dumps(out, indent=1))
        if scratch is not None:
            scratch.stop()
        if args.managed:
            subprocess.run(DBIO + ["instance", "destroy", "--engine", "mysql", "--yes", "--data-dir",
                                   str(base / "instance")], capture_output=True)
    print()
    print(markdown(out))


def measure(args: argparse.Namespace, common: list[str], socket: str | None, out: dict) -> dict:
    setup = dbio("setup", *common)
    out["setup"] = setup.stdout.strip().splitlines()[-1]
    print(out["setup"], flush=True)
    doc = result_of(dbio("run", *common, "-t", "1", "--run-time", "2s", "--warmup", "1s", "--label", "probe"))
    out["server"] = doc["capabilities"]["server_version"]
    datadir = doc["capabilities"].get("data_directory")
    devices = host.storage_of(datadir).get("diskstats_devices") or [] if datadir else []
    bench = Sysbench(socket, "root", args.sysbench_db, args.sysbench_rows, args.seconds, devices) if socket else None
    if bench:
        out["sysbench_prepare_seconds"] = bench.prepare()
    for rnd in range(args.rounds):
        for sessions in [int(s) for s in args.sessions.split(",")]:
            row = {"round": rnd, "sessions": sessions,
                   **one_run(common, sessions, args.seconds, f"mysql-r{rnd}-s{sessions}")}
            if bench:
                row.update(bench.run(sessions))
            out["rows"].append(row)
            print(json.dumps(row), flush=True)
    return out


def _med(rows: list[dict], key: str) -> float:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else float("nan")


def markdown(out: dict) -> str:
    lines = [heading(out["date"], f", {out.get('server')}, {out['scale']}, {out['seconds']} s runs"), "",
             f"Load: {out.get('setup')}", "",
             "| sessions | dbio reads/s | fio reads/s | dbio / fio (min-max) | dbio reads per host-CPU-s | "
             "host CPU/read dbio/fio | readers' own CPU/read dbio/fio | device / engine reads | avg read dbio / fio | "
             "pages read per row | "
             "sysbench point selects/s | sysbench engine reads/s (per query) | sysbench engine reads per host-CPU-s | "
             "sysbench device reads/s |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows = out["rows"]
    for sessions in sorted({r["sessions"] for r in rows}):
        mine = [r for r in rows if r["sessions"] == sessions]
        eff = [r["efficiency_reads"] for r in mine if r.get("efficiency_reads") is not None]
        lines.append(
            f"| {sessions} | {_med(mine, 'reads_per_s'):,.0f} | {_med(mine, 'raw_reads_per_s'):,.0f} | "
            f"**{_med(mine, 'efficiency_reads'):.2f}** ({min(eff, default=float('nan')):.2f}-"
            f"{max(eff, default=float('nan')):.2f}) | {_med(mine, 'reads_per_host_cpu_second'):,.0f} | "
            f"{_med(mine, 'efficiency_cpu'):.2f} | {_med(mine, 'efficiency_reader_cpu'):.2f} | "
            f"{_med(mine, 'device_to_db_read_ratio'):.3f} | "
            f"{_med(mine, 'avg_read_us'):,.0f} / {_med(mine, 'raw_avg_read_us'):,.0f} us | "
            f"{_med(mine, 'blocks_read_per_row'):.2f} | {_med(mine, 'sysbench_qps'):,.0f} | "
            f"{_med(mine, 'sysbench_engine_reads_per_s'):,.0f} ({_med(mine, 'sysbench_engine_reads_per_query'):.2f}) | "
            f"{_med(mine, 'sysbench_engine_reads_per_host_cpu_second'):,.0f} | "
            f"{_med(mine, 'sysbench_device_reads_per_s'):,.0f} |")
    lines += ["", f"Medians of {out.get('rounds_done', len(rows) // max(1, len({r['sessions'] for r in rows})))} "
                  "rounds; in each, fio (dbio run --baseline), dbio and sysbench ran back to back at each count."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
