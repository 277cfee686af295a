"""A managed 3-node MariaDB Galera cluster, each node on a loop device of its own: what each node read
against its own InnoDB counters and its own device, the cluster's writes against the write-sets
applied, conflicts retried on the same rows, a node SIGKILLed mid-run, and the CPU per read of a node
of the cluster against that node alone.

Usage (as root, from the repository, after the README's setup command):

    .venv/bin/python bench/bench_galera.py [--scale 6000] [--seconds 20] [--image-gib 2]

Three ext4 loop devices (direct I/O on, images under --dir) hold one node each (--galera-data-dir);
the cluster is loaded with 3 schemas of --scale rows (16 KiB pages, buffer pool 16 MiB) and then:
  A  2 sessions per node, 20% UPDATEs;
  B  the same with 50% UPDATEs and --hot-schema-frequency 1 (every statement on schema 1's rows);
  C  node1 as the run's only node (--nodes node1: all 6 sessions there), 20% UPDATEs; the others still
     apply its write-sets, on the same CPUs;
  D  A again, node3 SIGKILLed 8 s into the window;
  E  a single MariaDB server (no Galera) on a fourth loop device, the same data set, 2 sessions
     (--schemas 2 --threads-per-schema 1), 20% UPDATEs: its CPU per read against A's node1 (2 sessions).
It prints a Markdown block for bench/RESULTS.md and writes the raw figures to <dir>/bench-galera.json.
The cluster, the mounts, the loop devices and --dir are removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchkit import REPO, fresh_directory, heading, now

sys.path.insert(0, str(REPO))
from tests.integration.conftest import dbio, load_result, result_dir  # noqa: E402


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def loop_devices(base: Path, count: int, gib: int, undo: list[list[str]]) -> list[tuple[Path, str]]:
    """count ext4 filesystems on loop devices (direct I/O: the image's page cache is not between)."""
    out = []
    for k in range(1, count + 1):
        image, mount = base / f"disk{k}.img", base / f"d{k}"
        with open(image, "wb") as f:
            f.truncate(gib << 30)
        device = sh("losetup", "--find", "--show", "--direct-io=on", str(image))
        undo.append(["losetup", "-d", device])
        sh("mkfs.ext4", "-q", device)
        mount.mkdir()
        sh("mount", device, str(mount))
        undo.append(["umount", str(mount)])
        os.chmod(mount, 0o755)
        out.append((mount, Path(device).name))
    return out


def run(common: list[str], *extra: str, kill: tuple[Path, float] | None = None) -> dict:
    args = ["run", *common, *extra]
    if kill is None:
        done = dbio(*args, timeout=900)
        if done.code != 0:
            raise SystemExit(f"dbio {' '.join(args)} failed ({done.code}):\n{done.text}")
        return {**load_result(result_dir(done)), "_dir": str(result_dir(done))}
    pid_file, after = kill
    proc = subprocess.Popen([sys.executable, "-m", "dbio", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})
    time.sleep(after)
    os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
    out, err = proc.communicate(timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"dbio {' '.join(args)} failed ({proc.returncode}):\n{out}{err}")
    line = next(ln for ln in out.splitlines() if ln.startswith("result: "))
    directory = Path(line.split(": ", 1)[1]).parent
    doc = {**load_result(directory), "_dir": str(directory), "_stderr": err}
    return doc


def node_checks(doc: dict, devices: dict[str, str]) -> list[dict]:
    """Per node: its sessions' reads against its InnoDB's data reads and its own device's reads."""
    out = []
    for node in doc["nodes"]:
        f, counters = node.get("figures") or doc["figures"], node.get("normalized") or doc["normalized"]
        if node["name"] not in devices:  # a run of one node calls it node1 whatever its server
            continue
        seconds = f["window_seconds"]
        reads = f["load_profile"]["physical_reads_per_s"] * seconds
        data_reads = counters["end"]["data"]["reads"] - counters["begin"]["data"]["reads"]
        device = devices[node["name"]]
        device_reads = ((f.get("devices") or {}).get(device) or {}).get("reads")
        ws = f.get("writesets") or {}
        out.append({"node": node["name"], "reads": reads, "innodb_data_reads": data_reads, "device": device,
                    "device_reads": device_reads, "vs_innodb_pct": 100.0 * (reads / data_reads - 1),
                    "vs_device_pct": 100.0 * (reads / device_reads - 1) if device_reads else None,
                    "replicated": (ws.get("replicated_per_s") or 0) * seconds,
                    "applied": (ws.get("applied_per_s") or 0) * seconds,
                    "cert_failures": (ws.get("cert_failures_per_s") or 0) * seconds,
                    "bf_aborts": (ws.get("bf_aborts_per_s") or 0) * seconds,
                    "flow_control_pct": ws.get("flow_control_paused_pct"),
                    "cpu_us_per_read": f["cpu"].get("db_cpu_us_per_read"), "stopped": bool(node.get("stopped"))})
    return out


def mariadbds_of(root: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except OSError:
            continue
        if any(a.startswith(b"--datadir=") and os.fsencode(str(root)) in a for a in args):
            found.append(int(entry.name))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="6000")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--image-gib", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-galera"))
    args = parser.parse_args()
    base = fresh_directory(args.dir)
    os.chmod(base, 0o755)
    undo: list[list[str]] = []
    instance = base / "cluster"
    here = ["--engine", "mysql", "--data-dir", str(instance)]
    out: dict = {"date": now(), "scale": args.scale, "seconds": args.seconds}
    single: list[str] = []
    try:
        places = loop_devices(base, 4, args.image_gib, undo)
        single_place, places = places[3], places[:3]
        devices = {f"node{k}": dev for k, (_, dev) in enumerate(places, 1)}
        init = ["instance", "init", *here, "--galera", "3", "--buffer-pool", "16MiB",
                *[a for mount, _ in places for a in ("--galera-data-dir", str(mount))]]
        started = time.monotonic()
        done = dbio(*init, timeout=600)
        if done.code != 0:
            raise SystemExit(done.text)
        out["init_seconds"] = time.monotonic() - started
        out["init_output"] = done.text
        common = [*here, "--buffer-pool", "16MiB", "--results-dir", str(base / "results"), "--scale", args.scale,
                  "--schemas", "3", "--scan-table-size", "1MiB", "--warmup", "3s", "--run-time", f"{args.seconds}s",
                  "--threads-per-schema", "2"]
        done = dbio("setup", *common[:-2], timeout=3600)
        if done.code != 0:
            raise SystemExit(done.text)
        out["setup_output"] = [ln for ln in done.out.splitlines() if "holds setup" in ln or "loaded" in ln]
        a = run(common, "--update-pct", "20", "--label", "A")
        b = run(common, "--update-pct", "50", "--hot-schema-frequency", "1", "--label", "B")
        c = run(common, "--update-pct", "20", "--nodes", "node1", "--threads-per-schema", "2", "--label", "C")
        pid3 = places[2][0] / "dbio-node3" / "socket" / "mysqld.pid"
        d = run(common, "--update-pct", "20", "--label", "D", kill=(pid3, 3 + 3 + 8))
        for name, doc in (("A", a), ("B", b), ("C", c), ("D", d)):
            out[name] = {"nodes": node_checks(doc, devices), "totals": doc["totals"], "status": doc["status"],
                         "events": [e.get("kind") for e in doc.get("events", [])],
                         "writesets": doc["figures"].get("writesets"),
                         "cpu_us_per_read": doc["figures"]["cpu"].get("db_cpu_us_per_read")}
        out["D"]["stderr_lost"] = [ln for ln in d["_stderr"].splitlines() if "stopped" in ln]
        dbio("instance", "destroy", "--yes", *here, timeout=600)  # its CPUs to the single server alone
        out["mariadbd_left"] = mariadbds_of(base)
        single = ["--engine", "mysql", "--data-dir", str(single_place[0] / "single")]
        shape = ["--buffer-pool", "16MiB", "--results-dir", str(base / "results"), "--scale", args.scale,
                 "--scan-table-size", "1MiB"]
        done = dbio("setup", *single, *shape, "--schemas", "3", timeout=3600)
        if done.code != 0:
            raise SystemExit(done.text)
        e = run([*single, *shape, "--warmup", "3s", "--run-time", f"{args.seconds}s"], "--schemas", "2",
                "--threads-per-schema", "1", "--update-pct", "20", "--label", "E")
        out["E"] = {"nodes": node_checks(e, {"node1": single_place[1]}), "totals": e["totals"], "status": e["status"],
                    "events": [ev.get("kind") for ev in e.get("events", [])],
                    "cpu_us_per_read": e["figures"]["cpu"].get("db_cpu_us_per_read")}
        compare = dbio("compare", c["_dir"], a["_dir"])
        out["compare_head"] = compare.out.splitlines()[:12]
    finally:
        done = dbio("instance", "destroy", "--yes", *here, timeout=600)
        out["destroy"] = done.text.strip().splitlines()[-1:] if done.text else []
        if single:
            dbio("instance", "destroy", "--yes", *single, timeout=600)
        out["mariadbd_left"] = out.get("mariadbd_left", []) + mariadbds_of(base)
        for cmd in reversed(undo):
            subprocess.run(cmd, capture_output=True)
    report(out)
    raw = Path("/var/tmp/bench-galera.json")
    raw.write_text(json.dumps(out, indent=1, default=str))
    shutil.rmtree(base, ignore_errors=True)
    print(f"raw figures: {raw}")


