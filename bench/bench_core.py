"""The core benchmark: load rate, physical reads/s and CPU per read against fio, 512-session start.

Usage (from the repository, after the README's setup command):

    .venv/bin/python bench/bench_core.py [--dir /var/tmp/dbio-bench] [--scale 4GiB] [--rounds 3]

It installs fio from Debian's packages when missing, creates its own embedded instance (direct
I/O, shared_buffers 128MB), loads the data set, and alternates fio and dbio at each session count
so that every ratio compares runs from the same time window. fio reads the very files of dbio's
table (read-only, O_DIRECT): the same bytes at the same place on the same device, with the same
history in any cache below the VM, so the comparison is storage against storage and nothing else.
It prints a Markdown block for bench/RESULTS.md and writes the raw figures to
<dir>/bench-core.json. The instance is removed at the end (--keep keeps it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from dbio.collect import procfs

from benchkit import dbio, destroy, fresh_directory, heading, machine, now, result_of, standard_options


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def ensure_fio() -> str:
    fio = shutil.which("fio")
    if fio:
        return fio
    print("installing fio from Debian's packages", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    apt = ["apt-get"] if os.geteuid() == 0 else ["sudo", "apt-get"]
    subprocess.run(apt + ["update", "-q"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(apt + ["install", "-y", "-q", "fio"], check=True, env=env, stdout=subprocess.DEVNULL)
    return shutil.which("fio") or "fio"


def run_fio(fio: str, files: list[Path], jobs: int, seconds: int) -> dict:
    busy = procfs.HostBusy()
    proc = sh([fio, "--name=randread", "--filename=" + ":".join(str(f) for f in files), "--readonly",
               "--rw=randread", "--bs=8k",
               "--direct=1", "--ioengine=psync", f"--numjobs={jobs}", "--time_based", f"--runtime={seconds}",
               "--group_reporting", "--output-format=json"])
    busy_seconds = busy.seconds()
    job = json.loads(proc.stdout)["jobs"][0]["read"]
    iops = job["iops"]
    return {"jobs": jobs, "iops": iops, "lat_us": job["clat_ns"]["mean"] / 1000,
            "reads_per_host_cpu_s": iops * seconds / busy_seconds if busy_seconds > 0 else None}


def run_dbio(common: list[str], sessions: int, seconds: int, label: str) -> dict:
    doc = result_of(dbio("run", *common, "-t", str(sessions), "--run-time", f"{seconds}s", "--warmup", "3s",
                         "--label", label))
    f = doc["figures"]
    devices = f.get("devices") or {}
    device_reads = sum(d["reads"] or 0 for d in devices.values())
    reads = f["load_profile"]["physical_reads_per_s"] * f["window_seconds"]
    return {"sessions": sessions, "reads_per_s": f["load_profile"]["physical_reads_per_s"],
            "avg_read_us": f["latency"]["avg_read_us"],
            "reads_per_host_cpu_s": f["cpu"]["reads_per_host_cpu_second"],
            "reads_per_db_cpu_s": f["cpu"]["reads_per_db_cpu_second"],
            "db_cpu_us_per_read": f["cpu"]["db_cpu_us_per_read"],
            "device_vs_db_reads": device_reads / reads if reads else None,
            "rows_from_storage": f["validity"]["blocks_read_per_row"],
            "plan": " > ".join(doc["plans"]["select"]["nodes"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench"))
    parser.add_argument("--scale", default="4GiB")
    # This kind of machine's storage changes speed from one minute to the next (fio: 4k to 36k IOPS
    # within ten minutes), so many short fio/dbio pairs beat a few long ones: ratios come from
    # runs seconds apart, and medians of the pairs are reported.
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--sessions", default="1,2,4,8")
    parser.add_argument("--start-sessions", type=int, default=512)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    fio = ensure_fio()
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    common = standard_options(data_dir, base / "results", args.scale)
    out: dict = {"date": now(), **machine(), "scale": args.scale,
                 "fio": sh([fio, "--version"]).stdout.strip()}
    try:
        dbio("instance", "init", "--data-dir", str(data_dir), "--shared-buffers", "128MiB")  # its options only
        t0 = time.monotonic()
        dbio("setup", *common)
        wall = time.monotonic() - t0
        setup = json.loads(json.dumps(result_setup(common)))
        out["setup"] = {**setup, "command_wall_seconds": wall,
                        "command_mb_per_s": setup["loaded_bytes"] / 1e6 / wall}
        print(f"setup: {setup['loaded_bytes'] / 2**30:.1f} GiB, {setup['mb_per_s']:.0f} MB/s "
              f"(dbio setup command: {wall:.1f} s, {out['setup']['command_mb_per_s']:.0f} MB/s)", flush=True)

        files = table_files(data_dir)
        out["fio_files"] = [str(f) for f in files]
        rows = []
        for rnd in range(args.rounds):
            for sessions in [int(s) for s in args.sessions.split(",")]:
                f = run_fio(fio, files, sessions, args.seconds)
                d = run_dbio(common, sessions, args.seconds, f"bench-r{rnd}-s{sessions}")
                row = {"round": rnd, "sessions": sessions, "fio": f, "dbio": d,
                       "ratio": d["reads_per_s"] / f["iops"]}
                rows.append(row)
                print(f"round {rnd} sessions {sessions}: fio {f['iops']:,.0f} IOPS "
                      f"({f['reads_per_host_cpu_s'] or 0:,.0f}/host-CPU-s), dbio {d['reads_per_s']:,.0f} reads/s "
                      f"({d['reads_per_host_cpu_s']:,.0f}/host-CPU-s, {d['db_cpu_us_per_read']:.1f} us DB CPU/read, "
                      f"device/db {d['device_vs_db_reads']:.4f}), ratio {row['ratio']:.2f}", flush=True)
        out["rows"] = rows
        t0 = time.monotonic()
        doc = result_of(dbio("run", *common, "-t", str(args.start_sessions), "--run-time", "5s", "--warmup", "0",
                             "--label", f"start-{args.start_sessions}"))
        out["start"] = {"sessions": args.start_sessions, "connect_seconds": doc["timeline"]["connect_seconds"],
                        "start_seconds": doc["timeline"]["start_seconds"], "status": doc["status"],
                        "command_wall_seconds": time.monotonic() - t0}
        print(f"{args.start_sessions} sessions: connected in {doc['timeline']['connect_seconds']:.2f} s, "
              f"started together {doc['timeline']['start_seconds']:.2f} s after the first connection", flush=True)
    finally:
        (base / "bench-core.json").write_text(json.dumps(out, indent=1))
        if not args.keep:
            destroy(data_dir)
    print()
    print(markdown(out))


def connect(data_dir: Path):
    import psycopg

    meta = json.loads((data_dir / "dbio-instance.json").read_text())
    return psycopg.connect(f"host={data_dir / 'socket'} port={meta['port']} user=dbio dbname=dbio")


def table_files(data_dir: Path) -> list[Path]:
    """The segment files (1 GiB each) of the data table, for fio to read."""
    with connect(data_dir) as conn:
        directory, relpath = conn.execute(
            "SELECT current_setting('data_directory'), pg_relation_filepath('dbio_1.cf1')").fetchone()
    first = Path(directory) / relpath
    files = [first]
    n = 1
    while Path(f"{first}.{n}").exists():
        files.append(Path(f"{first}.{n}"))
        n += 1
    return files


def result_setup(common: list[str]) -> dict:
    """The setup record, read back the way a run records it."""
    data_dir = Path(common[common.index("--data-dir") + 1])
    with connect(data_dir) as conn:
        seconds, loaded, streams, steps = conn.execute(
            "SELECT seconds, loaded_bytes, streams, steps FROM dbio.setup").fetchone()
    return {"seconds": seconds, "loaded_bytes": loaded, "streams": streams, "steps": steps,
            "mb_per_s": loaded / 1e6 / seconds}


def markdown(out: dict) -> str:
    lines = [heading(out["date"], f", {out['fio']}"), ""]
    if "setup" in out:
        s = out["setup"]
        lines.append(f"- setup, empty database to loaded, indexed, analysed {out['scale']}: {s['seconds']:.1f} s = "
                     f"**{s['mb_per_s']:.0f} MB/s** (whole `dbio setup` command incl. instance restarts: "
                     f"{s['command_wall_seconds']:.1f} s = {s['command_mb_per_s']:.0f} MB/s)")
    rows = out.get("rows") or []
    if rows:
        lines += ["", "| sessions | fio IOPS | dbio reads/s | dbio/fio (min-max) | fio reads/host-CPU-s "
                      "| dbio reads/host-CPU-s | dbio/fio CPU efficiency | DB CPU us/read | dbio read latency us "
                      "| device reads / dbio reads |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for sessions in sorted({r["sessions"] for r in rows}):
            mine = [r for r in rows if r["sessions"] == sessions]

            def med(get):
                values = [get(r) for r in mine if get(r) is not None]
                return statistics.median(values) if values else float("nan")

            ratios = [r["ratio"] for r in mine]
            lines.append(f"| {sessions} | {med(lambda r: r['fio']['iops']):,.0f} | "
                         f"{med(lambda r: r['dbio']['reads_per_s']):,.0f} | "
                         f"**{med(lambda r: r['ratio']):.2f}** ({min(ratios):.2f}-{max(ratios):.2f}) | "
                         f"{med(lambda r: r['fio']['reads_per_host_cpu_s']):,.0f} | "
                         f"{med(lambda r: r['dbio']['reads_per_host_cpu_s']):,.0f} | "
                         f"{med(lambda r: r['dbio']['reads_per_host_cpu_s'] / r['fio']['reads_per_host_cpu_s']):.2f} | "
                         f"{med(lambda r: r['dbio']['db_cpu_us_per_read']):.1f} | "
                         f"{med(lambda r: r['dbio']['avg_read_us']):.0f} | "
                         f"{med(lambda r: r['dbio']['device_vs_db_reads']):.4f} |")
        lines.append("")
        lines.append(f"Medians of {len(rows) // max(1, len({r['sessions'] for r in rows}))} pairs per session count; "
                     "each pair runs fio then dbio seconds apart on the same files, and the ratio columns are "
                     "medians of the pairs' own ratios.")
    if "start" in out:
        s = out["start"]
        lines.append(f"- {s['sessions']} sessions: connected in {s['connect_seconds']:.2f} s, released together "
                     f"{s['start_seconds']:.2f} s after the first connection ({s['status']})")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
