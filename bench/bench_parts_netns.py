"""Three client hosts, one server: `dbio run --part i/3` from three network namespaces, merged.

Usage (as root, from the repository, after the README's setup command):

    .venv/bin/python bench/bench_parts_netns.py [--engine postgres|mariadb] [--dir /var/tmp/dbio-bench-parts]
        [--scale 512MiB] [--sessions 2] [--seconds 15] [--rounds 1]

Three network namespaces (dbio-h1..3, each linked to this host by a veth pair: 10.77.N.2 in the
namespace, 10.77.N.1 here) stand for three client hosts. One embedded PostgreSQL 18 instance (direct
I/O, shared_buffers 128MB, one schema of --scale) listens on the three host-side addresses (an
ALTER SYSTEM of listen_addresses and a pg_hba.conf line that trusts 10.77.0.0/16, both made here).
Each round launches, inside each namespace, `dbio run --dsn host=10.77.N.1 ... --part N/3` with one
--start-at, then `dbio merge`s the three results. The bench itself reads pg_stat_io over the socket
at the agreed window's opening and end, as an account of the server's reads apart from dbio's.

--engine mariadb: one throwaway mariadbd of this machine's binaries instead (bench/scratch_mariadbd.py:
O_DIRECT, a 128 MiB buffer pool, performance_schema on, read-ahead off), listening on the three
host-side addresses at a free port, with a user for the namespaces' clients whose password (made here,
never shown) reaches dbio in MYSQL_PWD. The parts count their own sessions' data-file reads
(performance_schema, per thread); the bench reads Innodb_data_reads and Innodb_buffer_pool_reads over
the socket at the window's opening and end.

Per round: the start skew the merge reports, the parts' own reads/s summed by the merge, the
server's reads/s as the merge took them (once), the bench's own pg_stat_io reads/s, and what adding
the three parts' results would say (each one's reads are the whole server's).

Prints a Markdown block for bench/RESULTS.md; raw figures go to bench/results/<date>-parts.json
(<date>-parts-mariadb.json).
Everything it made (namespaces, links, the instance) is removed at the end (--keep keeps the instance).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
import pymysql
import scratch_mariadbd

from dbio.stats import catalogue

from benchkit import DBIO, REPO, RESULTS, dbio, destroy, fresh_directory, heading, now, result_of, standard_options

PARTS = 3
WARMUP = 3.0
START_LEAD = 10.0  # dbio run refuses a --start-at less than this plus the warm-up ahead
LAUNCH_MARGIN = 12.0  # three interpreters starting at once on a shared machine
NET = "10.77"


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, text=True)


def make_hosts() -> None:
    for n in range(1, PARTS + 1):
        sh("ip", "netns", "add", f"dbio-h{n}")
        sh("ip", "link", "add", f"dbio-v{n}", "type", "veth", "peer", "name", "eth0", "netns", f"dbio-h{n}")
        sh("ip", "addr", "add", f"{NET}.{n}.1/24", "dev", f"dbio-v{n}")
        sh("ip", "link", "set", f"dbio-v{n}", "up")
        sh("ip", "-n", f"dbio-h{n}", "addr", "add", f"{NET}.{n}.2/24", "dev", "eth0")
        sh("ip", "-n", f"dbio-h{n}", "link", "set", "eth0", "up")
        sh("ip", "-n", f"dbio-h{n}", "link", "set", "lo", "up")


def remove_hosts() -> None:
    for n in range(1, PARTS + 1):
        subprocess.run(["ip", "netns", "del", f"dbio-h{n}"], capture_output=True)
        subprocess.run(["ip", "link", "del", f"dbio-v{n}"], capture_output=True)  # gone with its namespace, or now


def socket_conninfo(data_dir: Path) -> tuple[str, int]:
    meta = json.loads((data_dir / "dbio-instance.json").read_text())
    return f"host={data_dir / 'socket'} port={meta['port']} user=dbio dbname=dbio", int(meta["port"])


def listen_on_hosts(data_dir: Path, scale: str) -> dict[str, Any]:
    """The instance listens on the three host-side addresses and trusts the namespaces' clients."""
    conninfo, _ = socket_conninfo(data_dir)
    addresses = ",".join(f"{NET}.{n}.1" for n in range(1, PARTS + 1))
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET listen_addresses = '{addresses}'")
    dbio("instance", "stop", "--data-dir", str(data_dir))
    dbio("instance", "start", "--data-dir", str(data_dir), "--shared-buffers", "128MiB")
    hba = data_dir / "pgdata" / "pg_hba.conf"
    hba.write_text(f"host all dbio {NET}.0.0/16 trust\n" + hba.read_text())
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SELECT pg_reload_conf()")
        return {k: conn.execute(f"SHOW {k}").fetchone()[0]
                for k in ("listen_addresses", "debug_io_direct", "io_method", "shared_buffers", "server_version")}


