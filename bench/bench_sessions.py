"""Session start: how long N sessions take to connect and start together, and the client's memory per session.

    .venv/bin/python bench/bench_sessions.py                      # 2,048 sessions, 5 rounds
    .venv/bin/python bench/bench_sessions.py --sessions 512,2048 --rounds 3

One embedded instance with a tiny data set (the start is measured, not the reads); each round runs
`dbio run -t N --run-time 0 --work-loop 2 --warmup 0` and reads from its result the time from the first
connection to all sessions connected and to the common start (`timeline`). The client's memory
per session is the rise of its resident memory (samples' `client_rss`, largest reading) from a
1-session run to the N-session run of the same round, over N - 1: a measured difference, not an
estimate. Rounds alternate the session counts, so a busy moment of the machine touches all.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import RESULTS, destroy, dbio, fresh_directory, machine, now, result_of  # noqa: E402


def client_figures(result_path: Path) -> tuple[int | None, float | None]:
    """The client's largest resident memory over the run's samples (bytes), and its CPU time at the
    start (the first sample, taken once every session waits at the barrier)."""
    values, start_cpu = [], None
    for line in (result_path.parent / "samples.jsonl").read_text().splitlines():
        reading = json.loads(line).get("os") or {}
        if start_cpu is None:
            start_cpu = reading.get("client_cpu")
        if reading.get("client_rss"):
            values.append(reading["client_rss"])
    return (max(values) if values else None), start_cpu


def one_run(common: list[str], sessions: int, label: str) -> dict:
    # every session runs two iterations, however long the machine takes to give them a CPU
    proc = dbio("run", *common, "-t", str(sessions), "--run-time", "0", "--work-loop", "2", "--warmup", "0",
                "--label", label)
    doc = result_of(proc)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("result: "))
    started = [s for s in doc.get("sessions", []) if (s.get("iterations") or 0) > 0]
    rss, cpu = client_figures(Path(line.split(": ", 1)[1]))
    return {"sessions": sessions, "connect_seconds": doc["timeline"]["connect_seconds"],
            "start_seconds": doc["timeline"]["start_seconds"], "sessions_that_ran": len(started),
            "client_rss": rss, "client_cpu_at_start": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="2048")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-sessions"))
    args = parser.parse_args()
    counts = [int(s) for s in args.sessions.split(",")]
    base = fresh_directory(args.dir)
    data_dir, results = base / "instance", base / "results"
    common = ["--data-dir", str(data_dir), "--shared-buffers", "16MiB", "--scale", "64MiB", "--scan-table-size", "0",
              "--results-dir", str(results)]
    out = {"date": now(), "machine": machine(), "command": " ".join(sys.argv), "rounds": []}
    try:
        dbio("setup", *common)
        one_run(common, max(counts), "warm")  # the instance restarts once for max_connections
        for rnd in range(args.rounds):
            single = one_run(common, 1, f"r{rnd}-1")
            for n in (counts if rnd % 2 == 0 else list(reversed(counts))):
                row = one_run(common, n, f"r{rnd}-{n}")
                if row["client_rss"] and single["client_rss"] and n > 1:
                    row["rss_per_session"] = (row["client_rss"] - single["client_rss"]) / (n - 1)
                if row["client_cpu_at_start"] is not None and single["client_cpu_at_start"] is not None and n > 1:
                    row["client_cpu_ms_per_session"] = 1e3 * (row["client_cpu_at_start"]
                                                              - single["client_cpu_at_start"]) / (n - 1)
                out["rounds"].append({"round": rnd, **row})
                print(f"round {rnd}: {n} sessions connected in {row['connect_seconds']:.2f} s, started in "
                      f"{row['start_seconds']:.2f} s, {row['sessions_that_ran']} ran, client memory "
                      f"{row.get('rss_per_session', 0) / 1024:.1f} KiB and "
                      f"{row.get('client_cpu_ms_per_session', 0):.2f} ms of CPU per session", flush=True)
    finally:
        destroy(data_dir, base)
    for n in counts:
        mine = [r for r in out["rounds"] if r["sessions"] == n]
        med = {k: statistics.median(r[k] for r in mine if r.get(k) is not None)
               for k in ("connect_seconds", "start_seconds", "rss_per_session", "client_cpu_ms_per_session")
               if any(r.get(k) for r in mine)}
        out.setdefault("medians", {})[str(n)] = med
        print(f"{n} sessions, medians of {len(mine)}: connected {med['connect_seconds']:.2f} s, started "
              f"{med['start_seconds']:.2f} s, client {med.get('rss_per_session', 0) / 1024:.1f} KiB and "
              f"{med.get('client_cpu_ms_per_session', 0):.2f} ms of CPU per session")
    path = RESULTS / f"{out['date'][:10]}-sessions.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"raw figures: {path}")


if __name__ == "__main__":
    main()
