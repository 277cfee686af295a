"""The observer's cost: what dbio's own measuring takes of one core, as dbio reports it and as /proc shows it
from outside (issue 39).

Usage (from the repository, after the README's setup command; the MySQL engine needs mariadb-server):

    .venv/bin/python bench/bench_observer.py [--dir /var/tmp/dbio-bench-observer] [--engines postgres,mysql] \\
        [--sessions 1,8,64] [--seconds 30] [--rounds 1] [--scale 512MiB] [--against CHECKOUT] [--lock FILE]

--lock: a file each round holds an exclusive flock on (a machine shared by several benches: `flock FILE` per
round, so that others' rounds come between this one's).

--against: another checkout of dbio (a `git worktree add` of an earlier commit) whose runs alternate with this
one's on the same instance, the order rotated each round, so that the two are compared inside a round.

Per engine it makes its own managed instance (embedded PostgreSQL; managed MariaDB) and loads it once (index
plan, work unit 8, update pct 0, the default 1 s interval). Each run is `dbio run` at a session count with a
--seconds window. From outside, inside the window (from 2 s after it opens to 3 s before it closes), this
script reads twice:

- the client: the dbio process's CPU (utime + stime of /proc/PID/stat, its threads included), and
- the server work dbio asks for besides its sessions: the server processes (PostgreSQL's backends, found in
  pg_stat_activity by their application_name) or threads (MariaDB's, found in performance_schema by the
  connection's program_name) of dbio's control, monitor, wait-sampler and read-probe connections, their
  CPU from /proc.

Each is given as a share of one core over the real seconds between the two readings, beside what dbio's
result reports for its window (dbio_client_cpu_seconds, dbio_monitor_cpu_seconds over window_seconds) and the
read probe's timed single reads (count, p50, p99), whose distribution a cheaper probe must keep.
Raw figures: <dir>/bench-observer.json; a Markdown table for bench/RESULTS.md is printed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dbio.collect.procfs import CLK_TCK
from dbio.stats import catalogue

from benchkit import REPO, fresh_directory, heading, now

HELPERS = ("control", "monitor", "waits", "probe")  # engines/base.HELPERS: a run's own connections
FIGURES = ("window_seconds", "dbio_client_cpu_seconds", "dbio_monitor_cpu_seconds", "reads_per_s",
           "single_read_count", "single_read_p50_us", "single_read_p99_us")
WARMUP = 3.0


def cpu_seconds(stat_path: str) -> float | None:
    """utime + stime of a /proc stat file (a process's includes its live threads'); None once it is gone."""
    try:
        rest = Path(stat_path).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(rest[11]) + int(rest[12])) / CLK_TCK


class Postgres:
    """The embedded PostgreSQL: dbio's helper backends by application_name."""

    name = "postgres"

    def __init__(self, base: Path, scale: str):
        self.data_dir = base / "pg"
        self.common = ["--data-dir", str(self.data_dir), "--shared-buffers", "128MiB", "--scale", scale,
                       "--scan-table-size", "0", "--work-unit", "8", "--update-pct", "0",
                       "--results-dir", str(base / "results")]
        self.conn: Any = None

    def prepare(self) -> None:
        dbio("setup", *self.common)
        from dbio.engines.postgres.instance.embedded import EmbeddedInstance

        conninfo = EmbeddedInstance(self.data_dir).conninfo()
        import psycopg

        self.conn = psycopg.connect(conninfo, autocommit=True, application_name="bench:observer")

    def helpers(self) -> dict[str, str]:
        """Each helper connection's /proc stat file, by its name."""
        rows = self.conn.execute("SELECT pid, application_name FROM pg_stat_activity WHERE application_name LIKE "
                                 "ANY(%s)", ([f"dbio:{h}:%" for h in HELPERS],)).fetchall()
        return {f"{name}/{pid}": f"/proc/{pid}/stat" for pid, name in rows}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        subprocess.run(DBIO + ["instance", "destroy", "--yes", "--data-dir", str(self.data_dir)], cwd=REPO,
                       capture_output=True)