def server_reads(conninfo: str) -> tuple[float, float]:
    """(when, reads of every process's relation I/O in pg_stat_io)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET stats_fetch_consistency = snapshot")
        t, reads = conn.execute("SELECT date_part('epoch', clock_timestamp()), sum(reads) FROM pg_stat_io "
                                "WHERE object = 'relation'").fetchone()
        return float(t), float(reads)


def watch(read: Any, opens: float, closes: float, out: dict[str, Any]) -> None:
    """The server's reads at the agreed window's opening and end, read by the bench itself: read() gives
    (when, {counter: value})."""
    time.sleep(max(0.0, opens - time.time()))
    out["begin"] = read()
    time.sleep(max(0.0, closes - time.time()))
    out["end"] = read()


class Postgres:
    """The embedded PostgreSQL 18 instance, its clients' DSNs and pg_stat_io."""

    name, counters = "postgres", ("pg_stat_io",)

    def __init__(self, base: Path, scale: str):
        self.data_dir = base / "server"
        options = standard_options(self.data_dir, base / "results", scale)
        self.workload = [o for o in options if o not in ("--data-dir", str(self.data_dir), "--shared-buffers",
                                                         "128MiB")]
        dbio("instance", "init", "--data-dir", str(self.data_dir), "--shared-buffers", "128MiB")
        dbio("setup", *options)
        self.server = listen_on_hosts(self.data_dir, scale)
        self.conninfo, self.port = socket_conninfo(self.data_dir)

    def dsn(self, n: int) -> str:
        return f"host={NET}.{n}.1 port={self.port} user=dbio dbname=dbio connect_timeout=10"

    def env(self) -> dict[str, str]:
        return dict(os.environ)

    def read(self) -> tuple[float, dict[str, float]]:
        t, reads = server_reads(self.conninfo)
        return t, {"pg_stat_io": reads}

    def stop(self, keep: bool) -> None:
        if not keep and (self.data_dir / "dbio-instance.json").exists():
            destroy(self.data_dir)


MARIADB_STATUS = ("Innodb_data_reads", "Innodb_buffer_pool_reads")


class Mariadb:
    """A throwaway mariadbd listening on the host-side addresses, a user for the namespaces' clients."""

    name, counters = "mariadb", MARIADB_STATUS

    def __init__(self, base: Path, scale: str):
        why = scratch_mariadbd.binaries_present()
        if why:
            raise SystemExit(why)
        self.port = free_port()
        addresses = ",".join(f"{NET}.{n}.1" for n in range(1, PARTS + 1))
        self.scratch = scratch_mariadbd.start(base / "server", buffer_pool="128M", extra=(
            "--skip-networking=0", f"--port={self.port}", f"--bind-address={addresses}"))
        try:
            self._prepare(scale, base)
        except BaseException:
            self.scratch.stop()
            raise

    def _prepare(self, scale: str, base: Path) -> None:
        self.password = secrets.token_urlsafe(18)  # only in this process and its children's MYSQL_PWD
        self.scratch.client("-e", f"CREATE USER 'dbio'@'{NET}.%' IDENTIFIED BY '{self.password}'; "
                            f"GRANT ALL ON *.* TO 'dbio'@'{NET}.%'")
        self.workload = ["--engine", "mysql", "--scale", scale, "--scan-table-size", "0", "--work-unit", "8",
                         "--update-pct", "0", "--results-dir", str(base / "results")]
        dbio("setup", "--dsn", self.scratch.dsn() + "&auth=socket", *self.workload)
        self.server = dict(line.split("\t", 1) for line in self.scratch.client(
            "-e", "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('version', 'bind_address', 'port', "
            "'innodb_flush_method', 'innodb_buffer_pool_size', 'performance_schema')").splitlines())

    def dsn(self, n: int) -> str:
        return f"mysql://dbio@{NET}.{n}.1:{self.port}/dbio"

    def env(self) -> dict[str, str]:
        return {**os.environ, "MYSQL_PWD": self.password}

    def read(self) -> tuple[float, dict[str, float]]:
        marks = "', '".join(MARIADB_STATUS)
        conn = pymysql.connect(unix_socket=self.scratch.socket, user="root", autocommit=True)
        try:
            with conn.cursor() as cur:
                t = time.time()
                cur.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ('{marks}')")
                return t, {str(k): float(v) for k, v in cur.fetchall()}
        finally:
            conn.close()

    def stop(self, keep: bool) -> None:
        self.scratch.stop(keep=keep)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_round(base: Path, server: Any, sessions: int, seconds: int, rnd: int) -> dict[str, Any]:
    window_at = time.time() + START_LEAD + WARMUP + LAUNCH_MARGIN
    stamp = datetime.fromtimestamp(window_at, timezone.utc).isoformat()
    watched: dict[str, Any] = {}
    watcher = threading.Thread(target=watch, args=(server.read, window_at, window_at + seconds, watched))
    watcher.start()
    procs = []
    for n in range(1, PARTS + 1):
        args = ["run", "--dsn", server.dsn(n), *server.workload, "-t", str(sessions), "--run-time", f"{seconds}s",
                "--warmup", f"{WARMUP:g}s", "--label", f"h{n}-{rnd}", "--part", f"{n}/{PARTS}", "--start-at", stamp]
        procs.append(subprocess.Popen(["ip", "netns", "exec", f"dbio-h{n}", *DBIO, *args], text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=server.env()))
    docs, dirs = [], []
    for n, proc in enumerate(procs, 1):
        out, err = proc.communicate(timeout=seconds + 600)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        if done.returncode != 0:
            raise SystemExit(f"part {n} failed ({done.returncode}):\n{out}\n{err}")
        docs.append(result_of(done))
        dirs.append(next(ln for ln in out.splitlines() if ln.startswith("result: ")).split(": ", 1)[1])
    watcher.join()
    merged_dir = base / f"merged-{rnd}"
    said = dbio("merge", *(str(Path(d).parent) for d in dirs), "--out", str(merged_dir))
    merged = json.loads((merged_dir / "result.json").read_text())
    [counting] = merged["counting"]
    (t0, r0), (t1, r1) = watched["begin"], watched["end"]
    each = [catalogue.value(catalogue.figures_of(d), "reads_per_s") for d in docs]
    own_counts = [d["nodes"][0]["normalized"]["end"]["sessions"]["reads"]
                  - d["nodes"][0]["normalized"]["begin"]["sessions"]["reads"] for d in docs]
    return {"agreed": stamp, "start_skew_s": merged["timeline"]["start_skew_seconds"],
            "overlap_s": merged["timeline"]["overlap_seconds"],
            "own_reads_per_s": counting["own_reads_per_s"], "server_reads_per_s": counting["server_reads_per_s"],
            "merged_reads_per_s": catalogue.value(catalogue.figures_of(merged), "reads_per_s"),
            "difference_pct": counting["difference_pct"], "agree": counting["agree"],
            "watched_reads": {k: r1[k] - r0[k] for k in server.counters}, "own_reads": sum(own_counts),
            # the first counter is the one the bench compares rates with (pg_stat_io, Innodb_data_reads)
            "watched_reads_per_s": (r1[server.counters[0]] - r0[server.counters[0]]) / (t1 - t0),
            "watched_seconds": t1 - t0,
            "parts_reads_per_s_each": each, "parts_added_reads_per_s": sum(each),
            "sessions_own_per_part": own_counts,
            "identity": counting["server"], "merge_said": said.stdout.splitlines()}


