"""What the managed MariaDB/MySQL server spends per physical read, one server setting against another:
CPU per read (the sessions' threads and the whole server process) and context switches per read.

Usage (from the repository, after the README's setup command; needs mariadb-server; --perf needs perf):

    .venv/bin/python bench/bench_mysql_cpu.py [--dir /var/tmp/dbio-bench-mysql-cpu] [--scale 1GiB] \\
        [--buffer-pool 64MiB] [--sessions 1,2] [--rounds 3] [--seconds 15] [--variants profile,pfs-lean] [--perf 8]

This checkout makes the managed instance (dbio instance init --engine mysql) and loads it once. Each
variant is the instance's own profile (settings.profile) with a few settings changed (VARIANTS
below; "profile" changes nothing). Per round and session count every variant runs once, the order
rotated each round: the server restarts with the variant's settings (the same data directory, a
cold buffer pool), then `dbio run --dsn <its socket>` (the server as it is, no restart back to the
profile), and, inside the run, this script reads two instants `--seconds - 5` s apart (from the
end of dbio's 3 s warm-up, once its sessions run their loop): InnoDB's global status, every
thread's CPU (user, system) and context switches (voluntary, involuntary) from /proc/<pid>/task,
the process's CPU (threads that ended included), and which threads are dbio's sessions (the
processlist's TIDs running the loop).
Per read = over Innodb_data_reads in the same window. --perf N: after the rounds, one more run
per variant at the first session count with `perf record -g -p <server> -F 2000` for N s inside
it, summarised by `perf report --sort dso` and by symbol. Raw figures: <dir>/bench-mysql-cpu.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from dbio.collect.procfs import CLK_TCK
from dbio.engines.mysql.connection import connect
from dbio.engines.mysql.instance import settings
from dbio.engines.mysql.instance.managed import MysqlInstance
from dbio.engines.mysql.engine_options import InstanceConfig
from dbio.stats import catalogue
from dbio.units import parse_size

from benchkit import REPO, fresh_directory, heading, now

# performance_schema instruments none of dbio's figures read (pfs.py and sql/pfs_*.sql read the file
# I/O summaries, the sessions' current waits and the threads): per-row handler calls and table locks,
# idle, stages, statements (each stored-procedure instruction is one), transactions, memory.
PFS_UNREAD = ("wait/io/table/%", "wait/lock/table/%", "idle", "stage/%", "statement/%", "transaction", "memory/%")
VARIANTS: dict[str, dict[str, str | None]] = {
    "profile": {},
    "pfs-lean": {f"performance_schema_instrument:{p}": "OFF" for p in PFS_UNREAD},
    "pfs-off": {"performance_schema": "OFF"},
    "ahi-on": {"innodb_adaptive_hash_index": "ON"},  # MySQL 8.0's default; the profile sets it OFF
    "lru-100": {"innodb_lru_scan_depth": "100"},  # the least: the page cleaner keeps fewer pages free
    "lru-3072": {"innodb_lru_scan_depth": "3072"},
    "threadpool": {"thread_handling": "pool-of-threads"},
    "spin-0": {"innodb_sync_spin_loops": "0"},  # a latch taken by another session: wait at once, no spinning
    "optsel-1": {"optimizer_use_condition_selectivity": "1"},  # the optimizer's per-statement selectivity work
}
STATUS = ("Innodb_data_reads", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests",
          "Innodb_buffer_pool_wait_free", "Innodb_buffer_pool_pages_LRU_freed", "Innodb_buffer_pool_pages_LRU_flushed",
          "Innodb_buffer_pool_pages_free", "Innodb_rows_read", "Handler_read_key", "Handler_read_next",
          "Innodb_adaptive_hash_hash_searches", "Innodb_adaptive_hash_non_hash_searches", "Questions",
          "Innodb_data_writes", "Innodb_log_writes")
FIGURES = ("reads_per_s", "db_cpu_us_per_read", "reads_per_host_cpu_second", "avg_read_us", "blocks_read_per_row")


def variant_settings(profile: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    """The profile with a variant's changes; None removes a setting (the server's default) (pure)."""
    out = dict(profile)
    for name, value in changes.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def read_tasks(pid: int) -> dict[int, dict[str, float]]:
    """Each thread's CPU seconds (user, system) and context switches, from /proc/<pid>/task."""
    out: dict[int, dict[str, float]] = {}
    for entry in os.scandir(f"/proc/{pid}/task"):
        try:
            stat = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        switches = dict(re.findall(r"^(voluntary_ctxt_switches|nonvoluntary_ctxt_switches):\s+(\d+)", status, re.M))
        out[int(entry.name)] = {"user": int(stat[11]) / CLK_TCK, "system": int(stat[12]) / CLK_TCK,
                                "voluntary": float(switches.get("voluntary_ctxt_switches", 0)),
                                "involuntary": float(switches.get("nonvoluntary_ctxt_switches", 0))}
    return out


