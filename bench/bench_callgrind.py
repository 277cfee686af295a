"""Instructions per physical read, counted by callgrind: where a read's user-space CPU goes, repeatably.

Usage (from the repository, after the README's setup command; needs valgrind and fio, Debian packages):

    .venv/bin/python bench/bench_callgrind.py [--work-units 1,8,32] [--iterations 2000] [--scale 2GiB]

perf's samples (bench_cpu.py) say where the time goes but move with the machine; callgrind counts the
instructions a process executes, which are the same from run to run whatever else the host does, so
a change to the work loop, a setting or the engine can be judged to the instruction. It counts user
space only: the kernel's read path, the larger part of a read's CPU (bench_cpu.py), is not in it.

The bench loads its own embedded instance (direct I/O, shared_buffers 128MB, index plan, update pct
0), stops it and starts its postmaster under `valgrind --tool=callgrind`, collecting only inside the
work loop's CALL (`plpgsql_call_handler`). A first slice reads every buffer full, so that each read
measured evicts a page, as in a run. Then for each work unit two backends each run one slice of the
real loop (dbio's slice.sql with the run's control passed in, as a standby's sessions do): a short one
and a long one. Each backend's profile is written when it exits; the long one less the short one is
the loop's steady state (the loop's compile and first plans cancel out), divided by the blocks the
long one read more (calls of smgrstartreadv, one block each on the index path). fio's psync reads of
the same table file are counted the same way (two runs, their difference per read).

It prints a Markdown block for bench/RESULTS.md and removes its instance and directory at the end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchkit import REPO, dbio, destroy, fresh_directory, heading, now, standard_options
from callgrind import Profile, read_profile

sys.path.insert(0, str(REPO))
import psycopg  # noqa: E402

from dbio.engines.postgres import sqlfiles, workload  # noqa: E402
from dbio.run.plan import NEVER  # noqa: E402
from dbio.stats.histogram import bounds_us  # noqa: E402

COLLECT_IN = "plpgsql_call_handler"  # the work loop's CALL, and nothing of the connection around it
READS = "smgrstartreadv"  # one call per read started; on the index path each reads one block
# (row, function whose inclusive instructions it shows, depth in the table); the first row is the total
ROWS = (
    ("the work loop's CALL, all of it", None, 0),
    ("the SELECT statements (SPI)", "_SPI_execute_plan", 1),
    ("executor start (per statement)", "standard_ExecutorStart", 2),
    ("executor run", "standard_ExecutorRun", 2),
    ("index: descent and leaf (index_getnext_tid)", "index_getnext_tid", 3),
    ("heap fetch (index_fetch_heap)", "index_fetch_heap", 3),
    ("buffer lookup, victim, pin (StartReadBuffer)", "StartReadBuffer", 4),
    ("the read and its completion (WaitReadBuffers)", "WaitReadBuffers", 4),
    ("of which the page's checksum (pg_checksum_page)", "pg_checksum_page", 5),
    ("executor end (per statement)", "standard_ExecutorEnd", 2),
)
ACROSS = (  # functions called from many places, wherever they were called: (row, functions, counted)
    ("buffer mapping and other hash tables (hash_search_with_hash_value)", ("hash_search_with_hash_value",), "own"),
    ("log level checks of messages not logged (errstart)", ("errstart",), "own"),
    ("memory allocation (AllocSetAlloc, palloc, palloc0, AllocSetFree, pfree)",
     ("AllocSetAlloc", "palloc", "palloc0", "AllocSetFree", "pfree"), "own"),
    ("the loop's clock readings (clock_timestamp)", ("clock_timestamp",), "inclusive"),
)


def per_read(long: Profile, short: Profile) -> tuple[int, dict[str, float]]:
    """The long profile less the short one, per block read more: (reads, row -> instructions)."""
    reads = long.calls.get(READS, 0) - short.calls.get(READS, 0)
    if reads <= 0:
        raise SystemExit(f"the long slice read no more blocks than the short one ({reads}): data set cached?")
    out: dict[str, float] = {}
    for label, function, _ in ROWS:
        if function is None:
            out[label] = (long.total - short.total) / reads
        else:
            out[label] = (long.inclusive.get(function, 0) - short.inclusive.get(function, 0)) / reads
    statements = ROWS[1][0]
    out["the PL/pgSQL loop itself (keys, timing, histogram, loop control)"] = out[ROWS[0][0]] - out[statements]
    for label, functions, counted in ACROSS:
        after, before = getattr(long, counted), getattr(short, counted)
        out[label] = sum(after.get(f, 0) - before.get(f, 0) for f in functions) / reads
    for obj in ("libc.so.6", "plpgsql.so"):
        out[f"own instructions in {obj}"] = (long.by_object.get(obj, 0) - short.by_object.get(obj, 0)) / reads
    return reads, out


class ServerUnderCallgrind:
    """The bench instance's postmaster, run by its server user under callgrind; every backend it
    forks writes its profile to out/cg.<pid> when it exits."""

    def __init__(self, data_dir: Path, out: Path) -> None:
        meta = json.loads((data_dir / "dbio-instance.json").read_text())
        member = meta["members"][0]
        self.user, self.bin = meta["server_user"], Path(meta["bin_dir"])
        self.pgdata, self.socket, self.port = member["data_dir"], member["socket_dir"], member["port"]
        self.out = out
        out.mkdir()
        subprocess.run(["chown", self.user, str(out)], check=True)
        self.log = open(out / "server.log", "w")
        self.proc = subprocess.Popen(
            ["runuser", "-u", self.user, "--", "valgrind", "--tool=callgrind", f"--toggle-collect={COLLECT_IN}",
             f"--callgrind-out-file={out}/cg.%p", str(self.bin / "postgres"), "-D", self.pgdata],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=out)
        deadline = time.monotonic() + 180
        while subprocess.run([str(self.bin / "pg_isready"), "-q", "-h", self.socket, "-p", str(self.port)]).returncode:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()  # valgrind's, and with it the postmaster's, so that the instance can be destroyed
                self.proc.wait(timeout=60)
                raise SystemExit(f"the server under callgrind did not start; see {out / 'server.log'}")
            time.sleep(1)

    def conninfo(self) -> str:
        return f"host={self.socket} port={self.port} dbname=dbio user={self.user}"

    def stop(self) -> None:
        subprocess.run(["runuser", "-u", self.user, "--", str(self.bin / "pg_ctl"), "-D", self.pgdata, "-m", "fast",
                        "-w", "-t", "120", "stop"], capture_output=True)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=60)
        self.log.close()


def one_slice(server: ServerUnderCallgrind, work_unit: int, iterations: int) -> tuple[Profile, tuple]:
    """One backend: dbio's session settings, then one slice of `iterations`; its profile once it has exited."""
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        conn.execute(sqlfiles.text("session_init.sql"), workload.session_settings(1, "index"))
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        scale = conn.execute("SELECT rows FROM dbio.setup_tables WHERE kind = 'data'").fetchone()[0]
        control = {"run_id": 1, "started_at": conn.execute("SELECT now()::text").fetchone()[0], "window_open": None,
                   "deadline": None, "slice_seconds": 1e6, "scale": scale, "work_unit": work_unit,
                   "update_work_unit": work_unit, "update_pct": 0, "scan_pct": 0, "scan_workers": 0, "fill_bytes": 0,
                   "hot_lo": 1, "hot_rows": 0, "hot_every": NEVER, "hot_schema_every": NEVER, "think_every": NEVER,
                   "think_min": 0, "think_max": 0, "bounds_us": bounds_us()}
        row = conn.execute(sqlfiles.text("slice_call.sql"), {
            "run_id": 1, "session": 1, "barrier": False, "iterations_before": 0, "selects_before": 0,
            "max_iterations": iterations, "think_left": 0, "due": None, "control": json.dumps(control)}).fetchone()
    path = server.out / f"cg.{pid}"
    deadline = time.monotonic() + 60
    while not path.exists() or "totals:" not in path.read_text()[-200:]:
        if time.monotonic() > deadline:
            raise SystemExit(f"no profile from backend {pid} ({path})")
        time.sleep(0.5)
    return read_profile(path), row


