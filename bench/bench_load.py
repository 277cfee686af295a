"""Load rate in both schema models: empty database to loaded, indexed, analysed, in MB/s.

    .venv/bin/python bench/bench_load.py                          # 2 GiB per model, 3 rounds
    .venv/bin/python bench/bench_load.py --size 8GiB --rounds 1

One embedded instance; each round loads the single-schema model (one table of --size, one stream:
COPY FREEZE needs the table's own transaction) and the multi-schema model (--schemas tables
adding up to --size, load_parallel_degree streams) into their own databases, emptied with
`dbio teardown` before each load, alternating which goes first. The rate is the one `dbio setup` prints for the load
itself (create,
COPY FREEZE, index, ANALYZE, record: empty to ready); the whole command, with the instance's
restarts into and out of its load profile, is given beside it.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import RESULTS, destroy, dbio, fresh_directory, machine, now  # noqa: E402
from dbio.units import parse_size  # noqa: E402

LINE = re.compile(r"loaded .* in ([\d.]+) (m?s): .* \(load ([\d.]+) s, index ([\d.]+) s, analyze ([\d.]+) s")


def one_load(common: list[str], db: str, spec: list[str], size: int) -> dict:
    dbio("teardown", *common[:4], "--dbname", db)  # the previous round's tables: the load starts from empty
    t0 = time.monotonic()
    proc = dbio("setup", *common, "--dbname", db, *spec)
    whole = time.monotonic() - t0
    m = LINE.search(proc.stdout + proc.stderr)
    if m is None:
        raise SystemExit(f"no load line in the output of dbio setup:\n{proc.stdout}\n{proc.stderr}")
    seconds = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    return {"seconds": seconds, "mb_per_s": size / 1e6 / seconds, "whole_seconds": whole,
            "whole_mb_per_s": size / 1e6 / whole, "load": float(m.group(3)), "index": float(m.group(4)),
            "analyze": float(m.group(5))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="2GiB")
    parser.add_argument("--schemas", type=int, default=4)
    parser.add_argument("--degree", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-load"))
    args = parser.parse_args()
    size = parse_size(args.size)
    models = {"single": ["--scale", args.size, "--schemas", "1"],
              "multi": ["--scale", f"{size // args.schemas // 2**20}MiB", "--schemas", str(args.schemas),
                        "--load-parallel-degree", str(args.degree)]}
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = ["--data-dir", str(data_dir), "--shared-buffers", "128MiB", "--scan-table-size", "0"]  # teardown: 4 first
    out = {"date": now(), "machine": machine(), "command": " ".join(sys.argv), "size": size, "rows": []}
    try:
        dbio("instance", "init", "--data-dir", str(data_dir), "--shared-buffers", "128MiB")
        for rnd in range(args.rounds):
            for model in (list(models) if rnd % 2 == 0 else list(reversed(models))):
                row = {"round": rnd, "model": model, **one_load(common, f"load_{model}", models[model], size)}
                out["rows"].append(row)
                print(f"round {rnd} {model}: {row['mb_per_s']:.0f} MB/s ({row['seconds']:.1f} s: load {row['load']} s, "
                      f"index {row['index']} s, analyze {row['analyze']} s, summed over streams); whole command "
                      f"{row['whole_mb_per_s']:.0f} MB/s", flush=True)
    finally:
        destroy(data_dir, base)
    for model in models:
        rates = [r["mb_per_s"] for r in out["rows"] if r["model"] == model]
        whole = [r["whole_mb_per_s"] for r in out["rows"] if r["model"] == model]
        out.setdefault("medians", {})[model] = {"mb_per_s": statistics.median(rates),
                                                "whole_mb_per_s": statistics.median(whole)}
        print(f"{model}: median {statistics.median(rates):.0f} MB/s (min {min(rates):.0f}, max {max(rates):.0f}); "
              f"whole command {statistics.median(whole):.0f} MB/s")
    path = RESULTS / f"{out['date'][:10]}-load.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"raw figures: {path}")


if __name__ == "__main__":
    main()
