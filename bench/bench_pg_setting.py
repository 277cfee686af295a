"""One PostgreSQL setting, two values, in alternated pairs: does it change reads/s or CPU per read?

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_pg_setting.py --setting huge_pages --values off,on --reserve-hugepages 100 \
        [--dir /var/tmp/dbio-bench-setting] [--scale 2GiB] [--sessions 1,2,4] [--rounds 3] [--seconds 20]

It creates its own embedded instance (direct I/O, shared_buffers 128MB, the benches' common
workload: one schema, work unit 8, update pct 0), loads it, then for each round runs every
session count with each value (the order of the values alternates between rounds, so a drift of
the machine does not favour one), passing the value as --pg-setting (dbio restarts the server when
it changes). It prints the medians per value and the medians of the per-round ratios (second
value / first) of reads/s, reads per host-CPU-second and reads per DB-CPU-second (the sessions'
own CPU, which other work on the host moves least), and keeps the raw rows in <dir>/bench.json.
--reserve-hugepages N (root) sets vm.nr_hugepages to N for the bench and back to what it was at
the end: huge_pages=on needs them. The instance is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from dbio.stats import catalogue

from benchkit import dbio, destroy, fresh_directory, heading, now, result_of, standard_options

FIGURES = ("reads_per_s", "reads_per_host_cpu_second", "reads_per_db_cpu_second")
HUGEPAGES = Path("/proc/sys/vm/nr_hugepages")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setting", required=True)
    parser.add_argument("--values", required=True, help="two values, comma-separated: the first is the reference")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-setting"))
    parser.add_argument("--scale", default="2GiB")
    parser.add_argument("--sessions", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--reserve-hugepages", type=int, default=None)
    args = parser.parse_args()
    values = args.values.split(",")
    if len(values) != 2:
        raise SystemExit("--values takes two values, e.g. off,on")
    if args.reserve_hugepages is not None and os.geteuid() != 0:
        raise SystemExit("--reserve-hugepages needs root")
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = standard_options(data_dir, base / "results", args.scale)
    reserved_before = HUGEPAGES.read_text().strip()
    out: dict = {"date": now(), "setting": args.setting, "values": values, "scale": args.scale,
                 "seconds": args.seconds, "rows": []}
    try:
        if args.reserve_hugepages is not None:
            HUGEPAGES.write_text(f"{args.reserve_hugepages}\n")
        dbio("instance", "init", "--data-dir", str(data_dir), "--shared-buffers", "128MiB")
        dbio("setup", *common)
        for rnd in range(args.rounds):
            for value in values if rnd % 2 == 0 else values[::-1]:
                for sessions in [int(s) for s in args.sessions.split(",")]:
                    doc = result_of(dbio("run", *common, "-t", str(sessions), "--run-time", f"{args.seconds}s",
                                         "--warmup", "3s", "--pg-setting", f"{args.setting}={value}",
                                         "--label", f"{args.setting}-{value}-s{sessions}-r{rnd}"))
                    f = catalogue.figures_of(doc)
                    shown = ((doc.get("environment") or {}).get("server") or {}).get("settings") or {}
                    row = {"round": rnd, "value": value, "sessions": sessions,
                           "server_says": {k: (shown.get(k) or {}).get("setting") for k in
                                           (args.setting, f"{args.setting}_status") if k in shown},
                           **{name: catalogue.value(f, name) for name in FIGURES}}
                    out["rows"].append(row)
                    print(json.dumps(row), flush=True)
    finally:
        (base / "bench.json").write_text(json.dumps(out, indent=1))
        destroy(data_dir)
        if args.reserve_hugepages is not None:
            HUGEPAGES.write_text(f"{reserved_before}\n")
    print()
    print(markdown(out))


def markdown(out: dict) -> str:
    first, second = out["values"]
    lines = [heading(out["date"], f", {out['scale']}, {out['seconds']} s runs, {out['setting']} {first} vs {second}"),
             "", f"| sessions | reads/s {first} / {second} | reads/s ratio | reads per host-CPU-s ratio | "
                 "reads per DB-CPU-s ratio |", "|---:|---:|---:|---:|---:|"]
    rows = out["rows"]
    for sessions in sorted({r["sessions"] for r in rows}):
        def pick(value: str, rnd: int) -> dict | None:
            return next((r for r in rows if (r["sessions"], r["value"], r["round"]) == (sessions, value, rnd)), None)

        ratios: dict[str, list[float]] = {name: [] for name in FIGURES}
        for rnd in sorted({r["round"] for r in rows}):
            a, b = pick(first, rnd), pick(second, rnd)
            for name in FIGURES:
                if a and b and a[name] and b[name]:
                    ratios[name].append(b[name] / a[name])
        med = {v: statistics.median([r["reads_per_s"] for r in rows if (r["sessions"], r["value"]) == (sessions, v)])
               for v in (first, second)}
        shown = {name: f"{statistics.median(x):.2f} ({', '.join(f'{v:.2f}' for v in x)})" if x else "-"
                 for name, x in ratios.items()}
        lines.append(f"| {sessions} | {med[first]:,.0f} / {med[second]:,.0f} | {shown['reads_per_s']} | "
                     f"{shown['reads_per_host_cpu_second']} | {shown['reads_per_db_cpu_second']} |")
    lines += ["", f"Ratios are {second} / {first} per round (medians, then each round's); values alternated in order "
                  "between rounds."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