def process_cpu(pid: int) -> float:
    """The whole process's CPU seconds, its ended threads' included."""
    rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / CLK_TCK


class Reader:
    """Readings of the server: its status, its threads, dbio's sessions among them."""

    def __init__(self, conninfo: str, pid: int):
        self.conn = connect(conninfo, application_name="bench:cpu")
        self.pid = pid

    def names(self) -> dict[int, str]:
        """performance_schema's name of each OS thread (none when it is off)."""
        try:
            return {int(t): str(n) for t, n in self.conn.query(
                "SELECT THREAD_OS_ID, NAME FROM performance_schema.threads WHERE THREAD_OS_ID IS NOT NULL")}
        except Exception:
            return {}

    def sessions(self) -> list[int]:
        # inside the loop the processlist shows the CALL or the statement of the procedure it runs
        return [int(r[0]) for r in self.conn.query(
            "SELECT TID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND ID <> CONNECTION_ID() "
            "AND (INFO LIKE '%dbio\\_slice%' OR INFO LIKE '%dbio\\_cf1\\_%')")]

    def wait_for_sessions(self, count: int, run: subprocess.Popen, timeout: float = 60.0) -> None:
        """Until dbio's sessions run their loop (dbio connects, installs, checks the plan first)."""
        deadline = time.monotonic() + timeout
        while len(self.sessions()) < count:
            if run.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"dbio's {count} sessions did not start their loop:\n{run.communicate()[1]}")
            time.sleep(0.1)

    def reading(self) -> dict:
        status = {k: float(v) for k, v in self.conn.query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN (" + ",".join(["%s"] * len(STATUS)) + ")", STATUS)}
        return {"at": time.monotonic(), "status": status, "tasks": read_tasks(self.pid),
                "process_cpu": process_cpu(self.pid), "sessions": self.sessions()}

    def close(self) -> None:
        self.conn.close()


def per_read(begin: dict, end: dict, names: dict[int, str]) -> dict:
    """The window's figures per physical read (pure): the sessions' threads, the other threads by
    name, the whole process; CPU in microseconds, context switches as counts."""
    reads = end["status"]["Innodb_data_reads"] - begin["status"]["Innodb_data_reads"]
    seconds = end["at"] - begin["at"]
    sessions = set(begin["sessions"]) | set(end["sessions"])  # one between two slices at one instant
    groups: dict[str, dict[str, float]] = {}
    for tid, e in end["tasks"].items():
        b = begin["tasks"].get(tid)
        if b is None:
            continue
        group = "sessions" if tid in sessions else names.get(tid, "unnamed").rsplit("/", 1)[-1]
        g = groups.setdefault(group, {"user": 0.0, "system": 0.0, "voluntary": 0.0, "involuntary": 0.0})
        for k in g:
            g[k] += e[k] - b[k]
    if not reads:
        return {"reads": 0, "seconds": seconds}
    out = {"reads": reads, "seconds": seconds, "reads_per_s": reads / seconds, "session_threads": len(sessions),
           "process_cpu_us": 1e6 * (end["process_cpu"] - begin["process_cpu"]) / reads,
           "groups": {name: {"cpu_us": 1e6 * (g["user"] + g["system"]) / reads, "user_us": 1e6 * g["user"] / reads,
                             "system_us": 1e6 * g["system"] / reads,
                             "switches": (g["voluntary"] + g["involuntary"]) / reads,
                             "involuntary": g["involuntary"] / reads}
                      for name, g in groups.items() if g["user"] + g["system"] + g["voluntary"] + g["involuntary"]},
           "status_per_read": {k: (end["status"].get(k, 0) - begin["status"].get(k, 0)) / reads
                               for k in STATUS if k in end["status"]}}
    out["switches"] = sum(g["switches"] for g in out["groups"].values())
    s = out["groups"].get("sessions", {})
    out["session_cpu_us"], out["session_switches"] = s.get("cpu_us"), s.get("switches")
    out["session_user_us"], out["session_system_us"] = s.get("user_us"), s.get("system_us")
    return out


class Bench:
    def __init__(self, args: argparse.Namespace, base: Path):
        self.args, self.base = args, base
        self.data_dir = base / "instance"
        self.instance = MysqlInstance(self.data_dir)
        self.where = ["--data-dir", str(self.data_dir), "--buffer-pool", args.buffer_pool]
        self.common = ["--engine", "mysql", "--scale", args.scale, "--scan-table-size", "0", "--work-unit", "8",
                       "--update-pct", "0", "--results-dir", str(base / "results")]
        self.sessions = [int(s) for s in args.sessions.split(",")]

    def dbio(self, *args: str, wait: bool = True):
        cmd = [sys.executable, "-m", "dbio", *args]
        if not wait:
            return subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"dbio {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def restart(self, changes: dict[str, str | None]) -> dict[str, str]:
        meta = self.instance.meta()
        cfg = InstanceConfig(data_dir=self.data_dir, buffer_pool=parse_size(self.args.buffer_pool))
        wanted = variant_settings(settings.profile(cfg, meta.page_size, sessions=max(self.sessions)), changes)
        self.instance.stop(quiet=True)
        self.instance._start(wanted)  # the instance's own start, with the variant's settings
        return wanted

    def one(self, variant: str, sessions: int, label: str, perf_seconds: int = 0) -> dict:
        wanted = self.restart(VARIANTS[variant])
        pid = self.instance.pid()
        reader = Reader(self.instance.conninfo(), pid)
        names = reader.names()
        run = self.dbio("run", *self.common, "--dsn", self.instance.conninfo(), "-t", str(sessions), "--run-time",
                        f"{self.args.seconds}s", "--warmup", "3s", "--label", label, wait=False)
        perf = None
        try:
            reader.wait_for_sessions(sessions, run)
            time.sleep(3)  # dbio's warm-up: the buffer pool is full of the table's pages by then
            begin = reader.reading()
            window = self.args.seconds - 5  # ends 2 s before dbio's window does
            if perf_seconds:
                data = self.base / f"perf-{variant}.data"
                perf = subprocess.Popen(["perf", "record", "-g", "-F", "2000", "-o", str(data), "-p", str(pid), "--",
                                         "sleep", str(min(perf_seconds, window))],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(window)
            end = reader.reading()
            names.update(reader.names())
        finally:
            reader.close()
            out, err = run.communicate()
            if perf is not None:
                perf.wait()
        if run.returncode != 0:
            raise SystemExit(f"dbio run failed ({run.returncode}):\n{out}\n{err}")
        line = next(ln for ln in out.splitlines() if ln.startswith("result: "))
        f = catalogue.figures_of(json.loads(Path(line.split(": ", 1)[1]).read_text()))
        row = {"variant": variant, "sessions": sessions, "label": label, **per_read(begin, end, names),
               "dbio": {name: catalogue.value(f, name) for name in FIGURES},
               "settings": {k: v for k, v in wanted.items() if k in VARIANTS[variant]}}
        if perf_seconds:
            row["perf"] = perf_summary(self.base / f"perf-{variant}.data")
        return row


def perf_summary(data: Path) -> dict:
    """perf report's shares by shared object and the top symbols (children not counted)."""
    def report(sort: str, limit: int) -> list[str]:
        done = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--stdio", "--sort", sort,
                               "-g", "none", "--percent-limit", "0.5"], capture_output=True, text=True)
        lines = [ln.strip() for ln in done.stdout.splitlines() if ln.strip() and not ln.startswith("#")]
        return lines[:limit]
    return {"dso": report("dso", 15), "symbol": report("dso,sym", 40)}


