"""The slice call's client CPU alone: 64 connections calling one prepared statement back to back through
engines/postgres/lean_call.py (issue 39's floor at 64 sessions).

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_lean_call.py [--dir /var/tmp/dbio-bench-lean-call] [--calls 150] [--rounds 5] \\
        [--against CHECKOUT]

It makes an embedded instance of its own (`dbio instance init`, removed at the end). Each round runs this
checkout's lean_call and, with --against, another checkout's (a `git worktree add` of an earlier commit), in turn,
the order rotated, each in a process of its own importing its own checkout: 64 connections, each calling a
statement of the slice call's kinds of parameter (bigint, integer, double, a 2 ms pg_sleep so that the server
answers a little later, as a slice does) --calls times; the figure is the process's CPU time over the calls
(time.process_time) per call. With hot caches and calls back to back this is the call's least cost: in a run
each session calls once a second, and what it costs there is bench_observer.py's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from benchkit import REPO, dbio, destroy, fresh_directory, heading, now

CONNECTIONS = 64
QUERY = "SELECT %(a)s::bigint, %(b)s::integer, %(c)s::double precision, pg_sleep(%(s)s::float8)"
WORKER = """
import asyncio, sys, time
sys.path.insert(0, sys.argv[1])
import psycopg
from dbio.engines.postgres import lean_call

async def session(conn, n):
    for i in range(n):
        await lean_call.one_row(conn, {query!r}, {{"a": i, "b": 7, "c": 0.5, "s": 0.002}}, binary=True)

async def go(conninfo, n):
    conns = [await psycopg.AsyncConnection.connect(conninfo, autocommit=True) for _ in range({connections})]
    await asyncio.gather(*(session(c, 5) for c in conns))  # prepared, warmed
    began = time.process_time()
    await asyncio.gather(*(session(c, n) for c in conns))
    used = time.process_time() - began
    for c in conns:
        await c.close()
    return used / ({connections} * n)

print(asyncio.run(go(sys.argv[2], int(sys.argv[3]))) * 1e6)
""".format(query=QUERY, connections=CONNECTIONS)


def one(checkout: Path, conninfo: str, calls: int) -> float:
    proc = subprocess.run([sys.executable, "-c", WORKER, str(checkout), conninfo, str(calls)], capture_output=True,
                          text=True, cwd=checkout)
    if proc.returncode != 0:
        raise SystemExit(f"the calls failed in {checkout}:\n{proc.stderr}")
    return float(proc.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-lean-call"))
    parser.add_argument("--calls", type=int, default=150, help="calls per connection a round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, run in turn with this one each round")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "pg"
    began = now()
    try:
        dbio("instance", "init", "--data-dir", str(data_dir))
        sys.path.insert(0, str(REPO))
        from dbio.engines.postgres.instance.embedded import EmbeddedInstance

        conninfo = EmbeddedInstance(data_dir).conninfo()
        checkouts = [REPO] + ([args.against.resolve()] if args.against else [])
        figures: dict[Path, list[float]] = {c: [] for c in checkouts}
        ratios: list[float] = []
        for rnd in range(args.rounds):
            order = checkouts[rnd % len(checkouts):] + checkouts[:rnd % len(checkouts)]
            got = {c: one(c, conninfo, args.calls) for c in order}
            for c, us in got.items():
                figures[c].append(us)
            if args.against:
                ratios.append(got[REPO] / got[checkouts[1]])
            print(f"round {rnd}: " + ", ".join(f"{c.name} {us:.1f} us" for c, us in got.items()), flush=True)
    finally:
        destroy(data_dir, base)
    print(heading(began))
    for c, values in figures.items():
        print(f"- {c}: {statistics.median(values):.1f} us of client CPU a call "
              f"({min(values):.1f}-{max(values):.1f}, {len(values)} rounds of {CONNECTIONS} x {args.calls} calls)")
    if ratios:
        print(f"- this / against, per round: {', '.join(f'{r:.2f}' for r in ratios)} "
              f"(median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
