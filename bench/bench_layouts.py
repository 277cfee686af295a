"""Layouts through dbio sweep: the data set on 1 directory vs split over 2 (data_dirs), and the WAL
in the data directory vs in a directory of its own (wal_dir), from dbio's own layout sweeps.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_layouts.py [--dir /var/tmp/dbio-bench-layouts] [--scale 1GiB] [--rounds 3]

It creates its own embedded instance (direct I/O, shared_buffers 128MB) and, --rounds times:
- `dbio sweep --vary data_dirs=D1,D1:D2` at 4 sessions, index plan, update pct 0: one directory,
  then the one table split into a part per directory (each step loads the tables again);
- `dbio sweep --vary wal_dir=none,W` at 4 sessions, update pct 100 at work unit 1 (one read and one
  write per transaction): the WAL in the data directory, then moved to W.
Each round's two steps run minutes apart (a pair), in the other order every other round (a sweep
runs its values in the order given, and the second step of a pair inherits the first's checkpoints
and freshly written files); it prints each step's figures, the medians and
the medians of the pairs' ratios, then a Markdown block for bench/RESULTS.md; raw figures go to
<dir>/bench-layouts.json. The instance is removed at the end (--keep keeps it).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from dbio.stats import catalogue  # the figures as the result declares them

from benchkit import dbio, destroy, fresh_directory, heading, now, standard_options

FIGURES = ("reads_per_s", "avg_read_us", "updates_per_s", "avg_wal_sync_us", "avg_wal_write_us",
           "wal_writes_per_commit", "reads_per_statement", "host_busy_pct", "db_cpu_us_per_read")


def sweep(common: list[str], *extra: str) -> list[dict]:
    """One sweep's steps: the layout value and the declared figures of each."""
    proc = dbio("sweep", *common, *extra)
    return steps_of(Path(next(ln for ln in proc.stdout.splitlines() if ln.startswith("sweep: ")).split(": ", 1)[1]))


