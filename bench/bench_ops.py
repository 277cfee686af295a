"""dbio ops as the white paper times maintenance: crash recovery seconds per GB of WAL at several
WAL sizes, and a base backup's MB/s against the device's sequential read rate.

Usage (from the repository, after the README's setup command; --baseline needs fio):

    .venv/bin/python bench/bench_ops.py [--dir /var/tmp/dbio-bench-ops] [--scale 256MiB]
                                        [--wal 32MB,64MB,128MB] [--rounds 2]

It creates its own embedded instance (direct I/O, shared_buffers 128MB), loads the data set,
then for each round: `dbio ops recovery --wal W` for each WAL size (sizes in turn, so that a
change of the storage's speed shows in every size rather than in one), and `dbio ops backup
--target DIR --baseline` (fio's sequential read of the data files, then the backup; the backup
is removed after). It prints the medians and a Markdown block for bench/RESULTS.md; raw
figures go to <dir>/bench-ops.json. The instance is removed at the end (--keep keeps it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
from pathlib import Path

from dbio.stats import catalogue  # the figures as the operation's result declares them
from dbio.stats.ops import fit_line

from benchkit import dbio, destroy, fresh_directory, heading, now, result_of

RECOVERY = ("wal_replayed_bytes", "recovery_seconds", "redo_seconds", "recovery_seconds_per_gb",
            "redo_seconds_per_gb", "checkpoints_during")
BACKUP = ("ops_seconds", "ops_bytes", "ops_mb_per_s", "sequential_read_mb_per_s", "backup_share_of_sequential")


def values(doc: dict, names: tuple[str, ...]) -> dict:
    return {name: catalogue.ops_figure(name).value(doc["figures"]) for name in names}


def recovery(common: list[str], wal: str) -> dict:
    doc = result_of(dbio("ops", "recovery", "--wal", wal, *common))
    return {"wal": wal, **values(doc, RECOVERY), "devices": doc["figures"]["devices"]}


def backup(common: list[str], target: Path) -> dict:
    doc = result_of(dbio("ops", "backup", "--target", str(target), "--baseline", *common))
    shutil.rmtree(target)
    return {**values(doc, BACKUP), "devices": doc["figures"]["devices"]}


def median(rows: list[dict], key: str) -> float | None:
    present = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(present) if present else None


def markdown(raw: dict) -> str:
    lines = [heading(raw["date"], ", shared with other work, one virtual disk"), "",
             f"`{raw['command']}`", "",
             "| WAL asked | WAL replayed MB | recovery s | redo s | recovery s/GB | redo s/GB | rounds |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for wal in raw["wal_sizes"]:
        rows = [r for r in raw["recovery"] if r["wal"] == wal]
        lines.append(f"| {wal} | {median(rows, 'wal_replayed_bytes') / 1e6:,.0f} | "
                     f"{median(rows, 'recovery_seconds'):.1f} "
                     f"| {median(rows, 'redo_seconds'):.1f} | {median(rows, 'recovery_seconds_per_gb'):,.0f} "
                     f"| {median(rows, 'redo_seconds_per_gb'):,.0f} | {len(rows)} |")
    fit = fit_line([(r["wal_replayed_bytes"] / 1e9, r["recovery_seconds"]) for r in raw["recovery"]
                    if r.get("wal_replayed_bytes") and r.get("recovery_seconds") is not None])
    if fit:
        lines += ["", f"Least squares over every recovery: seconds = {fit[0]:.2f} + {fit[1]:,.1f} x GB of WAL replayed "
                      "(the fixed part is the start and the end-of-recovery checkpoint)."]
    b = raw["backup"]
    lines += ["", "| backup MB | seconds | backup MB/s | fio sequential MB/s | backup / sequential | rounds |",
              "|---:|---:|---:|---:|---:|---:|",
              f"| {median(b, 'ops_bytes') / 1e6:,.0f} | {median(b, 'ops_seconds'):.2f} | "
              f"{median(b, 'ops_mb_per_s'):,.0f} "
              f"| {median(b, 'sequential_read_mb_per_s'):,.0f} | {median(b, 'backup_share_of_sequential'):.2f} "
              f"| {len(b)} |"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-ops"))
    parser.add_argument("--scale", default="256MiB")
    parser.add_argument("--wal", default="32MB,64MB,128MB")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir, results = base / "instance", base / "results"
    common = ["--data-dir", str(data_dir), "--shared-buffers", "128MiB", "--scale", args.scale,
              "--scan-table-size", "0", "--results-dir", str(results)]
    sizes = args.wal.split(",")
    raw = {"date": now(), "command": f"bench/bench_ops.py --scale {args.scale} --wal {args.wal} --rounds {args.rounds}",
           "wal_sizes": sizes, "recovery": [], "backup": []}
    try:
        dbio("setup", *common)
        for n in range(args.rounds):
            for wal in sizes:
                raw["recovery"].append(recovery(common, wal))
                print(json.dumps({k: v for k, v in raw["recovery"][-1].items() if k != "devices"}), flush=True)
            raw["backup"].append(backup(common, base / f"backup-{n}"))
            print(json.dumps({k: v for k, v in raw["backup"][-1].items() if k != "devices"}), flush=True)
    finally:
        (base / "bench-ops.json").write_text(json.dumps(raw, indent=1))
        if not args.keep:
            destroy(data_dir)
    print(markdown(raw))


if __name__ == "__main__":
    main()