class Mysql:
    """The managed MariaDB: dbio's helper connections' threads, by the program_name they connect with."""

    name = "mysql"

    def __init__(self, base: Path, scale: str):
        self.data_dir = base / "mysql"
        self.where = ["--data-dir", str(self.data_dir), "--buffer-pool", "128MiB"]
        self.common = ["--engine", "mysql", *self.where, "--scale", scale, "--scan-table-size", "0",
                       "--work-unit", "8", "--update-pct", "0", "--results-dir", str(base / "results")]
        self.conn: Any = None
        self.pid = 0

    def prepare(self) -> None:
        dbio("instance", "init", "--engine", "mysql", *self.where)
        dbio("setup", *self.common)
        from dbio.engines.mysql.connection import connect
        from dbio.engines.mysql.instance.managed import MysqlInstance

        instance = MysqlInstance(self.data_dir)
        self.pid = int(instance.pid() or 0)
        self.conn = connect(instance.conninfo(), application_name="bench:observer")

    def helpers(self) -> dict[str, str]:
        rows = self.conn.query(
            "SELECT t.THREAD_OS_ID, a.ATTR_VALUE FROM performance_schema.session_connect_attrs a "
            "JOIN performance_schema.threads t ON t.PROCESSLIST_ID = a.PROCESSLIST_ID "
            "WHERE a.ATTR_NAME = 'program_name' AND (" + " OR ".join(["a.ATTR_VALUE LIKE %s"] * len(HELPERS)) + ")",
            tuple(f"dbio:{h}:%" for h in HELPERS))
        return {f"{name}/{tid}": f"/proc/{self.pid}/task/{tid}/stat" for tid, name in rows if tid}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        subprocess.run(DBIO + ["instance", "destroy", "--engine", "mysql", "--yes", "--data-dir", str(self.data_dir)],
                       cwd=REPO, capture_output=True)


DBIO = [sys.executable, "-m", "dbio"]


