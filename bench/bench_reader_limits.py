"""How large the files dbio reads back get (dbio/readback.py's limits come from this).

A run of the real pipeline (jobs/run.measure: sessions, samples, samples.jsonl, run/assemble, result.json) on
fake engines in virtual time (tests/fake_engine.py, tests/virtual_time.py), made as large as a real run makes
them: each sample carries as many bytes as a recorded PostgreSQL 18 snapshot (tests/fixtures/pg18_snapshot.json,
pg_stat_io's rows) beside the fake's counters, and every slice spreads its statements over 100 SELECT, 60
UPDATE and 30 scan latency buckets (a recorded run of two sessions fills 48, 23 and 8 of them an interval).
Then:

- the sessions' share, apart: the same run for 10 s with one session a node and with 512, per session, taken
  to MAX_SESSIONS (4096), and what /proc adds for that many real sessions (the fake's have no process);
- a merged result: dbio merge's own code (merge.merge) over two such results (the second as another host's);
- sweep.json of --steps steps and repeat.json of --repeat members, as their writers lay them out;
- what reading each costs: dbio report (a result), dbio history (a directory of one) as programs, their
  peak memory (getrusage) and time.

    .venv/bin/python bench/bench_reader_limits.py --hours 8 --nodes 4 --sessions 32 --out /var/tmp/limits

Writes its figures as JSON (--json) and prints them.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from dbio import merge, readback, repeat_set  # noqa: E402
from dbio.config_checks import MAX_SESSIONS  # noqa: E402
from dbio import result as results  # noqa: E402
from dbio.engines.base import SliceResult  # noqa: E402
from dbio.jobs import run as run_job  # noqa: E402
from dbio.run import agreed_start  # noqa: E402
from dbio.run.nodes import Node  # noqa: E402
from dbio.run.plan import make_plan  # noqa: E402
from dbio.sweep import document as sweeps  # noqa: E402
from dbio.ui import UI  # noqa: E402
from tests.fake_engine import FakeEngine  # noqa: E402
from tests.fake_runs import run_config  # noqa: E402
from tests.virtual_time import VirtualTime  # noqa: E402

# A recorded PostgreSQL 18 snapshot's size, as the padding of every reading: a string as long as its compact JSON,
# so that each sample's line is as long as a real one, without the time the readers' checks of its thousand
# numbers take (assembling reads samples.jsonl once for the total and once per node).
RECORDED = "x" * len(json.dumps(json.loads((ROOT / "tests" / "fixtures" / "pg18_snapshot.json").read_text()),
                                separators=(",", ":")))
SPREAD = {0: 100, 1: 60, 2: 30}  # kind (select, update, scan) -> buckets its latencies fill


class RealisticFake(FakeEngine):
    """The fake engine with a real server's sizes: PostgreSQL 18's snapshot in each reading, latencies spread."""

    async def snapshot(self, conn, info, run_id=None):
        raw = await super().snapshot(conn, info, run_id)
        # a real server's counters are not round: each grows by a fraction more a second (their rates then have
        # 17 digits, as a real series' have), still never going back
        uneven = {key: value + raw["t"] * 3.14159e-3 for key, value in raw.items() if key != "t"}
        return {**raw, **uneven, "recorded": RECORDED}

    def _slice(self, run, iterations, end, *, done=False):
        out = super()._slice(run, iterations, end, done=done)
        hist = np.zeros_like(out.hist)
        scans = out.iterations // 50
        counts = {0: out.selects, 1: out.updates, 2: scans}
        for kind, width in SPREAD.items():
            start = 40 + 10 * kind
            share = np.full(width, counts[kind] // width, dtype=np.int64)
            share[: counts[kind] % width] += 1
            hist[kind, start:start + width] = share
        return SliceResult(iterations=out.iterations, selects=out.selects, updates=out.updates, scans=scans,
                           rows=out.rows, think_seconds=0.0, sum_us=[*out.sum_us[:2], scans * 5000.0, 0.0],
                           max_us=[*out.max_us[:2], 9000.0 if scans else 0.0, 0.0], hist=hist,
                           slice_end=out.slice_end, done=out.done)


def measured_run(where: Path, nodes: int, sessions: int, seconds: int) -> Path:
    """One run of the pipeline on `nodes` fake servers in virtual time: its directory."""
    agreed_start.LEAD_SECONDS, agreed_start.RELEASE_AHEAD = 0.8, 0.4  # fake sessions connect in microseconds
    config = run_config(where, threads_per_schema=sessions, run_time=seconds, warmup=1, update_pct=20)
    clock, made = VirtualTime(), []
    for i in range(nodes):
        engine = RealisticFake(version=f"Fake 1.0 n{i}", time=clock)
        conn = engine.connect("fake:", application_name="bench")
        made.append(Node(f"node{i + 1}", engine, "fake:", engine.probe(conn)))
        engine.close(conn)
    outcome = run_job.measure(made, config, UI(quiet=True), run_job.run_directory(config),
                              make_plan(config.workload, 1), {}, {"data_directory": None, "wal": None}, clock=clock)
    return Path(outcome.directory)


def longest_line(path: Path) -> int:
    with path.open("rb") as fh:
        return max((len(line) for line in fh), default=0)


def values(path: Path) -> int:
    return readback.value_bound(path.read_bytes())


def cost(argv: list[str]) -> dict[str, Any]:
    """A dbio command as a program: its peak memory (MiB) and wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "dbio", *argv], capture_output=True, text=True, cwd=ROOT)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"argv": argv[0], "exit": done.returncode, "seconds": round(time.monotonic() - began, 2),
            "peak_mib": round(max(peak, before) / 1024, 1), "stderr": done.stderr.strip()[-300:]}