def summary(rows: list[dict]) -> list[str]:
    """A Markdown table: per session count and variant, medians of the runs (pure)."""
    def med(values: list) -> float:
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else float("nan")

    lines = ["| sessions | variant | runs | process CPU us/read | sessions' CPU us/read (user + sys) | "
             "other threads us/read | switches/read (sessions) | reads/s (window) | dbio DB CPU us/read |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for sessions in sorted({r["sessions"] for r in rows}):
        for variant in dict.fromkeys(r["variant"] for r in rows):
            mine = [r for r in rows if r["sessions"] == sessions and r["variant"] == variant and r.get("reads")]
            if not mine:
                continue
            other = [r["process_cpu_us"] - (r["session_cpu_us"] or 0) for r in mine]
            lines.append(
                f"| {sessions} | {variant} | {len(mine)} | {med([r['process_cpu_us'] for r in mine]):.1f} | "
                f"{med([r['session_cpu_us'] for r in mine]):.1f} ({med([r['session_user_us'] for r in mine]):.1f} + "
                f"{med([r['session_system_us'] for r in mine]):.1f}) | {med(other):.1f} | "
                f"{med([r['switches'] for r in mine]):.2f} ({med([r['session_switches'] for r in mine]):.2f}) | "
                f"{med([r['reads_per_s'] for r in mine]):,.0f} | "
                f"{med([r['dbio']['db_cpu_us_per_read'] for r in mine]):.1f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-mysql-cpu"))
    parser.add_argument("--scale", default="1GiB")
    parser.add_argument("--buffer-pool", default="64MiB")
    parser.add_argument("--sessions", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--variants", default="profile,pfs-lean", help=f"of: {', '.join(VARIANTS)}")
    parser.add_argument("--perf", type=int, default=0, help="seconds of perf record per variant (0: none)")
    args = parser.parse_args()
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or args.seconds < 10:
        raise SystemExit(f"unknown variant {unknown[0]!r} (known: {', '.join(VARIANTS)})" if unknown
                         else "--seconds must be at least 10 (the window is --seconds - 5 s inside dbio's)")
    base = fresh_directory(args.dir)
    bench = Bench(args, base)
    out: dict = {"date": now(), "args": {k: str(v) for k, v in vars(args).items()}, "rows": []}
    try:
        bench.dbio("instance", "init", "--engine", "mysql", *bench.where)
        out["setup"] = bench.dbio("setup", *bench.common, *bench.where).stdout.strip().splitlines()[-1]
        out["server"] = bench.instance.meta().version
        print(out["setup"], flush=True)
        for rnd in range(args.rounds):
            for sessions in bench.sessions:
                order = variants[rnd % len(variants):] + variants[:rnd % len(variants)]
                for variant in order:
                    row = bench.one(variant, sessions, f"cpu-{variant}-r{rnd}-s{sessions}")
                    row["round"] = rnd
                    out["rows"].append(row)
                    print(json.dumps({k: row.get(k) for k in ("variant", "sessions", "round", "process_cpu_us",
                                                              "session_cpu_us", "switches", "reads_per_s")}),
                          flush=True)
        for variant in variants if args.perf else []:
            out.setdefault("perf", {})[variant] = bench.one(variant, bench.sessions[0], f"cpu-perf-{variant}",
                                                            perf_seconds=args.perf)
    finally:
        (base / "bench-mysql-cpu.json").write_text(json.dumps(out, indent=1))
        subprocess.run([sys.executable, "-m", "dbio", "instance", "destroy", "--engine", "mysql", "--yes",
                        "--data-dir", str(bench.data_dir)], capture_output=True, cwd=REPO)
    print(heading(out["date"], f", {out.get('server')}, {args.scale}, {args.seconds} s runs"))
    print("\n".join(summary(out["rows"])))
    for variant, row in out.get("perf", {}).items():
        print(f"\nperf, {variant}:\n" + "\n".join(row["perf"]["dso"]))


if __name__ == "__main__":
    main()
