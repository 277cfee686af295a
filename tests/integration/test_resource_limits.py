"""A server run under a cgroup's CPU quota, then under a read limit on its disk: the result records
each limit and the report names it first. Needs root and cgroup v1's cpu and blkio controllers or
v2's cpu and io; the cgroup made is removed, every process moved back first, even when a test fails."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dbio.collect import cgroup, host
from tests.integration.conftest import SMALL, dbio, load_result, result_dir

NAME = f"dbio-test-{os.getpid()}"


def _hierarchy() -> dict[str, Path] | None:
    """Where to make a cgroup with a CPU quota and an I/O limit: {"cpu": dir, "io": dir, "version": ...}."""
    mounts = cgroup.parse_mounts(Path("/proc/self/mountinfo").read_text())
    if "cpu" in mounts and "blkio" in mounts and mounts["cpu"][1] == "/" and mounts["blkio"][1] == "/":
        return {"cpu": Path(mounts["cpu"][0]), "io": Path(mounts["blkio"][0]), "version": 1}
    if cgroup.UNIFIED in mounts:
        root = Path(mounts[cgroup.UNIFIED][0])
        if {"cpu", "io"} <= set((root / "cgroup.controllers").read_text().split()):
            return {"cpu": root, "io": root, "version": 2}
    return None


HIERARCHY = _hierarchy() if os.geteuid() == 0 else None
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="making cgroups needs root"),
    pytest.mark.skipif(HIERARCHY is None, reason="no cgroup v1 cpu and blkio, nor v2 cpu and io, to use here"),
]


@contextlib.contextmanager
def _cgroup():
    """A cgroup of its own in each hierarchy used; its processes go back to the root before it is removed."""
    dirs = sorted({HIERARCHY["cpu"] / NAME, HIERARCHY["io"] / NAME})
    control = HIERARCHY["cpu"] / "cgroup.subtree_control"
    if HIERARCHY["version"] == 2 and not {"cpu", "io"} <= set(control.read_text().split()):
        control.write_text("+cpu +io")  # children get the controllers (left on: others may use them by now)
    for d in dirs:
        d.mkdir()
    try:
        yield dirs
    finally:
        for d in dirs:
            for pid in (d / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    (d.parent / "cgroup.procs").write_text(pid)
            d.rmdir()


def _move_server(dirs: list[Path], pgdata: Path) -> None:
    """The postmaster and every process of its (later backends are forked into its cgroup)."""
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
    members = [postmaster] + [int(p) for p in subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                                                             text=True).stdout.split()]
    for d in dirs:
        for pid in members:
            (d / "cgroup.procs").write_text(str(pid))


def _set_cpu_quota(directory: Path, cpus: float | None) -> None:
    if HIERARCHY["version"] == 1:
        (directory / "cpu.cfs_quota_us").write_text("-1" if cpus is None else str(int(cpus * 100000)))
    else:
        (directory / "cpu.max").write_text("max 100000" if cpus is None else f"{int(cpus * 100000)} 100000")


def _set_read_iops(directory: Path, device: str, iops: int) -> None:
    if HIERARCHY["version"] == 1:
        (directory / "blkio.throttle.read_iops_device").write_text(f"{device} {iops}")
    else:
        (directory / "io.max").write_text(f"{device} riops={iops}")


def _disk_number(path: Path) -> str:
    """MAJ:MIN of the whole disk under a path (limits are set on disks, not partitions)."""
    name = host.storage_of(path)["diskstats_devices"][0]
    sys_dir = Path("/sys/class/block", name).resolve()
    disk = sys_dir.parent if (sys_dir / "partition").exists() else sys_dir
    return (disk / "dev").read_text().strip()


@pytest.fixture(scope="module")
def limited(workdir):
    data_dir = workdir / "limited"
    args = ["--data-dir", str(data_dir), "--shared-buffers", "16MiB", "--results-dir", str(workdir / "results")]
    done = dbio("setup", *args, *SMALL)
    assert done.code == 0, done.text
    try:
        with _cgroup() as dirs:
            _move_server(dirs, data_dir / "pgdata")
            yield args, dirs, data_dir
    finally:
        dbio("instance", "destroy", "--yes", "--data-dir", str(data_dir))


def _run(args: list[str], *extra: str) -> tuple[dict, str]:
    done = dbio("run", *args, "-t", "2", "--warmup", "1s", "--run-time", "3s", *extra)
    assert done.code == 0, done.text
    return load_result(result_dir(done)), done.out


def test_a_cpu_quota_that_binds_is_recorded_and_said_first(limited):
    args, dirs, _ = limited
    cpu_dir = next(d for d in dirs if d.parent == HIERARCHY["cpu"])
    _set_cpu_quota(cpu_dir, 0.1)
    try:
        status = dbio("instance", "status", "--data-dir", str(limited[2]))
        result, out = _run(args)
    finally:
        _set_cpu_quota(cpu_dir, None)
    limits = result["environment"]["limits"]
    assert [entry["cpu_limit"]["cpus"] for entry in limits] == [0.1], limits
    assert result["figures"]["cpu"]["server_cpu_throttled_periods_pct"] > 50
    assert result["figures"]["cpu"]["server_cpu_throttled_seconds"] > 0
    assert f"limits     CPU quota 0.1 (v{HIERARCHY['version']} /{NAME})" in status.out, status.text
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    assert warnings and "may use at most 0.1 CPUs" in warnings[0], out


def test_a_read_limit_on_the_disk_is_recorded_and_said(limited):
    args, dirs, data_dir = limited
    io_dir = next(d for d in dirs if d.parent == HIERARCHY["io"])
    device = _disk_number(data_dir)
    _set_read_iops(io_dir, device, 300)
    try:
        result, out = _run(args)
    finally:
        _set_read_iops(io_dir, device, 0) if HIERARCHY["version"] == 1 else \
            (io_dir / "io.max").write_text(f"{device} riops=max")
    limit = result["environment"]["limits"][0]["io_limits"]
    assert [(entry["device"], entry["read_iops"]) for entry in limit] == [(device, 300)]
    assert result["figures"]["load_profile"]["physical_reads_per_s"] <= 300 * 1.15  # the limit, not the disk
    assert "I/O is limited by its cgroup" in out and "300 reads/s" in out


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is missing (Debian package fio)")
def test_a_baseline_whose_fio_ran_outside_the_server_s_limits_is_said(limited):
    args, dirs, _ = limited
    cpu_dir = next(d for d in dirs if d.parent == HIERARCHY["cpu"])
    _set_cpu_quota(cpu_dir, 0.5)
    try:
        result, out = _run(args, "--baseline")
    finally:
        _set_cpu_quota(cpu_dir, None)
    assert "client_limits" not in result["environment"] or result["environment"]["client_limits"] != \
        result["environment"]["limits"]
    assert "the raw-device baseline's fio ran under dbio's limits" in out, out
