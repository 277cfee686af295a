"""Two versions of dbio on the same instance, the same data and the same minutes: reads/s and
reads per host-CPU-second, before and after a change.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_ab.py --before 87769a7 [--sessions 1,4] [--rounds 5] [--seconds 10]

"before" is a git commit: it is checked out in a worktree under --dir with a venv of its own.
"after" is this checkout. One embedded instance (direct I/O, shared_buffers 128MB) is loaded
once by "after"; then, in every round and at every session count, both versions run back to
back, in alternating order (this machine's storage changes speed within minutes: only pairs
taken seconds apart compare). It prints a Markdown block for bench/RESULTS.md (medians of the
rounds, and the median of the per-pair ratios after/before) and writes the raw figures to
<dir>/bench-ab.json. The instance, the worktree and --dir are removed at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

from benchkit import REPO, fresh_directory, heading, now, standard_options


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def checkout(commit: str, where: Path) -> list[str]:
    """The dbio command of a commit: a worktree and its own venv."""
    sh(["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), commit])
    sh(["python3", "-m", "venv", str(where / ".venv")])
    sh([str(where / ".venv/bin/pip"), "install", "-q", "-c", str(where / "constraints.txt"), str(where)])
    return [str(where / ".venv/bin/python"), "-m", "dbio"]


def dbio(command: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(command + list(args), text=True, capture_output=True, cwd=cwd)
    if proc.returncode != 0:
        raise SystemExit(f"dbio {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def measure(command: list[str], cwd: Path, common: list[str], sessions: int, seconds: int, label: str) -> dict:
    proc = dbio(command, "run", *common, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", "3s",
                "--label", label, cwd=cwd)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("result: "))
    f = json.loads(Path(line.split(": ", 1)[1]).read_text())["figures"]
    return {"reads_per_s": f["load_profile"]["physical_reads_per_s"], "avg_read_us": f["latency"]["avg_read_us"],
            "reads_per_host_cpu_s": f["cpu"]["reads_per_host_cpu_second"]}


def summary(rows: list[dict], sessions: int) -> dict:
    mine = [r for r in rows if r["sessions"] == sessions]
    out: dict = {"sessions": sessions, "pairs": len(mine)}
    for key in ("reads_per_s", "reads_per_host_cpu_s"):
        out[key] = {side: statistics.median(r[side][key] for r in mine) for side in ("before", "after")}
        out[key]["ratio"] = statistics.median(r["after"][key] / r["before"][key] for r in mine)
        out[key]["ratio_range"] = (min(r["after"][key] / r["before"][key] for r in mine),
                                   max(r["after"][key] / r["before"][key] for r in mine))
    return out


def markdown(out: dict) -> str:
    lines = [heading(out["date"]), "", f"before `{out['before']}`, after `{out['after']}`; {out['rounds']} rounds of "
             f"{out['seconds']} s per version and session count, scale {out['scale']}, alternating order.", "",
             "| sessions | reads/s before | reads/s after | after/before (min-max) | reads/host-CPU-s before "
             "| after | after/before (min-max) |", "|---|---|---|---|---|---|---|"]
    for s in out["summary"]:
        r, c = s["reads_per_s"], s["reads_per_host_cpu_s"]
        lines.append(f"| {s['sessions']} | {r['before']:,.0f} | {r['after']:,.0f} | {r['ratio']:.3f} "
                     f"({r['ratio_range'][0]:.2f}-{r['ratio_range'][1]:.2f}) | {c['before']:,.0f} | {c['after']:,.0f} "
                     f"| {c['ratio']:.3f} ({c['ratio_range'][0]:.2f}-{c['ratio_range'][1]:.2f}) |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="git commit of the version to compare against")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-ab"))
    parser.add_argument("--scale", default="2GiB")
    parser.add_argument("--sessions", default="1,4")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    after = [str(REPO / ".venv/bin/python"), "-m", "dbio"]
    before: list[str] | None = None
    common = standard_options(base / "inst", base / "res", args.scale)
    out: dict = {"date": now(), "before": args.before, "after": sh(["git", "-C", str(REPO), "rev-parse", "--short",
                                                                    "HEAD"]).stdout.strip(),
                 "rounds": args.rounds, "seconds": args.seconds, "scale": args.scale, "rows": []}
    try:
        print(f"checking out {args.before}", flush=True)
        before = checkout(args.before, base / "before")
        print("loading", flush=True)
        dbio(after, "setup", *common, cwd=REPO)
        sessions = [int(s) for s in args.sessions.split(",")]
        for rnd in range(args.rounds):
            for count in sessions:
                order = [("before", before, base / "before"), ("after", after, REPO)]
                if rnd % 2:
                    order.reverse()
                row: dict = {"round": rnd, "sessions": count}
                for side, command, cwd in order:
                    row[side] = measure(command, cwd, common, count, args.seconds, f"ab-{side}-r{rnd}-s{count}")
                out["rows"].append(row)
                print(f"round {rnd} sessions {count}: before {row['before']['reads_per_s']:,.0f} reads/s "
                      f"({row['before']['reads_per_host_cpu_s']:,.0f}/host-CPU-s), after "
                      f"{row['after']['reads_per_s']:,.0f} ({row['after']['reads_per_host_cpu_s']:,.0f})", flush=True)
        out["summary"] = [summary(out["rows"], count) for count in sessions]
        (base.parent / "bench-ab.json").write_text(json.dumps(out, indent=1) + "\n")
        print(markdown(out))
    finally:
        subprocess.run(after + ["instance", "destroy", "--yes", "--data-dir", str(base / "inst")], cwd=REPO,
                       capture_output=True)
        if before is not None:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base / "before")],
                           capture_output=True)
        subprocess.run(["rm", "-rf", str(base)])


if __name__ == "__main__":
    main()