def steps_of(path: Path) -> list[dict]:
    doc = json.loads(path.read_text())
    rows = []
    for step in doc["steps"]:
        result = json.loads((path.parent / step["name"] / "result.json").read_text())
        f = catalogue.figures_of(result)
        rows.append({"values": step["values"], **{name: catalogue.value(f, name) for name in FIGURES}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-layouts"))
    parser.add_argument("--scale", default="1GiB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--report-only", action="store_true", help="read the sweeps an earlier run left in --dir")
    args = parser.parse_args()
    if args.report_only:
        print(markdown(reread(args.dir)))
        return
    base = fresh_directory(args.dir)
    data_dir, d1, d2, wal = base / "instance", base / "d1", base / "d2", base / "wal"
    common = [*standard_options(data_dir, base / "results", args.scale), "--sessions", "4",
              "--run-time", f"{args.seconds}s", "--warmup", "3s"]
    out: dict = {"date": now(), "scale": args.scale, "seconds": args.seconds, "data": [], "wal": []}
    try:
        dbio("instance", "init", "--data-dir", str(data_dir), "--shared-buffers", "128MiB")  # its options only
        for rnd in range(args.rounds):
            flip = (lambda a, b: f"{b},{a}") if rnd % 2 else (lambda a, b: f"{a},{b}")
            for row in sweep(common, "--vary", f"data_dirs={flip(d1, f'{d1}:{d2}')}", "--label", f"data-r{rnd}"):
                out["data"].append({"round": rnd, **row})
                print(f"round {rnd} data_dirs {row['values']['data_dirs']}: {row['reads_per_s']:,.0f} reads/s, "
                      f"{row['avg_read_us']:,.0f} us", flush=True)
            for row in sweep(common, "--update-pct", "100", "--work-unit", "1",
                             "--vary", f"wal_dir={flip('none', wal)}", "--label", f"wal-r{rnd}"):
                out["wal"].append({"round": rnd, **row})
                print(f"round {rnd} wal_dir {row['values']['wal_dir']}: {row['updates_per_s']:,.0f} commits/s, "
                      f"WAL sync {row['avg_wal_sync_us'] or float('nan'):,.0f} us, "
                      f"{row['wal_writes_per_commit'] or float('nan'):.2f} WAL writes/commit", flush=True)
    finally:
        (base / "bench-layouts.json").write_text(json.dumps(out, indent=1))
        if not args.keep:
            destroy(data_dir)
    print()
    print(markdown(out))


def reread(base: Path) -> dict:
    """An earlier run's figures from its sweeps' results (bench-layouts.json's date and settings)."""
    out = json.loads((base / "bench-layouts.json").read_text())
    out["data"], out["wal"] = [], []
    for kind in ("data", "wal"):
        for rnd, sweep_json in enumerate(sorted((base / "results").glob(f"*-sweep-{kind}-r*/sweep.json"))):
            out[kind] += [{"round": rnd, **row} for row in steps_of(sweep_json)]
    return out


def _median(rows: list[dict], key: str) -> float:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else float("nan")


def _second(row: dict) -> bool:
    """Whether a step has the layout a pair's ratio puts on top: 2 directories, or the WAL's own one."""
    values = row["values"]
    return len(values["data_dirs"].split(":")) == 2 if "data_dirs" in values else values["wal_dir"] != "none"


def _pairs(rows: list[dict], key: str) -> list[float]:
    """Each round's (2 directories / 1) or (WAL's own directory / data directory) for one figure,
    whichever order the round ran them in."""
    ratios = []
    for rnd in sorted({r["round"] for r in rows}):
        pair = [r for r in rows if r["round"] == rnd]
        first, second = [r for r in pair if not _second(r)], [r for r in pair if _second(r)]
        if len(first) == len(second) == 1 and first[0].get(key) and second[0].get(key) is not None:
            ratios.append(second[0][key] / first[0][key])
    return ratios


def _pair_ratio(rows: list[dict], key: str) -> str:
    """The median over rounds of (second layout / first layout), and the pairs' own ratios."""
    ratios = _pairs(rows, key)
    if not ratios:
        return "-"
    return f"x{statistics.median(ratios):.2f} (pairs {', '.join(f'{r:.2f}' for r in ratios)})"


def markdown(out: dict) -> str:
    lines = [heading(out["date"], f", {out['scale']}, {out['seconds']} s steps at 4 sessions, `dbio sweep`"), "",
             "| layout | reads/s | avg read us | reads/statement | DB CPU us/read | host CPU % |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, n in (("data: 1 directory", 1), ("data: 2 directories (2 parts)", 2)):
        mine = [r for r in out["data"] if len(r["values"]["data_dirs"].split(":")) == n]
        lines.append(f"| {label} | {_median(mine, 'reads_per_s'):,.0f} | {_median(mine, 'avg_read_us'):,.0f} | "
                     f"{_median(mine, 'reads_per_statement'):.2f} | {_median(mine, 'db_cpu_us_per_read'):.1f} | "
                     f"{_median(mine, 'host_busy_pct'):.0f} |")
    lines += ["", "2 directories / 1, median of the rounds' pairs: reads/s "
                  f"{_pair_ratio(out['data'], 'reads_per_s')}, avg read {_pair_ratio(out['data'], 'avg_read_us')}.", "",
              "| WAL | commits/s | avg WAL sync us | avg WAL write us | WAL writes/commit | reads/statement |",
              "|---|---:|---:|---:|---:|---:|"]
    for label, value in (("in the data directory", "none"), ("its own directory", None)):
        mine = [r for r in out["wal"] if (r["values"]["wal_dir"] == "none") == (value == "none")]
        lines.append(f"| {label} | {_median(mine, 'updates_per_s'):,.0f} | {_median(mine, 'avg_wal_sync_us'):,.0f} | "
                     f"{_median(mine, 'avg_wal_write_us'):,.0f} | {_median(mine, 'wal_writes_per_commit'):.2f} | "
                     f"{_median(mine, 'reads_per_statement'):.2f} |")
    lines += ["", f"own directory / data directory, median of the rounds' pairs: commits/s "
                  f"{_pair_ratio(out['wal'], 'updates_per_s')}, WAL sync "
                  f"{_pair_ratio(out['wal'], 'avg_wal_sync_us')}."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