def markdown(out: dict[str, Any]) -> str:
    rows = out["rounds"]
    med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
    watched = "pg_stat_io" if out["engine"] == "postgres" else "Innodb_data_reads"
    ratio = statistics.median(r["own_reads_per_s"] / r["watched_reads_per_s"] for r in rows)
    lines = [heading(out["date"], f", 1 {out['engine']} server, {PARTS} client namespaces, {out['sessions']} "
                     f"sessions each, {out['scale']}, {len(rows)} round(s) of {out['seconds']} s, shared machine"), "",
             "| median over the rounds | value |", "|---|---:|",
             f"| start skew across the three parts (merged timeline) | {med('start_skew_s') * 1000:.1f} ms |",
             f"| parts' own reads/s, summed by the merge | {med('own_reads_per_s'):,.0f} |",
             f"| server's reads/s as the merge took them (once) | {med('server_reads_per_s'):,.0f} |",
             f"| the merge's difference (server - own) | {med('difference_pct'):+.2f}% |",
             f"| {watched} reads/s, read by the bench over the agreed window | {med('watched_reads_per_s'):,.0f} |",
             f"| merged own / {watched} | {ratio:.4f} |",
             f"| adding the three parts' results as before (each the whole server's) | "
             f"{med('parts_added_reads_per_s'):,.0f} "
             f"({med('parts_added_reads_per_s') / med('watched_reads_per_s'):.2f}x) |"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", choices=("postgres", "mariadb"), default="postgres")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-parts"))
    parser.add_argument("--scale", default="512MiB")
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    out: dict[str, Any] = {"date": now(), "engine": args.engine, "scale": args.scale, "sessions": args.sessions,
                           "seconds": args.seconds, "rounds": []}
    server: Any = None
    try:
        make_hosts()
        server = (Postgres if args.engine == "postgres" else Mariadb)(base, args.scale)
        out["server"] = server.server
        print(f"loaded {args.scale}; server: {out['server']}", flush=True)
        for rnd in range(args.rounds):
            out["rounds"].append(one_round(base, server, args.sessions, args.seconds, rnd))
            print(f"round {rnd + 1}: {out['rounds'][-1]}", flush=True)
    finally:
        suffix = "" if args.engine == "postgres" else f"-{args.engine}"
        raw = RESULTS / f"{out['date'][:10]}-parts{suffix}.json"
        raw.write_text(json.dumps(out, indent=1) + "\n")
        remove_hosts()
        if server is not None:
            server.stop(args.keep)
        elif args.engine == "postgres" and (base / "server" / "dbio-instance.json").exists():
            destroy(base / "server")  # its setup failed after the instance was made
        if not args.keep:
            destroy(base / "nothing", base)
    if out["rounds"]:
        print(markdown(out))
    print(f"raw figures: {raw.relative_to(REPO)}")


if __name__ == "__main__":
    main()
