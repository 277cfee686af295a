"""A forked dbio's HTML report (tests/forked_dbio.py): its CPU with the parent's matplotlib caches cold (dbio and
matplotlib imported only) and warm (one report drawn in the parent first, as warm() now does).

Each round starts two fresh interpreters, one per case, in the order A B or B A (alternating); each forks
`dbio report --format html` of the same fixture result FORKS times and reports the children's CPU
(user + system) and wall per fork, medians. Run from the repository's root:

    flock /work/bench.lock .venv/bin/python bench/bench_forked_report.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "tests" / "fixtures" / "result_complete.json"


def one_case(warm: bool, forks: int) -> dict:
    """In this process: the parent made as forked_dbio makes it (warm or not), then forks timed."""
    from tests import forked_dbio

    if not warm:
        forked_dbio._draw_once = lambda: None  # the parent as it was before: imports only
    forked_dbio.warm()
    cpu, wall = [], []
    for _ in range(forks):
        before, started = os.times(), time.monotonic()
        code, out, err = forked_dbio.run(["report", "--format", "html", str(RESULT)], dict(os.environ), 300)
        after = os.times()
        assert code == 0 and "<svg" in out, err
        wall.append(time.monotonic() - started)
        cpu.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
    return {"cpu": statistics.median(cpu), "wall": statistics.median(wall)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--forks", type=int, default=5)
    parser.add_argument("--case", choices=["cold", "warm"])
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one_case(args.case == "warm", args.forks)))
        return
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    print("| round | cold CPU s | warm CPU s | warm/cold | cold wall s | warm wall s |")
    print("|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for n in range(args.rounds):
        order = ["cold", "warm"] if n % 2 == 0 else ["warm", "cold"]
        got = {}
        for case in order:
            done = subprocess.run([sys.executable, __file__, "--case", case, "--forks", str(args.forks)], cwd=ROOT,
                                  capture_output=True, text=True, check=True)
            got[case] = json.loads(done.stdout.splitlines()[-1])
        ratios.append(got["warm"]["cpu"] / got["cold"]["cpu"])
        print(f"| {n + 1} | {got['cold']['cpu']:.2f} | {got['warm']['cpu']:.2f} | {ratios[-1]:.2f} | "
              f"{got['cold']['wall']:.2f} | {got['warm']['wall']:.2f} |", flush=True)
    print(f"warm/cold CPU: median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
