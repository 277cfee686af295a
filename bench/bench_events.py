"""What a disruption does (issue 37): `--event` runs whose dips figures.disruptions measures, checked against what
each event is known to do.

Usage (from the repository, as root, after the README's setup command):

    .venv/bin/python bench/bench_events.py [--dir /var/tmp/dbio-bench-events] [--rounds 3] [--scale 256MiB]
        [--kinds stall,throttle,checkpoint,exec,vacuum,index,backup] [--lock /work/bench.lock]

One embedded instance (direct I/O, shared_buffers 128MB) is loaded once; then, in every round, one after the other:

- stall: `--event 10s=stall:3s` in a 30 s window (expected: floor under 10% of before, 2-5 s below 90%, a recovery);
- throttle: `--event 10s=throttle:IOPS:10s` with IOPS a quarter of the stall run's before rate (expected: floor
  within 10% of IOPS, 9-11 s below 90%);
- checkpoint: `--update-pct 20 --event 10s=checkpoint`: its dip beside the checkpoint's own seconds and buffers;
- exec: `--event 10s=exec:SCRIPT`, SCRIPT running fio's random reads on the same device for 8 s: the dip, and
  whether the verdict names the device's other reader;
- vacuum, index, backup: `--event 10s=vacuum`, `10s=index` (dbio's index dropped and made again: the sessions wait
  on its lock) and `10s=backup:DIR` (`--wal-level replica`, a new DIR each round): each dip beside the operation's
  own seconds (and what it wrote).

Each run is one measurement, taken inside the machine-wide lock (`flock LOCK`, per run, so that other benches'
runs interleave) where --lock names one.

It prints a Markdown block for bench/RESULTS.md (each round's figures, then the medians) and writes the raw records
to <dir>/bench-events.json. The instance is removed at the end (the results and the raw records stay in --dir).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

import os

from benchkit import DBIO, REPO, dbio, destroy, fresh_directory, heading, now, result_of, standard_options

KINDS = ("stall", "throttle", "checkpoint", "exec", "vacuum", "index", "backup")
LOCK: list[str] = []  # ["flock", PATH]: each measured run inside the machine-wide lock

FIO_SCRIPT = """#!/bin/sh
# the device's other reader: fio's random 8 KiB direct reads on a file beside the instance, for 8 s
exec fio --name=other --filename={file} --size=256M --rw=randread --bs=8k --direct=1 --ioengine=libaio \\
    --iodepth=8 --time_based --runtime=8 --output="$1/fio-other.txt"
