"""The white paper's set on a loop device of its own, each dbio figure beside the device's.

Usage (as root, from the repository, after the README's setup command; fio optional):

    .venv/bin/python bench/bench_white_paper.py [--dir /var/tmp/dbio-bench-wp] [--size 3GiB]
                                                [--scale 256MiB] [--seconds 20] [--warmup 5s]
                                                [--wal 128MB]

It makes a file-backed loop device (direct I/O on), an ext4 on it, and an embedded instance there
(shared_buffers 32MiB, direct I/O), loads the data set and a scan table, then runs, each as its own
result: single-block transactions of 1, 2 and 4 reads (work_unit 1, 2, 4), 1 read + 1 write per
commit (update_pct 100, work unit 1), DSS scans with 0 and 2 parallel workers, and the maintenance
operations: load, index, backup (to the same filesystem), recovery (first changes, and with three
changes per block; --wal of WAL before the crash: on a slow device, redo of 128 MB outlasts pg_ctl's
120 s wait), checkpoint. For each it prints what dbio measured and what the loop device's
/proc/diskstats counted over the same window, as a Markdown block for bench/RESULTS.md; raw
figures go to bench/results/<date>-white-paper.json. Everything it made is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from benchkit import RESULTS, dbio, destroy, fresh_directory, heading, now, result_of

RUNS = (  # (name, options): the white paper's transaction shapes and scans
    ("1-read transactions", ["--work-unit", "1"]),
    ("2-read transactions", ["--work-unit", "2"]),
    ("4-read transactions", ["--work-unit", "4"]),
    ("1 read + 1 write per commit", ["--work-unit", "1", "--update-pct", "100"]),
    ("DSS scans, no workers", ["--scan-pct", "100"]),
    ("DSS scans, 2 workers", ["--scan-pct", "100", "--scan-workers", "2"]),
)


def sh(*command: str) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def loop_device(base: Path, size: str) -> tuple[str, Path]:
    image, mount = base / "disk.img", base / "mnt"
    sh("truncate", "-s", size.replace("GiB", "G").replace("MiB", "M"), str(image))
    device = sh("losetup", "--find", "--show", "--direct-io=on", str(image))
    sh("mkfs.ext4", "-q", device)
    mount.mkdir()
    sh("mount", device, str(mount))
    mount.chmod(0o755)
    return device, mount


def device_figures(doc: dict, name: str) -> dict:
    return ((doc.get("figures") or {}).get("devices") or {}).get(name) or {}


def row_of_run(title: str, doc: dict, device: str) -> dict:
    f, d = doc["figures"], device_figures(doc, device)
    shape = f.get("shape") or {}
    return {"what": title, "engine_reads_per_s": f["load_profile"]["physical_reads_per_s"],
            "engine_read_mib_per_s": f["io_profile"]["data_read_mib_per_s"],
            "engine_writes_per_s": f["load_profile"]["physical_writes_per_s"],
            "reads_per_statement": shape.get("reads_per_statement"),
            "data_writes_per_commit": shape.get("data_writes_per_commit"),
            "scan_mib_per_s": shape.get("scan_mib_per_s"),
            "device_reads_per_s": d.get("reads_per_s"), "device_read_mib_per_s": d.get("read_mib_per_s"),
            "device_writes_per_s": d.get("writes_per_s"), "device_write_mib_per_s": d.get("write_mib_per_s")}


def row_of_ops(title: str, doc: dict, device: str) -> dict:
    f, d = doc["figures"], device_figures(doc, device)
    return {"what": title, "seconds": f.get("seconds"), "bytes": f.get("bytes"), "mb_per_s": f.get("mb_per_s"),
            "device_reads_per_s": d.get("reads_per_s"), "device_read_mib_per_s": d.get("read_mib_per_s"),
            "device_writes_per_s": d.get("writes_per_s"), "device_write_mib_per_s": d.get("write_mib_per_s")}


def cell(x: object) -> str:
    return "-" if x is None else f"{x:,.2f}" if isinstance(x, float) and abs(x) < 100 else \
        f"{x:,.0f}" if isinstance(x, (int, float)) else str(x)


def markdown(raw: dict) -> str:
    lines = [heading(raw["date"], ", a file-backed loop device with direct I/O"), "", f"`{raw['command']}`", "",
             "| run | reads/s (engine / device) | MiB/s read (engine / device) | writes/s (engine / device) | "
             "reads per statement | data writes per commit | scan MiB/s |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in raw["runs"]:
        lines.append(f"| {r['what']} | {cell(r['engine_reads_per_s'])} / {cell(r['device_reads_per_s'])} | "
                     f"{cell(r['engine_read_mib_per_s'])} / {cell(r['device_read_mib_per_s'])} | "
                     f"{cell(r['engine_writes_per_s'])} / {cell(r['device_writes_per_s'])} | "
                     f"{cell(r['reads_per_statement'])} | {cell(r['data_writes_per_commit'])} | "
                     f"{cell(r['scan_mib_per_s'])} |")
    lines += ["", "| operation | seconds | MB | MB/s | device reads/s | device read MiB/s | device writes/s | "
                  "device write MiB/s |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in raw["ops"]:
        nbytes = r["bytes"] / 1e6 if isinstance(r["bytes"], (int, float)) else None
        lines.append(f"| {r['what']} | {cell(r['seconds'])} | {cell(nbytes)} | {cell(r['mb_per_s'])} | "
                     f"{cell(r['device_reads_per_s'])} | {cell(r['device_read_mib_per_s'])} | "
                     f"{cell(r['device_writes_per_s'])} | {cell(r['device_write_mib_per_s'])} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-wp"))
    parser.add_argument("--size", default="3GiB")
    parser.add_argument("--scale", default="256MiB")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--warmup", default="5s")
    parser.add_argument("--wal", default="128MB", help="recovery: WAL written before the crash")
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    device, mount = loop_device(base, args.size)
    name = Path(device).name
    data_dir, results = mount / "dbio", mount / "results"
    common = ["--data-dir", str(data_dir), "--shared-buffers", "32MiB", "--scale", args.scale,
              "--scan-table-size", args.scale, "--results-dir", str(results)]
    raw = {"date": now(), "command": "bench/bench_white_paper.py " + " ".join(
        f"--{k} {v}" for k, v in vars(args).items() if k != "dir"), "device": name, "runs": [], "ops": []}
    try:
        dbio("setup", *common)
        for title, options in RUNS:
            doc = result_of(dbio("run", *common, "-t", "2", "--warmup", args.warmup, "--run-time", f"{args.seconds}s",
                                 "--update-pct", "0", *options))
            raw["runs"].append(row_of_run(title, doc, name))
            print(raw["runs"][-1], flush=True)
        target = mount / "backup"
        for title, options in (("index", ["index"]), ("backup", ["backup", "--target", str(target)]),
                               ("recovery, first changes", ["recovery", "--wal", args.wal]),
                               ("recovery, 3 changes per block", ["recovery", "--wal", args.wal,
                                                                  "--changes-per-block", "3"]),
                               ("checkpoint", ["checkpoint", "--dirty", "24MB"]), ("load", ["load"])):
            doc = result_of(dbio("ops", *options, *common))
            raw["ops"].append(row_of_ops(title, doc, name))
            print(raw["ops"][-1], flush=True)
            subprocess.run(["rm", "-rf", str(target)], check=False)
    finally:
        destroy(data_dir)
        subprocess.run(["umount", str(mount)], check=False)
        subprocess.run(["losetup", "-d", device], check=False)
        destroy(data_dir, base)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{raw['date'][:10]}-white-paper.json"
    out.write_text(json.dumps(raw, indent=2) + "\n")
    print(markdown(raw))


if __name__ == "__main__":
    main()
