"""The read probe's two ways under one load: a statement per lookup (dbio before issue 39: 25 a second, spread
over it), the same statements back to back, and one batch a second (a prepared UNION ALL, each branch timed
on its own: engines/postgres/read_probe.py), alternating every 2 s on one connection while `dbio run` loads
the embedded PostgreSQL; the single-block reads' latency of each, beside the sessions' own time per read.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_probe_ab.py [--dir /var/tmp/dbio-bench-probe-ab] [--sessions 8] [--seconds 66]

It makes its own embedded instance (direct I/O, shared_buffers 128MB, 512 MiB, index plan, work unit 8,
update pct 0) and removes it at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import time
from pathlib import Path

from psycopg import sql

from dbio.engines.postgres import catalog
from dbio.engines.postgres import read_probe as pg
from dbio.engines.postgres.instance.embedded import EmbeddedInstance
from dbio.engines.postgres.rows import one_row_async

from benchkit import DBIO, REPO, dbio, destroy, fresh_directory, heading, now, result_of, standard_options

ONE = "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT c2 FROM {table} WHERE custid = {key}"
KINDS = ("per lookup, spread", "per lookup, back to back", "batch")
LOOKUPS = 25


async def probe(conninfo: str, rows: int, seconds: int) -> dict[str, list[float]]:
    conn, _ = await pg.connect(conninfo, "index", "bench:probe-ab", [1] * LOOKUPS)
    table = sql.Identifier(catalog.data_schema(1), catalog.DATA_TABLE)
    out: dict[str, list[float]] = {k: [] for k in KINDS}
    rnd = random.Random(7)
    try:
        for second in range(seconds):
            start = time.monotonic()
            kind = KINDS[(second // 2) % len(KINDS)]
            keys = [rnd.randint(1, rows) for _ in range(LOOKUPS)]
            if kind == "batch":
                reads = await pg.read_many(conn, keys)
            else:
                reads = []
                for i, key in enumerate(keys):
                    query = sql.SQL(ONE).format(table=table, key=sql.Literal(key))
                    reads.append(pg.parse_explain((await one_row_async(conn, query))[0]))
                    if kind == KINDS[0]:
                        await asyncio.sleep(max(0.0, start + (i + 1) / LOOKUPS - time.monotonic()))
            out[kind] += [r.read_us for r in reads if r.blocks_read == 1 and r.read_us is not None]
            await asyncio.sleep(max(0.0, start + 1 - time.monotonic()))
    finally:
        await conn.close()
    return out


def quantiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    at = {p: values[min(len(values) - 1, int(p * len(values)))] for p in (0.1, 0.5, 0.9, 0.99)} if values else {}
    return {"n": len(values), **{f"p{round(p * 100)}": v for p, v in at.items()},
            "mean": sum(values) / len(values) if values else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-probe-ab"))
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=66)
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = standard_options(data_dir, base / "results", "512MiB")
    try:
        dbio("setup", *common)
        run = subprocess.Popen(DBIO + ["run", *common, "-t", str(args.sessions), "--run-time", f"{args.seconds + 12}s",
                                       "--warmup", "3s", "--label", "probe-ab"],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(10)  # connected, warmed up, inside the window
        rows = 65536  # 512 MiB of 8 KiB rows
        out = asyncio.run(probe(EmbeddedInstance(data_dir).conninfo(), rows, args.seconds))
        done_out, _ = run.communicate()
        doc = result_of(subprocess.CompletedProcess(run.args, run.returncode, done_out, ""))
        reads_per_s = doc["figures"]["load_profile"]["physical_reads_per_s"]
        summary = {kind: quantiles(values) for kind, values in out.items()}
        (base / "bench-probe-ab.json").write_text(json.dumps({"date": now(), "summary": summary,
                                                              "reads_per_s": reads_per_s}, indent=1))
        print(heading(now(), f", {args.sessions} sessions, {reads_per_s:,.0f} reads/s: the sessions' "
                             f"{args.sessions * 1e6 / reads_per_s:,.0f} us of a session per read"))
        print("| probe | single reads | p10 us | p50 us | p90 us | p99 us | mean us |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for kind, q in summary.items():
            print(f"| {kind} | {q['n']} | {q.get('p10', 0):,.0f} | {q.get('p50', 0):,.0f} | {q.get('p90', 0):,.0f} | "
                  f"{q.get('p99', 0):,.0f} | {q['mean']:,.0f} |")
    finally:
        destroy(data_dir, base)


if __name__ == "__main__":
    main()