def dbio(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(DBIO + list(args), text=True, capture_output=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"dbio {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def reading(client_pid: int, helpers: dict[str, str]) -> dict[str, Any]:
    return {"at": time.monotonic(), "client": cpu_seconds(f"/proc/{client_pid}/stat"),
            "helpers": {name: cpu_seconds(path) for name, path in helpers.items()}}


def shares(begin: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    """The client's and the helpers' CPU between two readings, as % of one core (pure)."""
    seconds = end["at"] - begin["at"]
    helpers = {name: end["helpers"][name] - b for name, b in begin["helpers"].items()
               if b is not None and end["helpers"].get(name) is not None}
    by_kind: dict[str, float] = {}
    for name, cpu in helpers.items():
        kind = name.split(":")[1]
        by_kind[kind] = by_kind.get(kind, 0.0) + cpu
    client = end["client"] - begin["client"]
    return {"seconds": seconds, "client_pct": 100 * client / seconds,
            "server_pct": 100 * sum(helpers.values()) / seconds,
            "total_pct": 100 * (client + sum(helpers.values())) / seconds,
            "server_by_kind_pct": {k: 100 * v / seconds for k, v in sorted(by_kind.items())}}


def one(engine: Any, sessions: int, seconds: float, label: str, checkout: Path = REPO) -> dict[str, Any]:
    run = subprocess.Popen(DBIO + ["run", *engine.common, "-t", str(sessions), "--run-time", f"{seconds:g}s",
                                   "--warmup", f"{WARMUP:g}s", "--label", label],
                           cwd=checkout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        helpers: dict[str, str] = {}
        while not any(":probe:" in h for h in helpers):  # the probe opens with the monitoring, before the start
            if run.poll() is not None or time.monotonic() > deadline:
                out, err = run.communicate()
                raise SystemExit(f"dbio run did not open its monitoring:\n{out}\n{err}")
            time.sleep(0.2)
            helpers = engine.helpers()
        time.sleep(WARMUP + 2 + 2)  # the sessions connect and start, the warm-up, 2 s into the window
        helpers = engine.helpers()
        begin = reading(run.pid, helpers)
        time.sleep(seconds - 5)
        end = reading(run.pid, helpers)
    finally:
        out, err = run.communicate()
    if run.returncode != 0:
        raise SystemExit(f"dbio run failed ({run.returncode}):\n{out}\n{err}")
    line = next(ln for ln in out.splitlines() if ln.startswith("result: "))
    f = catalogue.figures_of(json.loads(Path(line.split(": ", 1)[1]).read_text()))
    reported = {name: catalogue.value(f, name) for name in FIGURES}
    window = reported["window_seconds"] or float("nan")
    return {"engine": engine.name, "sessions": sessions, "label": label, "checkout": str(checkout),
            "outside": shares(begin, end),
            "dbio": reported,
            "dbio_client_pct": 100 * (reported["dbio_client_cpu_seconds"] or 0) / window,
            "dbio_monitor_pct": 100 * (reported["dbio_monitor_cpu_seconds"] or 0) / window,
            "helpers": sorted(helpers)}


def table(rows: list[dict[str, Any]]) -> list[str]:
    """Per engine and session count, the medians over the rounds (pure)."""
    def med(values: list[Any]) -> float:
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else float("nan")

    def rng(values: list[float]) -> str:
        return f"{med(values):.2f}" + (f" ({min(values):.2f}-{max(values):.2f})" if len(values) > 1 else "")

    lines = ["| engine | sessions | runs | client % of a core (outside) | its server work % (outside) | "
             "total % (outside) | dbio reports: client % + server % | server work by connection % | "
             "probe's single reads (p50, p99 us) | reads/s |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for engine, checkout in dict.fromkeys((r["engine"], r.get("checkout", "")) for r in rows):
        for sessions in sorted({r["sessions"] for r in rows if r["engine"] == engine}):
            mine = [r for r in rows if r["engine"] == engine and r["sessions"] == sessions
                    and r.get("checkout", "") == checkout]
            if not mine:
                continue
            kinds = sorted({k for r in mine for k in r["outside"]["server_by_kind_pct"]})
            by_kind = ", ".join(f"{k} {med([r['outside']['server_by_kind_pct'].get(k) for r in mine]):.2f}"
                                for k in kinds)
            d = [r["dbio"] for r in mine]
            lines.append(
                f"| {engine}{' (' + Path(checkout).name + ')' if checkout != str(REPO) else ''} | {sessions} | "
                f"{len(mine)} | {rng([r['outside']['client_pct'] for r in mine])} | "
                f"{rng([r['outside']['server_pct'] for r in mine])} | "
                f"**{rng([r['outside']['total_pct'] for r in mine])}** | "
                f"{med([r['dbio_client_pct'] for r in mine]):.2f} + {med([r['dbio_monitor_pct'] for r in mine]):.2f} | "
                f"{by_kind} | {med([x['single_read_count'] for x in d]):,.0f} "
                f"({med([x['single_read_p50_us'] for x in d]):.0f}, {med([x['single_read_p99_us'] for x in d]):.0f}) | "
                f"{med([x['reads_per_s'] for x in d]):,.0f} |")
    return lines


@contextlib.contextmanager
def held(lock: Path | None):
    """An exclusive flock on lock for the block (none without one)."""
    if lock is None:
        yield
        return
    with lock.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def in_round_ratios(rows: list[dict[str, Any]], base: str) -> list[str]:
    """Per engine and session count, this checkout's total (client + its server work, from outside) over the base
    checkout's in the same round: each round's ratio, their median and range, beside each side's median (pure)."""
    lines = ["| engine | sessions | base: total % (median, range) | this: total % (median, range) | "
             "this / base, per round | median ratio |", "|---|---:|---:|---:|---|---:|"]
    for engine in dict.fromkeys(r["engine"] for r in rows):
        for sessions in sorted({r["sessions"] for r in rows if r["engine"] == engine}):
            cell = [r for r in rows if r["engine"] == engine and r["sessions"] == sessions]
            mine = {r["round"]: r["outside"]["total_pct"] for r in cell if r["checkout"] != base}
            theirs = {r["round"]: r["outside"]["total_pct"] for r in cell if r["checkout"] == base}
            both = sorted(set(mine) & set(theirs))
            if not both:
                continue
            ratios = [mine[k] / theirs[k] for k in both]

            def spread(values: list[float]) -> str:
                return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

            lines.append(f"| {engine} | {sessions} | {spread(list(theirs.values()))} | {spread(list(mine.values()))} | "
                         f"{', '.join(f'{x:.2f}' for x in ratios)} | **{statistics.median(ratios):.2f}** |")
    return lines


def steps(args: argparse.Namespace, rnd: int) -> list[tuple[int, Path]]:
    """A round's runs: each session count, each checkout in turn (the order rotated by round: A/B, then B/A)."""
    checkouts = [REPO, *args.against]
    order = checkouts[rnd % len(checkouts):] + checkouts[:rnd % len(checkouts)]
    return [(int(s), c) for s in args.sessions.split(",") for c in order]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-observer"))
    parser.add_argument("--engines", default="postgres,mysql")
    parser.add_argument("--sessions", default="1,8,64")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--scale", default="512MiB")
    parser.add_argument("--lock", type=Path, default=None, help="a file to hold an exclusive flock on each round")
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="another checkout (e.g. `git worktree add` of main) run in turn with this one, the "
                             "order rotated each round")
    args = parser.parse_args()
    kinds = {"postgres": Postgres, "mysql": Mysql}
    wanted = args.engines.split(",")
    if any(e not in kinds for e in wanted) or args.seconds < 15:
        raise SystemExit("--engines: postgres and/or mysql; --seconds at least 15")
    base = fresh_directory(args.dir)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    out: dict[str, Any] = {"date": now(), "commit": commit, "args": {k: str(v) for k, v in vars(args).items()},
                           "rows": []}
    try:
        for name in wanted:
            engine = kinds[name](base, args.scale)
            try:
                engine.prepare()
                for rnd in range(args.rounds):
                    with held(args.lock):
                        ran = run_round(engine, name, rnd, args, out)
                    print(f"round {rnd}: {ran} run(s), load average {os.getloadavg()[0]:.1f}", flush=True)
            finally:
                engine.close()
    finally:
        (base / "bench-observer.json").write_text(json.dumps(out, indent=1))
    print(heading(out["date"], f", commit {commit}, {args.scale}, {args.seconds:g} s windows, 1 s interval"))
    print("\n".join(table(out["rows"])))
    if args.against:
        print("\n".join(in_round_ratios(out["rows"], str(args.against[0]))))


def run_round(engine: Any, name: str, rnd: int, args: argparse.Namespace, out: dict[str, Any]) -> int:
    """One round's runs, their rows added to out; how many ran."""
    ran = 0
    for sessions, checkout in steps(args, rnd):
        try:
            row = one(engine, sessions, args.seconds, f"observer-{name}-{sessions}-r{rnd}", checkout)
        except SystemExit as exc:  # one failed run (a loaded host) costs no other its figures
            out.setdefault("failed", []).append({"engine": name, "sessions": sessions,
                                                 "round": rnd, "why": str(exc)[-600:]})
            print(f"{name} {sessions} session(s) failed: {str(exc)[-300:]}", flush=True)
            continue
        row["round"] = rnd
        row["load_average"] = os.getloadavg()[0]
        out["rows"].append(row)
        ran += 1
        o = row["outside"]
        print(f"{name} {sessions} session(s) ({checkout.name}): client {o['client_pct']:.2f}% + server "
              f"{o['server_pct']:.2f}% of a core from outside; dbio says {row['dbio_client_pct']:.2f}"
              f"% + {row['dbio_monitor_pct']:.2f}%", flush=True)
    return ran


if __name__ == "__main__":
    main()
