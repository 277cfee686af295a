"""dbio run --baseline at several session counts: the database's efficiency against fio, from dbio itself.

Usage (from the repository, after the README's setup command; needs fio, Debian package fio):

    .venv/bin/python bench/bench_baseline.py [--dir /var/tmp/dbio-bench-baseline] [--scale 2GiB] [--sessions 1,2,4]

It creates its own embedded instance (direct I/O, shared_buffers 128MB), loads the data set, and
runs `dbio run --baseline` --rounds times at each session count: fio reads the instance's own
data files right before each run (the result records both). It prints, per session count, the
medians of the efficiency figures the result declares (reads/s, average read and host CPU per
read, database / fio) and the wall time the baseline adds as a share of the run's measured
window, then a Markdown block for bench/RESULTS.md; raw figures go to <dir>/bench-baseline.json.
The instance is removed at the end (--keep keeps it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
from pathlib import Path

from dbio.stats import catalogue  # the figures as the result declares them

from benchkit import dbio, destroy, fresh_directory, heading, now, result_of, standard_options

EFFICIENCY = ("efficiency_reads", "efficiency_latency", "efficiency_cpu", "efficiency_reader_cpu", "efficiency_ceiling",
              "raw_drift")


def one_run(common: list[str], sessions: int, seconds: int, label: str) -> dict:
    doc = result_of(dbio("run", *common, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", "3s",
                         "--label", label, "--baseline"))
    f = catalogue.figures_of(doc)
    row = {"sessions": sessions, **{name: catalogue.value(f, name) for name in EFFICIENCY},
           "reads_per_s": catalogue.value(f, "reads_per_s"), "raw_reads_per_s": catalogue.value(f, "raw_reads_per_s"),
           "baseline_seconds": doc["baseline"]["seconds"], "window_seconds": catalogue.value(f, "window_seconds")}
    row["added_share"] = row["baseline_seconds"] / row["window_seconds"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-baseline"))
    parser.add_argument("--scale", default="2GiB")
    parser.add_argument("--sessions", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if shutil.which("fio") is None:
        raise SystemExit("fio is not installed: install the fio package (apt-get install fio)")
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = standard_options(data_dir, base / "results", args.scale)
    out: dict = {"date": now(), "scale": args.scale, "seconds": args.seconds, "rows": []}
    try:
        dbio("instance", "init", "--data-dir", str(data_dir), "--shared-buffers", "128MiB")  # its options only
        dbio("setup", *common)
        for rnd in range(args.rounds):
            for sessions in [int(s) for s in args.sessions.split(",")]:
                row = one_run(common, sessions, args.seconds, f"baseline-r{rnd}-s{sessions}")
                out["rows"].append({"round": rnd, **row})
                print(f"round {rnd} sessions {sessions}: dbio {row['reads_per_s']:,.0f} reads/s, fio "
                      f"{row['raw_reads_per_s']:,.0f}: efficiency {row['efficiency_reads']:.2f}, latency x"
                      f"{row['efficiency_latency'] or float('nan'):.2f}, CPU/read x{row['efficiency_cpu'] or 0:.2f}"
                      f", readers' CPU/read x{row['efficiency_reader_cpu'] or float('nan'):.2f}"
                      f", fio after/before x{row['raw_drift'] or float('nan'):.2f}"
                      f" (baseline added {100 * row['added_share']:.0f}% of the window)", flush=True)
    finally:
        (base / "bench-baseline.json").write_text(json.dumps(out, indent=1))
        if not args.keep:
            destroy(data_dir)
    print()
    print(markdown(out))


def markdown(out: dict) -> str:
    lines = [heading(out["date"], f", {out['scale']}, {out['seconds']} s runs, `dbio run --baseline`"), "",
             "| sessions | dbio reads/s | fio reads/s | efficiency (min-max) | avg read db/fio | host CPU/read db/fio "
             "| readers' own CPU/read db/fio | db / device ceiling | fio after / before (min-max) | baseline wall time "
             "/ window |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows = out["rows"]
    for sessions in sorted({r["sessions"] for r in rows}):
        mine = [r for r in rows if r["sessions"] == sessions]

        def med(key: str) -> float:
            values = [r[key] for r in mine if r.get(key) is not None]
            return statistics.median(values) if values else float("nan")

        eff = [r["efficiency_reads"] for r in mine]
        drift = [r["raw_drift"] for r in mine if r.get("raw_drift") is not None] or [float("nan")]
        lines.append(f"| {sessions} | {med('reads_per_s'):,.0f} | {med('raw_reads_per_s'):,.0f} | "
                     f"**{med('efficiency_reads'):.2f}** ({min(eff):.2f}-{max(eff):.2f}) | "
                     f"{med('efficiency_latency'):.2f} | {med('efficiency_cpu'):.2f} | "
                     f"{med('efficiency_reader_cpu'):.2f} | "
                     f"{med('efficiency_ceiling'):.2f} | "
                     f"{med('raw_drift'):.2f} ({min(drift):.2f}-{max(drift):.2f}) | {100 * med('added_share'):.0f}% |")
    lines += ["", f"Medians of {len(rows) // max(1, len({r['sessions'] for r in rows}))} runs per session count; "
                  "each run's fio baseline ran on the instance's own data files, half right before it and half right "
                  "after (pooled); host CPU is busy time counted as elapsed less idle, I/O wait and steal; readers' "
                  "own CPU is "
                  "the sessions' processes' against fio's jobs' while they read."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