def file_figures(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"bytes": path.stat().st_size}
    if path.suffix == ".jsonl":
        out["longest_line"] = longest_line(path)
    else:
        out["values"] = values(path)
    return out


def merged(directory: Path, out: Path) -> Path:
    """The run's result merged with itself as another host's (another run id, each node another server, its
    readings a millisecond apart and its counters its own), by merge.merge: what dbio merge writes for two such
    hosts. The fake's nodes count alike; real servers' counters never do (merge_readings tells them apart so)."""
    inputs = []
    for h, host in enumerate(("host1", "host2")):
        doc = results.read(directory)
        doc["run_id"] = f"{doc['run_id']}{host}"
        for i, node in enumerate(doc["nodes"]):
            node["server"]["identity"] = f"{host}-{node['name']}"
            for which in ("begin", "end"):
                reading = (node.get("normalized") or {}).get(which)
                if reading:
                    _own_counters(reading, 1 + 10 * h + i)
                    reading["t"] += 0.001 * i
        inputs.append((host, doc))
    document = merge.merge(inputs, "bench merge")
    out.mkdir(parents=True, exist_ok=True)
    return results.write(out, document)


def _own_counters(reading: dict[str, Any], offset: int) -> None:
    """Each counter of a reading moved by offset, as another server's would differ (pure but for its argument)."""
    for key, value in reading.items():
        if isinstance(value, dict):
            _own_counters(value, offset)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and key != "t":
            reading[key] = value + offset


def per_process_maps(sessions: int) -> dict[str, int]:
    """What /proc adds at the window's ends for `sessions` real sessions, which the fake's have none of: each
    session's CPU, its wait for a CPU and a background process each (monitor.Monitor.os_reading), as bytes of
    a sample's line (compact) and of result.json (indent 1: its begin and end readings)."""
    maps = {name: {str(4_000_000 + i): 12345.678901 for i in range(sessions)}
            for name in ("session_cpu", "session_run_delay", "background_cpu")}
    return {"line": len(json.dumps(maps, separators=(",", ":"))), "result": 2 * len(json.dumps(maps, indent=1)),
            "values": 2 * 3 * sessions}


