"""Repeated runs: run-to-run spread of reads/s on this machine, and what dbio compare says about two
configurations that differ (1 vs 4 sessions) and two that do not (1 session, twice).

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_repeat.py [--repeat 3] [--seconds 5] [--scale 256MiB]

One embedded instance (direct I/O, shared_buffers 128MB) is loaded once; then three repeat sets
(`dbio run --repeat N`) run in this order: 1 session ("same-a"), 4 sessions ("four"), 1 session again
("same-b"), so that the two sets of one configuration are minutes apart, as a user's would be. Each
pair is compared with `dbio compare`, and, for contrast, the first run of each 1-session set alone
(one run each: the interval-noise test). It prints a Markdown block for bench/RESULTS.md and writes
the raw figures to bench/results/DATE-repeat.json. The instance and --dir are removed at the end.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchkit import RESULTS, dbio, destroy, fresh_directory, heading, now, standard_options


def repeat_set(common: list[str], sessions: int, repeat: int, seconds: int, label: str) -> tuple[Path, dict]:
    proc = dbio("run", *common, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", "2s",
                "--label", label, "--repeat", str(repeat))
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("repeat set: "))
    path = Path(line.split(": ", 1)[1])
    return path.parent, json.loads(path.read_text())


def reads_of(directory: Path, doc: dict) -> list[float]:
    return [json.loads((directory / m["name"] / "result.json").read_text())["figures"]["load_profile"]
            ["physical_reads_per_s"] for m in doc["members"]]


def said(a: Path, b: Path, names: str) -> dict:
    """What dbio compare says: its headline, and its reads/s row's verdict."""
    text = dbio("compare", str(a), str(b), "--names", names).stdout
    model = json.loads(dbio("compare", str(a), str(b), "--names", names, "--format", "json").stdout)
    rows = next(t for s in model["sections"] for t in s.get("tables", []) if t["id"] == "compare_figures")["rows"]
    reads = next(r for r in rows if r[0] == "Physical reads/s")
    return {"headline": model["headline_text"], "reads_verdict": reads[-1], "text": text}


def markdown(out: dict) -> str:
    lines = [heading(out["date"]), "", f"{out['repeat']} runs per set of {out['seconds']} s after 2 s of warm-up, "
             f"scale {out['scale']}, order same-a, four, same-b.", "",
             "| set | sessions | reads/s of each run | median | (max - min) / median |", "|---|---:|---|---:|---:|"]
    for s in out["sets"]:
        sp = s["spread"]["reads_per_s"]
        lines.append(f"| {s['label']} | {s['sessions']} | {', '.join(f'{r:,.0f}' for r in s['reads'])} | "
                     f"{sp['median']:,.0f} | {sp['spread_pct']:.1f}% |")
    lines += ["", "What `dbio compare` says:", ""]
    for c in out["compares"]:
        lines.append(f"- {c['what']}: {c['headline']}; reads/s verdict: *{c['reads_verdict']}*")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-repeat"))
    parser.add_argument("--scale", default="256MiB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    common = standard_options(base / "inst", base / "res", args.scale)
    out: dict = {"date": now(), "repeat": args.repeat, "seconds": args.seconds, "scale": args.scale, "sets": [],
                 "compares": []}
    try:
        print("loading", flush=True)
        dbio("setup", *common)
        sets = {}
        for label, sessions in (("same-a", 1), ("four", 4), ("same-b", 1)):
            directory, doc = repeat_set(common, sessions, args.repeat, args.seconds, label)
            sets[label] = directory
            out["sets"].append({"label": label, "sessions": sessions, "reads": reads_of(directory, doc),
                                "spread": doc["spread"]})
            print(f"{label}: {out['sets'][-1]['reads']}", flush=True)
        for what, a, b in (("1 vs 4 sessions", sets["same-a"], sets["four"]),
                           ("1 session, twice (minutes apart)", sets["same-a"], sets["same-b"]),
                           ("1 session, twice, one run each", sets["same-a"] / "r1", sets["same-b"] / "r1")):
            found = said(a, b, "a,b")
            out["compares"].append({"what": what, **{k: v for k, v in found.items() if k != "text"}})
            print(f"{what}: {found['headline']} / {found['reads_verdict']}", flush=True)
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"{out['date'][:10]}-repeat.json").write_text(json.dumps(out, indent=1) + "\n")
        print(markdown(out))
    finally:
        destroy(base / "inst", base)


if __name__ == "__main__":
    main()
