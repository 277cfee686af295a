"""sweep --objective against a plain sweep reaching the same answer: how many steps each needed.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_search.py [--dir /var/tmp/dbio-bench-search] [--scale 256MiB]
        [--objective 'avg_read<400us'] [--max-sessions 64] [--seconds 3] [--warmup 1]

It creates its own embedded instance (direct I/O, shared_buffers 128MB), loads it, runs the search,
then a plain sweep of every session count from 1 to the first count the search found not meeting the
objective (the enumeration that reaches the same answer at the same resolution, adjacent counts), and
compares their steps, their time and their answers (the count with the most reads/s within the objective).
It prints a Markdown block for bench/RESULTS.md and removes the instance (--keep keeps it and the results).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchkit import RESULTS, dbio, destroy, fresh_directory, heading, machine, now, standard_options

from dbio.stats.capacity import parse_slo


def sweep_doc(proc) -> tuple[Path, dict]:
    directory = Path(next(ln for ln in proc.stdout.splitlines() if ln.startswith("sweep: ")).split(": ", 1)[1]).parent
    return directory, json.loads((directory / "sweep.json").read_text())


def within(directory: Path, doc: dict, objective: str) -> list[tuple[int, float, float | None, bool]]:
    """(sessions, reads/s, the objective's figure, met) per step, from each step's result.json."""
    from dbio.stats import catalogue

    slo = parse_slo(objective)
    out = []
    for step in doc["steps"]:
        result = json.loads((directory / step["name"] / "result.json").read_text())
        f = catalogue.figures_of(result)
        value = catalogue.value(f, slo.figure)
        out.append((result["config"]["workload"]["sessions"], catalogue.value(f, "reads_per_s"), value,
                    bool(result["verdict"]["valid"]) and slo.met(value)))
    return sorted(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-search"))
    parser.add_argument("--scale", default="256MiB")
    parser.add_argument("--objective", default="avg_read<400us")
    parser.add_argument("--max-sessions", type=int, default=64)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    options = standard_options(data_dir, base / "results", args.scale)
    timing = ["--run-time", f"{args.seconds}s", "--warmup", f"{args.warmup}s"]
    try:
        dbio("setup", *options)
        started = time.monotonic()
        proc = dbio("sweep", *options, *timing, "--label", "search", "--objective", args.objective,
                    "--max-sessions", str(args.max_sessions))
        search_wall = time.monotonic() - started
        s_dir, s_doc = sweep_doc(proc)
        answer = s_doc["search"]["answers"][0]
        searched = within(s_dir, s_doc, args.objective)
        print(proc.stdout[-2500:])
        failing = [n for n, _, _, met in searched if not met]
        top = min(failing) if failing else max(n for n, *_ in searched)
        started = time.monotonic()
        proc = dbio("sweep", *options, *timing, "--label", "plain", "--sessions", ",".join(map(str, range(1, top + 1))),
                    "--latency-slo", args.objective.replace("avg_read", "avg") if args.objective.startswith("avg_read")
                    else args.objective)
        plain_wall = time.monotonic() - started
        p_dir, p_doc = sweep_doc(proc)
        plain = within(p_dir, p_doc, args.objective)
        plain_met = [(r, n) for n, r, _, met in plain if met]
        plain_best = max(plain_met)[1] if plain_met else None
        search_best = next((n for n, r, _, met in searched if met and r == max(
            (r2 for _, r2, _, m2 in searched if m2), default=None)), None)
        out = {"date": now(), **machine(), "scale": args.scale, "objective": args.objective,
               "seconds": args.seconds, "warmup": args.warmup, "max_sessions": args.max_sessions,
               "search": {"steps": len(s_doc["steps"]), "wall_seconds": search_wall, "answer": answer["line"],
                          "reason": answer["reason"], "best_sessions": search_best,
                          "probes": [[n, r, v, met] for n, r, v, met in searched],
                          "order": [s["values"]["threads_per_schema"] for s in s_doc["steps"]]},
               "plain": {"steps": len(p_doc["steps"]), "wall_seconds": plain_wall, "best_sessions": plain_best,
                         "points": [[n, r, v, met] for n, r, v, met in plain]}}
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"{out['date'][:10]}-search.json").write_text(json.dumps(out, indent=1) + "\n")
        print(f"\n{heading(out['date'])}\n")
        print(f"- objective {args.objective}, {args.seconds} s measured per step after {args.warmup} s of warm-up, "
              f"scale {args.scale}")
        print(f"- search: {out['search']['steps']} probes (sessions in order: "
              f"{', '.join(out['search']['order'])}), {search_wall:.0f} s; answer: {answer['line']}")
        print(f"- plain sweep of every count 1..{top}: {out['plain']['steps']} steps, {plain_wall:.0f} s; "
              f"its most reads/s within the objective at {plain_best} sessions (search: {search_best})")
        for n, r, v, met in plain:
            print(f"  | {n} | {r:,.0f} | {'-' if v is None else f'{v:,.0f}'} | {'met' if met else 'not met'} |")
    finally:
        if not args.keep:
            destroy(data_dir, base)


if __name__ == "__main__":
    main()
