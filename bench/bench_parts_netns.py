"""Three client hosts, one server: `dbio run --part i/3` from three network namespaces, merged.

Usage (as root, from the repository, after the README's setup command):

    .venv/bin/python bench/bench_parts_netns.py [--dir /var/tmp/dbio-bench-parts] [--scale 512MiB]
        [--sessions 2] [--seconds 15] [--rounds 1]

Three network namespaces (dbio-h1..3, each linked to this host by a veth pair: 10.77.N.2 in the
namespace, 10.77.N.1 here) stand for three client hosts. One embedded PostgreSQL 18 instance (direct
I/O, shared_buffers 128MB, one schema of --scale) listens on the three host-side addresses (an
ALTER SYSTEM of listen_addresses and a pg_hba.conf line that trusts 10.77.0.0/16, both made here).
Each round launches, inside each namespace, `dbio run --dsn host=10.77.N.1 ... --part N/3` with one
--start-at, then `dbio merge`s the three results. The bench itself reads pg_stat_io over the socket
at the agreed window's opening and end, as an account of the server's reads apart from dbio's.

Per round: the start skew the merge reports, the parts' own reads/s summed by the merge, the
server's reads/s as the merge took them (once), the bench's own pg_stat_io reads/s, and what adding
the three parts' results would say (each one's reads are the whole server's).

Prints a Markdown block for bench/RESULTS.md; raw figures go to bench/results/<date>-parts.json.
Everything it made (namespaces, links, the instance) is removed at the end (--keep keeps the instance).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg

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


def watch(conninfo: str, opens: float, closes: float, out: dict[str, Any]) -> None:
    """pg_stat_io at the agreed window's opening and end, read by the bench itself."""
    time.sleep(max(0.0, opens - time.time()))
    out["begin"] = server_reads(conninfo)
    time.sleep(max(0.0, closes - time.time()))
    out["end"] = server_reads(conninfo)


def one_round(base: Path, data_dir: Path, workload: list[str], sessions: int, seconds: int, rnd: int) -> dict[str, Any]:
    conninfo, port = socket_conninfo(data_dir)
    window_at = time.time() + START_LEAD + WARMUP + LAUNCH_MARGIN
    stamp = datetime.fromtimestamp(window_at, timezone.utc).isoformat()
    watched: dict[str, Any] = {}
    watcher = threading.Thread(target=watch, args=(conninfo, window_at, window_at + seconds, watched))
    watcher.start()
    procs = []
    for n in range(1, PARTS + 1):
        dsn = f"host={NET}.{n}.1 port={port} user=dbio dbname=dbio connect_timeout=10"
        args = ["run", "--dsn", dsn, *workload, "-t", str(sessions), "--run-time", f"{seconds}s",
                "--warmup", f"{WARMUP:g}s", "--label", f"h{n}-{rnd}", "--part", f"{n}/{PARTS}", "--start-at", stamp]
        procs.append(subprocess.Popen(["ip", "netns", "exec", f"dbio-h{n}", *DBIO, *args], text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO))
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
    return {"agreed": stamp, "start_skew_s": merged["timeline"]["start_skew_seconds"],
            "overlap_s": merged["timeline"]["overlap_seconds"],
            "own_reads_per_s": counting["own_reads_per_s"], "server_reads_per_s": counting["server_reads_per_s"],
            "merged_reads_per_s": catalogue.value(catalogue.figures_of(merged), "reads_per_s"),
            "difference_pct": counting["difference_pct"], "agree": counting["agree"],
            "pg_stat_io_reads_per_s": (r1 - r0) / (t1 - t0), "pg_stat_io_seconds": t1 - t0,
            "parts_reads_per_s_each": each, "parts_added_reads_per_s": sum(each),
            "sessions_own_per_part": [d["nodes"][0]["normalized"]["end"]["sessions"]["reads"]
                                      - d["nodes"][0]["normalized"]["begin"]["sessions"]["reads"] for d in docs],
            "identity": counting["server"], "merge_said": said.stdout.splitlines()}


def markdown(out: dict[str, Any]) -> str:
    rows = out["rounds"]
    med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
    ratio = statistics.median(r["own_reads_per_s"] / r["pg_stat_io_reads_per_s"] for r in rows)
    lines = [heading(out["date"], f", 1 server, {PARTS} client namespaces, {out['sessions']} sessions each, "
                     f"{out['scale']}, {len(rows)} round(s) of {out['seconds']} s, shared machine"), "",
             "| median over the rounds | value |", "|---|---:|",
             f"| start skew across the three parts (merged timeline) | {med('start_skew_s') * 1000:.1f} ms |",
             f"| parts' own reads/s, summed by the merge | {med('own_reads_per_s'):,.0f} |",
             f"| server's reads/s as the merge took them (once) | {med('server_reads_per_s'):,.0f} |",
             f"| the merge's difference (server - own) | {med('difference_pct'):+.2f}% |",
             f"| pg_stat_io reads/s, read by the bench over the agreed window | {med('pg_stat_io_reads_per_s'):,.0f} |",
             f"| merged own / pg_stat_io | {ratio:.4f} |",
             f"| adding the three parts' results as before (each the whole server's) | "
             f"{med('parts_added_reads_per_s'):,.0f} "
             f"({med('parts_added_reads_per_s') / med('pg_stat_io_reads_per_s'):.2f}x) |"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-parts"))
    parser.add_argument("--scale", default="512MiB")
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "server"
    out: dict[str, Any] = {"date": now(), "scale": args.scale, "sessions": args.sessions, "seconds": args.seconds,
                           "rounds": []}
    options = standard_options(data_dir, base / "results", args.scale)
    workload = [o for o in options if o not in ("--data-dir", str(data_dir), "--shared-buffers", "128MiB")]
    try:
        make_hosts()
        dbio("instance", "init", "--data-dir", str(data_dir), "--shared-buffers", "128MiB")
        dbio("setup", *options)
        out["server"] = listen_on_hosts(data_dir, args.scale)
        print(f"loaded {args.scale}; server: {out['server']}", flush=True)
        for rnd in range(args.rounds):
            out["rounds"].append(one_round(base, data_dir, workload, args.sessions, args.seconds, rnd))
            print(f"round {rnd + 1}: {out['rounds'][-1]}", flush=True)
    finally:
        raw = RESULTS / f"{out['date'][:10]}-parts.json"
        raw.write_text(json.dumps(out, indent=1) + "\n")
        remove_hosts()
        if not args.keep:
            if (data_dir / "dbio-instance.json").exists():
                destroy(data_dir)
            destroy(base / "nothing", base)
    if out["rounds"]:
        print(markdown(out))
    print(f"raw figures: {raw.relative_to(REPO)}")


if __name__ == "__main__":
    main()
