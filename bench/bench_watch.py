"""What watching a run costs: dbio's own CPU per second of window, for a run printed to a pipe (plain lines),
one on a terminal (the live view, under a pseudo-terminal) and one serving --metrics-port scraped twice a second.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_watch.py [--rounds 3] [--seconds 20] [--scale 256MiB]

One embedded instance (direct I/O, shared_buffers 128MB) is loaded once; the three kinds of run then take turns,
--rounds times (interleaved: this machine's speed drifts over minutes). dbio's CPU is the result's own
figure (figures.cpu.dbio_client_cpu_seconds: the dbio process, sessions' client side included) over the
window's seconds. It prints a Markdown block for bench/RESULTS.md and writes the raw figures to
bench/results/DATE-watch.json. The instance and --dir are removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import statistics
import threading
import time
import urllib.request
from pathlib import Path

from benchkit import DBIO, REPO, RESULTS, dbio, destroy, fresh_directory, heading, now, standard_options

PORT = 19464


def on_terminal(argv: list[str]) -> str:
    """argv under a pseudo-terminal of its own (its live view on), what it printed."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(REPO)
        os.execv(argv[0], argv)
    out = bytearray()
    while True:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    os.close(fd)
    return out.decode(errors="replace")


def scraped(argv: list[str]) -> str:
    """argv with --metrics-port, scraped every 0.5 s while it runs (as a Prometheus would)."""
    stop = threading.Event()

    def scrape() -> None:
        while not stop.is_set():
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=1).read()
            except OSError:
                pass
            time.sleep(0.5)

    thread = threading.Thread(target=scrape, daemon=True)
    thread.start()
    try:
        return dbio(*argv[len(DBIO):], "--metrics-port", str(PORT)).stdout
    finally:
        stop.set()
        thread.join()


def cpu_per_second(results: Path, label: str) -> float:
    doc = json.loads(next(results.glob(f"*-{label}/result.json")).read_text())
    return doc["figures"]["cpu"]["dbio_client_cpu_seconds"] / doc["figures"]["window_seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-watch"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--scale", default="256MiB")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    common = standard_options(base / "inst", base / "res", args.scale)
    out: dict = {"date": now(), "rounds": args.rounds, "seconds": args.seconds, "scale": args.scale,
                 "cpu_per_s": {"plain": [], "live view": [], "metrics": []}}
    try:
        dbio("setup", *common)
        for n in range(args.rounds):
            for kind in out["cpu_per_s"]:
                label = f"{kind.replace(' ', '-')}-{n}"
                argv = DBIO + ["run", *common, "-t", "4", "--warmup", "2s", "--run-time", f"{args.seconds}s",
                               "--label", label]
                if kind == "plain":
                    dbio(*argv[len(DBIO):])
                elif kind == "live view":
                    on_terminal(argv)
                else:
                    scraped(argv)
                out["cpu_per_s"][kind].append(cpu_per_second(base / "res", label))
    finally:
        destroy(base / "inst", base)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{out['date'][:10]}-watch.json").write_text(json.dumps(out, indent=1) + "\n")
    medians = {kind: statistics.median(values) for kind, values in out["cpu_per_s"].items()}
    print(heading(out["date"]))
    print(f"\n`bench/bench_watch.py --rounds {args.rounds} --seconds {args.seconds} --scale {args.scale}`: "
          "dbio's own CPU per second of window (median of the rounds, 4 sessions)\n")
    print("| run | dbio CPU s/s (median) | each round | vs plain |")
    print("|---|---:|---|---:|")
    for kind, values in out["cpu_per_s"].items():
        rounds = ", ".join(f"{v:.4f}" for v in values)
        print(f"| {kind} | {medians[kind]:.4f} | {rounds} | {medians[kind] - medians['plain']:+.4f} |")


if __name__ == "__main__":
    main()