def fio_per_read(files: list[str], out: Path, short: int, long: int) -> float:
    """fio's psync O_DIRECT 8 KiB random reads of the same files, user-space instructions per read."""
    totals = []
    for n in (short, long):
        target = out / f"fio.{n}"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={target}", "fio", "--name=read",
                        "--filename=" + ":".join(f.replace(":", "\\:") for f in files), "--rw=randread", "--bs=8k",
                        "--direct=1", "--ioengine=psync", "--thread", f"--number_ios={n}", "--norandommap",
                        "--randrepeat=0", "--output-format=terse"], check=True, capture_output=True)
        totals.append(read_profile(target).total)
    return (totals[1] - totals[0]) / (long - short)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work-units", default="1,8,32")
    ap.add_argument("--iterations", type=int, default=2000, help="the long slice's iterations at work unit 8 "
                    "(scaled by 8/work unit, so each long slice reads about as many blocks); the short one has a tenth")
    ap.add_argument("--scale", default="2GiB")
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/dbio-bench-callgrind"))
    ap.add_argument("--keep-profiles", type=Path, help="copy the backends' and fio's callgrind files here "
                    "(for callgrind_annotate) before the bench's directory is removed")
    args = ap.parse_args()
    base = fresh_directory(args.dir)
    data_dir = base / "instance"
    started = now()
    server = None
    try:
        dbio("setup", *standard_options(data_dir, base / "results", args.scale))
        dbio("instance", "stop", "--data-dir", str(data_dir))
        server = ServerUnderCallgrind(data_dir, base / "profiles")
        with psycopg.connect(server.conninfo()) as conn:
            checksums = conn.execute("SHOW data_checksums").fetchone()[0]
            io_method = conn.execute("SHOW io_method").fetchone()[0]
            buffers = int(conn.execute("SELECT setting FROM pg_settings WHERE name = 'shared_buffers'").fetchone()[0])
            table = conn.execute("SELECT pg_relation_filepath(format('%I.%I', schema_name, table_name)), "
                                 "pg_relation_size(format('%I.%I', schema_name, table_name)) "
                                 "FROM dbio.setup_tables WHERE kind = 'data'").fetchone()
        # Fill every buffer first: the slices measured then evict a page for each they read, as a run does
        # (on a fresh server the first reads take free buffers, which costs less).
        one_slice(server, 8, buffers * 3 // (2 * 8))
        columns: dict[int, tuple[int, dict[str, float]]] = {}
        for work_unit in (int(w) for w in args.work_units.split(",")):
            long = max(20, args.iterations * 8 // work_unit)
            short_profile, _ = one_slice(server, work_unit, long // 10)
            long_profile, _ = one_slice(server, work_unit, long)
            columns[work_unit] = per_read(long_profile, short_profile)
            print(f"work unit {work_unit}: {columns[work_unit][0]:,} reads, "
                  f"{columns[work_unit][1][ROWS[0][0]]:,.0f} instructions each", file=sys.stderr)
        server.stop()
        server = None
        segment = 1 << 30
        files = [str(Path(data_dir / "pgdata" / table[0]))] + [
            f"{data_dir / 'pgdata' / table[0]}.{i}" for i in range(1, (table[1] + segment - 1) // segment)]
        fio = fio_per_read(files, base, 2000, 12000)
    finally:
        if server is not None:
            server.stop()
        if args.keep_profiles:
            shutil.copytree(base / "profiles", args.keep_profiles, dirs_exist_ok=True)
            for fio_file in base.glob("fio.*"):
                shutil.copy(fio_file, args.keep_profiles)
        destroy(data_dir, base)
    units = list(columns)
    print(heading(started, f", {args.scale}, index plan, io_method {io_method}, data_checksums {checksums}, "
                           f"callgrind"))
    print()
    print("| user-space instructions per physical read | " + " | ".join(f"work unit {w}" for w in units) + " |")
    print("|---|" + "---:|" * len(units))
    print("| blocks read (the long slice less the short one) | "
          + " | ".join(f"{columns[w][0]:,}" for w in units) + " |")
    labels = [(label, depth) for label, _, depth in ROWS] + [
        ("the PL/pgSQL loop itself (keys, timing, histogram, loop control)", 1)]
    for label, depth in labels:
        name = ("&nbsp;&nbsp;" * depth) + (f"**{label}**" if depth == 0 else label)
        print(f"| {name} | " + " | ".join(f"{columns[w][1][label]:,.0f}" for w in units) + " |")
    print("| *across the tree* | " + " | " * (len(units) - 1) + " |")
    for label in [row[0] for row in ACROSS] + ["own instructions in libc.so.6", "own instructions in plpgsql.so"]:
        print(f"| {label} | " + " | ".join(f"{columns[w][1][label]:,.0f}" for w in units) + " |")
    print()
    print(f"fio, psync O_DIRECT 8 KiB random reads of the same table files, user space: **{fio:,.0f}** "
          f"instructions per read.")


if __name__ == "__main__":
    main()