def sweep_file(out: Path, steps: int) -> Path:
    """sweep.json of a grid of `steps` steps, each as the sweep records it (the fixture's first step's fields)."""
    doc = json.loads((ROOT / "tests" / "fixtures" / "sweep_capacity" / "sweep.json").read_text())
    step = doc["steps"][0]
    doc["vary"] = [{"key": k, "values": [str(v) for v in range(1, 14)]} for k in ("threads_per_schema",
                                                                                  "update_pct", "scan_pct")]
    doc["steps"] = [{**step, "index": i, "name": f"{i:04d}-t{i}-u{i % 13}-s{i % 7}",
                     "values": {"threads_per_schema": str(i), "update_pct": str(i % 13), "scan_pct": str(i % 7)}}
                    for i in range(1, steps + 1)]
    out.mkdir(parents=True, exist_ok=True)
    sweeps.write(out, doc)
    return out / sweeps.SWEEP_FILE


def repeat_file(out: Path, members: int, result: Path) -> Path:
    doc = repeat_set.document("bench", members, "2026-12-01T00:00:00+00:00", "bench")
    member = results.read(result)
    doc["members"] = [{"name": repeat_set.member_name(i), "status": "complete", "run_id": member["run_id"],
                       "label": member["label"]} for i in range(1, members + 1)]
    doc["spread"] = repeat_set.summary([member] * 3)
    doc["status"] = "complete"
    out.mkdir(parents=True, exist_ok=True)
    repeat_set.write(out, doc)
    return out / repeat_set.REPEAT_FILE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=8.0)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--sessions", type=int, default=32, help="per node")
    parser.add_argument("--steps", type=int, default=2000, help="sweep.json's steps")
    parser.add_argument("--repeat", type=int, default=1000, help="repeat.json's members")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures: dict[str, Any] = {"hours": args.hours, "nodes": args.nodes, "sessions_per_node": args.sessions}
    began = time.monotonic()
    run = measured_run(args.out / "long", args.nodes, args.sessions * args.nodes, int(args.hours * 3600))
    figures["run_wall_seconds"] = round(time.monotonic() - began, 1)
    for name in (results.RESULT_FILE, results.SAMPLES_FILE, results.RUN_MANIFEST):
        figures[name] = file_figures(run / name)
    # what sessions add (their records, each node's list of them), per session, from two short runs
    few_sessions, many_sessions = args.nodes, 512
    few = measured_run(args.out / "few", args.nodes, few_sessions, 10)
    many = measured_run(args.out / "many", args.nodes, many_sessions, 10)
    per_session = {key: (file_figures(many / results.RESULT_FILE)[key] - file_figures(few / results.RESULT_FILE)[key])
                   / (many_sessions - few_sessions) for key in ("bytes", "values")}
    proc = per_process_maps(MAX_SESSIONS)
    more = MAX_SESSIONS - args.sessions * args.nodes
    figures[f"what {MAX_SESSIONS} sessions add"] = {"result.json per session": per_session, "/proc's": proc}
    figures["largest"] = {
        results.RESULT_FILE: {"bytes": round(figures[results.RESULT_FILE]["bytes"] + more * per_session["bytes"]
                                             + proc["result"]),
                              "values": round(figures[results.RESULT_FILE]["values"] + more * per_session["values"]
                                              + proc["values"])},
        results.SAMPLES_FILE: {"bytes": figures[results.SAMPLES_FILE]["bytes"] + 2 * proc["line"],
                               "longest_line": figures[results.SAMPLES_FILE]["longest_line"] + proc["line"]}}
    figures["merged result.json"] = file_figures(merged(run, args.out / "merged"))
    figures["sweep.json"] = {"steps": args.steps, **file_figures(sweep_file(args.out / "sweep", args.steps))}
    figures["repeat.json"] = {"members": args.repeat,
                              **file_figures(repeat_file(args.out / "repeat", args.repeat, run / results.RESULT_FILE))}
    figures["dbio report"] = cost(["report", str(run), "--out", str(args.out / "report.txt")])
    figures["dbio history"] = cost(["history", str(args.out / "long"), "--out", str(args.out / "history.txt")])
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