def report(out: dict) -> None:
    print(heading(out["date"], f", scale {out['scale']} x 3 schemas, {out['seconds']} s windows"))
    print()
    print(f"init of 3 nodes: {out['init_seconds']:.1f} s; no mariadbd left after destroy: {out['mariadbd_left'] == []}")
    for name in ("A", "B", "C", "D", "E"):
        run_ = out.get(name)
        if not run_:
            continue
        print(f"\n{name}: status {run_['status']}, sessions' UPDATEs {run_['totals']['updates']}, retries "
              f"{run_['totals'].get('retries')}, events {sorted(set(run_['events']))}")
        print("| node | reads | Innodb_data_reads | vs InnoDB | device reads | vs device | replicated | applied | "
              "cert fail | BF abort | FC paused % | CPU us/read |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for n in run_["nodes"]:
            print(f"| {n['node']}{' (stopped)' if n['stopped'] else ''} | {n['reads']:,.0f} | "
                  f"{n['innodb_data_reads']:,.0f} | {n['vs_innodb_pct']:+.2f}% | {n['device_reads'] or 0:,.0f} | "
                  f"{(n['vs_device_pct'] or 0):+.2f}% | {n['replicated']:,.0f} | {n['applied']:,.0f} | "
                  f"{n['cert_failures']:,.0f} | {n['bf_aborts']:,.0f} | {n['flow_control_pct'] or 0:.1f} | "
                  f"{n['cpu_us_per_read'] or 0:.1f} |")


if __name__ == "__main__":
    main()