"""


def locked_run(*args: str) -> subprocess.CompletedProcess:
    """dbio run as one measurement: inside the lock when one is given."""
    proc = subprocess.run([*LOCK, *DBIO, *args], text=True, capture_output=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"dbio {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def run(common: list[str], label: str, *extra: str) -> dict:
    done = locked_run("run", *common, "-t", "2", "--warmup", "3s", "--run-time", "30s", "--label", label, *extra)
    result = result_of(done)
    [dip] = result["figures"]["disruptions"]
    [record] = result["disruptions"]
    report = (Path(done.stdout.split("report: ", 1)[1].split("\n", 1)[0])).read_text()
    return {"dip": dip, "record": record, "other_reader_named": other_reader_named(report, record)}


def other_reader_named(report: str, record: dict) -> bool:
    """The report's device finding names the --event program as the device's other reader (not only "another
    process used the device", which other work on a shared machine also causes)."""
    program, flat = record.get("program"), " ".join(report.split())  # a finding's words as one line
    return bool(program) and "another process used the device" in flat and f"program {program} read" in flat


def num(value: float | None, form: str) -> str:
    """A figure as the table shows it; an absent one (the dip had no interval with a figure) as a dash."""
    return "-" if value is None else format(value, form)


def row(kind: str, n: int, got: dict, extra: str = "") -> str:
    d = got["dip"]
    rec = "not recovered" if d.get("recovery_seconds") is None else f"{d['recovery_seconds']:.2f}"
    return (f"| {n} | {kind} | {num(d.get('before_reads_per_s'), ',.0f')} | {num(d.get('floor_reads_per_s'), ',.0f')} "
            f"| {num(d.get('floor_pct'), '.1f')} | {num(d.get('seconds_below_90pct'), '.2f')} | {rec} "
            f"| {num(d.get('reads_lost'), ',.0f')} | {extra} |")


def from_results(results: Path) -> list[dict]:
    """The rounds as the bench's runs left them in their directories (LABEL-KIND-N): a bench stopped before its
    end, or one whose table is to be printed again."""
    rounds: dict[int, dict] = {}
    for directory in sorted(results.iterdir()):
        kind, n = (directory.name.rsplit("-", 2) + ["", ""])[1:3]  # 20261202-154527-vacuum-1: vacuum, 1
        if kind not in KINDS or not n.isdigit() or not (directory / "result.json").is_file():
            continue
        result = json.loads((directory / "result.json").read_text())
        [dip], [record] = result["figures"]["disruptions"], result["disruptions"]
        got = rounds.setdefault(int(n), {"round": int(n)})
        got[kind] = {"dip": dip, "record": record, "other_reader_named": None}
        if kind == "throttle":
            got["iops"] = record.get("iops")
    return [rounds[n] for n in sorted(rounds)]


def operation(kind: str, got: dict) -> str:
    """The operation's own record beside its dip: how long it took and what it did."""
    done = got["record"].get(kind) or {}
    took = got["record"]["end_s"] - got["record"]["start_s"]
    said = f"{kind} {done.get('seconds', took):.2f} s (event {took:.2f} s)"
    if kind == "vacuum":
        said += f", {done.get('wal_bytes', 0) / 2**20:.1f} MiB of WAL"
    elif kind == "index":
        said += f", {done.get('index_bytes', 0) / 2**20:.1f} MiB of index"
    elif kind == "backup":
        said += f", {done.get('bytes', 0) / 2**20:.0f} MiB written"
    return said + ("" if got["record"].get("outcome") == "done" else f" ({got['record'].get('outcome')})")


def fine(got: dict) -> str:
    """The dip's fine figures (a quarter-second's samples), where the run took them."""
    f = got["dip"].get("fine") or {}
    if not f.get("resolution_seconds"):
        return ""
    return f"fine: floor {f.get('floor_pct')}%, {f.get('seconds_below_90pct')} s below 90%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-events"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", default="256MiB")
    parser.add_argument("--kinds", default=",".join(KINDS), help="which events, comma-separated")
    parser.add_argument("--lock", default="/work/bench.lock", help="flock this file around each run ('': none)")
    parser.add_argument("--from-results", type=Path, help="print the table of the runs in this results directory")
    args = parser.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if set(kinds) - set(KINDS) or ("throttle" in kinds and "stall" not in kinds):
        raise SystemExit(f"--kinds: some of {', '.join(KINDS)} (throttle takes its IOPS from the stall run)")
    LOCK[:] = ["flock", args.lock] if args.lock else []
    load = os.getloadavg()[0]
    if args.from_results:
        rounds = from_results(args.from_results)
        table(rounds, [k for k in KINDS if any(k in r for r in rounds)], args.scale, None)
        return
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = standard_options(data_dir, base / "results", args.scale)
    script = base / "other-reader.sh"
    script.write_text(FIO_SCRIPT.format(file=base / "fio-other.dat"))
    script.chmod(0o755)
    rounds: list[dict] = []
    try:
        dbio("setup", *common)
        subprocess.run(["fio", "--name=lay", f"--filename={base / 'fio-other.dat'}", "--size=256M", "--create_only=1"],
                       check=True, capture_output=True)
        for n in range(1, args.rounds + 1):
            got: dict = {"round": n}
            if "stall" in kinds:
                got["stall"] = run(common, f"stall-{n}", "--event", "10s=stall:3s")
            if "throttle" in kinds:
                got["iops"] = max(1, round(got["stall"]["dip"]["before_reads_per_s"] / 4))
                got["throttle"] = run(common, f"throttle-{n}", "--event", f"10s=throttle:{got['iops']}:10s")
            if "checkpoint" in kinds:
                got["checkpoint"] = run([*common[:-4], "--update-pct", "20", *common[-2:]], f"checkpoint-{n}",
                                        "--event", "10s=checkpoint")
            if "exec" in kinds:
                got["exec"] = run(common, f"exec-{n}", "--event", f"10s=exec:{script}")
            for kind in ("vacuum", "index"):
                if kind in kinds:
                    got[kind] = run(common, f"{kind}-{n}", "--event", f"10s={kind}")
            if "backup" in kinds:
                got["backup"] = run(common, f"backup-{n}", "--wal-level", "replica", "--event",
                                    f"10s=backup:{base / f'backup-{n}'}")
            rounds.append(got)
    finally:
        destroy(data_dir)
    (base / "bench-events.json").write_text(json.dumps(rounds, indent=1))
    table(rounds, kinds, args.scale, load)
    print(f"(raw: {base / 'bench-events.json'})")


def table(rounds: list[dict], kinds: list[str], scale: str, load: float | None) -> None:
    at_start = "" if load is None else f"; load average {load:.1f} at the start"
    print(heading(now(), f", {scale}, 2 sessions, 30 s windows, direct I/O, shared_buffers 128MB{at_start}"))
    print("| round | event | before reads/s | floor reads/s | floor % | below 90% s | recovery s | reads lost | |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rounds:
        n = r["round"]
        if "stall" in r:
            print(row("stall:3s at 10 s", n, r["stall"], fine(r["stall"])))
        if "throttle" in r:
            t = r["throttle"]["dip"]
            print(row(f"throttle:{r['iops']}:10s", n, r["throttle"],
                      f"floor / throttle {t['floor_reads_per_s'] / r['iops']:.3f}"))
        if "checkpoint" in r:
            c = r["checkpoint"]["record"]["checkpoint"]
            w = r["checkpoint"]["dip"].get("writes") or {}
            print(row("checkpoint (20% UPDATE)", n, r["checkpoint"],
                      f"checkpoint {c['seconds']:.2f} s, {c['buffers_written']} buffers; writes floor "
                      f"{w.get('floor_pct')}% of {w.get('before_per_s')}/s"))
        if "exec" in r:
            e = r["exec"]
            print(row("exec: fio 8 s", n, e, f"fio read {e['record'].get('read_bytes', 0) / 2**20:,.0f} MiB by its "
                      f"own accounting; the report names it: {e['other_reader_named']}; {fine(e)}".rstrip("; ")))
        for kind in ("vacuum", "index", "backup"):
            if kind in r:
                print(row(f"{kind} at 10 s", n, r[kind], "; ".join(x for x in (operation(kind, r[kind]), fine(r[kind]))
                                                                   if x)))
    for kind in (k for k in KINDS if k in kinds):
        for name, of in (("engine", lambda d: d), ("fine", lambda d: d.get("fine") or {})):
            dips = [of(r[kind]["dip"]) for r in rounds if kind in r]
            found = {k: [d[k] for d in dips if d.get(k) is not None] for k in ("floor_pct", "seconds_below_90pct")}
            if not all(found.values()):
                continue
            med = {k: statistics.median(v) for k, v in found.items()}
            print(f"- {kind} ({name}, {len(dips)} rounds): floor {med['floor_pct']:.1f}% of before "
                  f"({min(found['floor_pct']):.1f}-{max(found['floor_pct']):.1f}), {med['seconds_below_90pct']:.2f} s "
                  f"below 90% ({min(found['seconds_below_90pct']):.2f}-{max(found['seconds_below_90pct']):.2f})")


if __name__ == "__main__":
    main()
