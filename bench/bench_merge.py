"""Many hosts, one result: three independent instances run with one --start-at, then merged.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_merge.py [--dir /var/tmp/dbio-bench-merge] [--scale 512MiB]
        [--sessions 2] [--seconds 15] [--rounds 1]

Three embedded instances (as three hosts would each have their own; here on one machine and one
disk), each with direct I/O, shared_buffers 128MB and one schema of --scale, are loaded one after
the other. Every round then launches three `dbio run` processes at once, with one --start-at a
little ahead (each process waits for it on its own), and merges their results with `dbio merge`.
Per round: the start skew across the three windows (latest window start minus the earliest, from
the results), how late each release came after the agreed instant, the overlap the merge states,
and the merged reads/s against the sum of the three runs' own reads/s.

Prints a Markdown block for bench/RESULTS.md; raw figures go to bench/results/<date>-merge.json.
Everything it made is removed at the end (--keep keeps it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbio.stats import catalogue  # the figures as the result declares them

from benchkit import DBIO, REPO, RESULTS, dbio, destroy, fresh_directory, heading, now, result_of, standard_options

HOSTS = ("h1", "h2", "h3")
WARMUP = 3.0
START_LEAD = 10.0  # dbio run refuses a --start-at less than this plus the warm-up ahead
LAUNCH_MARGIN = 10.0  # three interpreters starting at once on a shared machine


def launch(options: list[str], sessions: int, seconds: int, label: str, stamp: str) -> subprocess.Popen:
    args = ["run", *options, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", f"{WARMUP:g}s",
            "--label", label, "--start-at", stamp]
    return subprocess.Popen(DBIO + args, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def one_round(options: dict[str, list[str]], base: Path, sessions: int, seconds: int, rnd: int) -> dict[str, Any]:
    """Three runs at one agreed instant, and their merge."""
    window_at = time.time() + START_LEAD + WARMUP + LAUNCH_MARGIN
    stamp = datetime.fromtimestamp(window_at, timezone.utc).isoformat()
    procs = {h: launch(options[h], sessions, seconds, f"{h}-{rnd}", stamp) for h in HOSTS}
    docs, dirs = {}, {}
    for h, proc in procs.items():
        out, err = proc.communicate(timeout=seconds + 600)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        if done.returncode != 0:
            raise SystemExit(f"dbio run on {h} failed ({done.returncode}):\n{out}\n{err}")
        docs[h] = result_of(done)
        dirs[h] = next(ln for ln in out.splitlines() if ln.startswith("result: ")).split(": ", 1)[1]
    merged_dir = base / f"merged-{rnd}"
    dbio("merge", *(str(Path(dirs[h]).parent) for h in HOSTS), "--out", str(merged_dir))
    merged = json.loads((merged_dir / "result.json").read_text())
    opened = {h: epoch(d["timeline"]["window_start"]) for h, d in docs.items()}
    own = {h: catalogue.value(catalogue.figures_of(d), "reads_per_s") for h, d in docs.items()}
    return {"agreed": stamp, "window_start_vs_agreed_s": {h: t - window_at for h, t in opened.items()},
            "start_skew_s": max(opened.values()) - min(opened.values()),
            "released_late_s": {h: d["timeline"].get("released_late_seconds") for h, d in docs.items()},
            "clock_offset_s": {h: d["timeline"].get("clock_offset_seconds") for h, d in docs.items()},
            "window_seconds": {h: catalogue.value(catalogue.figures_of(d), "window_seconds") for h, d in docs.items()},
            "overlap_s": merged["timeline"]["overlap_seconds"], "merged_window_s": merged["timeline"]["window_seconds"],
            "reads_per_s": own, "sum_reads_per_s": sum(own.values()),
            "merged_reads_per_s": catalogue.value(catalogue.figures_of(merged), "reads_per_s"),
            "merge_message": merged["events"][0]["message"]}


def prepare(base: Path, scale: str) -> dict[str, list[str]]:
    """Three instances, each loaded (one after the other: a load is not what this bench measures)."""
    options = {}
    for h in HOSTS:
        options[h] = standard_options(base / h, base / "results", scale)
        dbio("instance", "init", "--data-dir", str(base / h), "--shared-buffers", "128MiB")
        dbio("setup", *options[h])
        print(f"{h}: loaded {scale}", flush=True)
    return options


def markdown(out: dict[str, Any]) -> str:
    rows = out["rounds"]
    med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
    late = [v for r in rows for v in r["released_late_s"].values() if v is not None]
    lines = [heading(out["date"], f", 3 instances of {out['scale']}, {out['sessions']} sessions each, "
                     f"{len(rows)} round(s) of {out['seconds']} s, shared machine"), "",
             "| | value |", "|---|---:|",
             "| start skew across the three windows (latest - earliest window start) | "
             f"{med('start_skew_s') * 1000:.1f} ms |",
             f"| releases after the agreed instant, max | {max(late) * 1000:.1f} ms |" if late else
             "| releases after the agreed instant | - |",
             f"| overlap the merge stated (of a {med('merged_window_s'):.2f} s window) | {med('overlap_s'):.2f} s |"]
    for h in HOSTS:
        lines.append(f"| {h} reads/s (its own result) | {statistics.median(r['reads_per_s'][h] for r in rows):,.0f} |")
    lines += [f"| sum of the three | {med('sum_reads_per_s'):,.0f} |",
              f"| merged total reads/s | {med('merged_reads_per_s'):,.0f} |",
              f"| merged / sum | {statistics.median(r['merged_reads_per_s'] / r['sum_reads_per_s'] for r in rows):.4f} "
              "|"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-merge"))
    parser.add_argument("--scale", default="512MiB")
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    out: dict[str, Any] = {"date": now(), "scale": args.scale, "sessions": args.sessions, "seconds": args.seconds,
                           "rounds": []}
    try:
        options = prepare(base, args.scale)
        for rnd in range(args.rounds):
            out["rounds"].append(one_round(options, base, args.sessions, args.seconds, rnd))
            print(f"round {rnd + 1}: {out['rounds'][-1]}", flush=True)
    finally:
        raw = RESULTS / f"{out['date'][:10]}-merge.json"
        raw.write_text(json.dumps(out, indent=1) + "\n")
        if not args.keep:
            for h in HOSTS:
                if (base / h / "dbio-instance.json").exists():
                    destroy(base / h)
            destroy(base / "nothing", base)
    if out["rounds"]:
        print(markdown(out))
    print(f"raw figures: {raw.relative_to(REPO)}")


if __name__ == "__main__":
    main()
