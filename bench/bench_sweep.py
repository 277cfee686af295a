"""The sweep benchmark: sessions 1..32 at update pct 0 and 20, with the sweep's own overhead.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_sweep.py [--dir /var/tmp/dbio-bench-sweep] [--scale 4GiB] [--seconds 20]

It creates its own embedded instance (direct I/O, shared_buffers 128MB), runs one `dbio sweep`
(which loads the data first), prints the sweep report and a Markdown block for
bench/RESULTS.md, and removes the instance (--keep keeps it and the results).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from benchkit import DBIO, REPO, RESULTS, destroy, fresh_directory, heading, machine, now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-sweep"))
    parser.add_argument("--scale", default="4GiB")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--sessions", default="1,2,4,8,16,32")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    started = time.monotonic()
    try:
        proc = subprocess.run(DBIO + ["sweep", "--data-dir", str(data_dir), "--shared-buffers", "128MiB",
                                      "--scale", args.scale, "--scan-table-size", "0", "--work-unit", "8",
                                      "--run-time", f"{args.seconds}s", "--warmup", f"{args.warmup}s",
                                      "--results-dir", str(base / "results"), "--label", "bench",
                                      "--sessions", args.sessions, "--vary", "update_pct=0,20"],
                              cwd=REPO, text=True, capture_output=True)
        wall = time.monotonic() - started
        print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n")
        if proc.returncode != 0:
            raise SystemExit(f"dbio sweep failed ({proc.returncode})")
        directory = Path(next(ln for ln in proc.stdout.splitlines() if ln.startswith("sweep: ")).split(": ",
                                                                                                       1)[1]).parent
        doc = json.loads((directory / "sweep.json").read_text())
        measured = sum(s.get("window_seconds") or 0 for s in doc["steps"])
        setup = json.loads((directory / doc["steps"][0]["name"] / "result.json").read_text())["setup"]
        report = (directory / "sweep.txt").read_text()
        out = {"date": now(), **machine(), "scale": args.scale,
               "command_wall_seconds": wall, "sweep_wall_seconds": doc["wall_seconds"],
               "measured_seconds": measured, "load_seconds": setup.get("seconds"), "steps": len(doc["steps"])}
        RESULTS.mkdir(exist_ok=True)
        stamp = out["date"][:10]
        (RESULTS / f"{stamp}-sweep.json").write_text(json.dumps(out, indent=1) + "\n")
        (RESULTS / f"{stamp}-sweep.txt").write_text(report)
        overhead = doc["wall_seconds"] - measured
        print(f"\n{heading(out['date'])}\n")
        print(f"- {out['steps']} steps, {args.seconds} s measured each after {args.warmup} s of warm-up: the sweep "
              "took "
              f"{doc['wall_seconds']:.0f} s for {measured:.0f} s of measured windows; overhead {overhead:.0f} s "
              f"({overhead / len(doc['steps']):.1f} s per step, of which {args.warmup} s is the warm-up); the load "
              f"before it took {setup.get('seconds', 0):.1f} s")
        print(f"- report: bench/results/{stamp}-sweep.txt")
    finally:
        if not args.keep:
            destroy(data_dir, base)


if __name__ == "__main__":
    main()
