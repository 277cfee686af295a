"""What dbio records of real storage stacks built from loop devices over files in /var/tmp: a loop
device without direct I/O (its backing file and the device under it), a btrfs over two loop devices
(its members, which /proc/diskstats counts). Needs root, losetup and mkfs.ext4 (mkfs.btrfs for the
btrfs); every device, mount and file made is removed, even when a test fails."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from dbio.collect import host

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices and mounts need root"),
    pytest.mark.skipif(not all(shutil.which(t) for t in ("losetup", "mkfs.ext4", "mount", "umount")),
                       reason="losetup, mkfs.ext4, mount or umount is missing"),
    pytest.mark.skipif(not Path("/dev/loop-control").exists(), reason="this kernel has no loop devices"),
]


def _run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=120).stdout.strip()


@contextlib.contextmanager
def _stack():
    """A scratch directory in /var/tmp and a list of undo steps run in reverse, whatever happens."""
    base = Path(tempfile.mkdtemp(prefix="dbio-stacks-", dir="/var/tmp"))
    undo: list[list[str]] = []
    try:
        yield base, undo
    finally:
        for step in reversed(undo):
            subprocess.run(step, capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


def _loop(base: Path, undo: list[list[str]], name: str, direct_io: bool) -> str:
    image = base / f"{name}.img"
    with open(image, "wb") as f:
        f.truncate(256 << 20)
    device = _run("losetup", "--find", "--show", f"--direct-io={'on' if direct_io else 'off'}", str(image))
    undo.append(["losetup", "-d", device])
    return device


def _mount(undo: list[list[str]], source: str, at: Path) -> None:
    at.mkdir()
    _run("mount", source, str(at))
    undo.append(["umount", str(at)])


def _device_of(path: Path) -> str:
    st = os.stat(path)
    return Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}").resolve().name


def test_a_loop_device_without_direct_io_records_its_file_and_the_device_under_it():
    with _stack() as (base, undo):
        device = _loop(base, undo, "a", direct_io=False)
        _run("mkfs.ext4", "-q", device)
        _mount(undo, device, base / "mnt")
        (base / "mnt/data").mkdir()
        s = host.storage_of(base / "mnt/data")
        assert s["device"] == Path(device).name and s["diskstats_devices"] == [Path(device).name]
        loop = s["stack"][0]["loop"]
        assert loop["backing_file"] == str(base / "a.img") and loop["direct_io"] is False
        if Path(f"/sys/dev/block/{os.major(os.stat(base).st_dev)}:{os.minor(os.stat(base).st_dev)}").exists():
            under = _device_of(base)  # the file's own device: what the loop's reads reach when they miss the cache
            assert loop["backing"]["device"] == under and under in [q["device"] for q in s["stack"][1:]]


@pytest.mark.skipif(shutil.which("mkfs.btrfs") is None, reason="mkfs.btrfs is missing (btrfs-progs)")
def test_a_btrfs_over_two_loop_devices_is_measured_on_both():
    if "btrfs" not in Path("/proc/filesystems").read_text():
        pytest.skip("this kernel has no btrfs")
    with _stack() as (base, undo):
        first, second = (_loop(base, undo, name, direct_io=True) for name in ("b", "c"))
        _run("mkfs.btrfs", "-q", "-f", "-d", "raid0", "-m", "raid1", first, second)
        _mount(undo, first, base / "mnt")
        (base / "mnt/data").mkdir()
        s = host.storage_of(base / "mnt/data")
        names = sorted(Path(d).name for d in (first, second))
        assert s["fs_type"] == "btrfs" and s["mount_point"] == str(base / "mnt")
        assert s["members"] == names and s["diskstats_devices"] == names
        assert s["btrfs_profiles"]["data"] == ["raid0"]
