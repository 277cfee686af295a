"""The storage stack a result records, read from a recorded /sys-like tree: an LVM volume on an NVMe
partition, its queues, the mount options; the CPU governor and transparent huge pages; the
steal verdict."""

import json
import os
from pathlib import Path

import pytest

from dbio import report
from dbio import result as results
from dbio.collect import host
from dbio.report import cpu_findings, storage_stack, verdict
from dbio.result_context import Storage
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _queue(device: Path, scheduler: str, **numbers: int) -> None:
    _write(device / "queue/scheduler", scheduler)
    for name, number in numbers.items():
        _write(device / "queue" / name, str(number))


@pytest.fixture()
def sysfs(tmp_path):
    """dm-0 (an LVM volume) on nvme0n1p2, a partition of nvme0n1; the data directory's device is dm-0."""
    sys = tmp_path / "sys"
    nvme = sys / "devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1"
    _queue(nvme, "[none] mq-deadline", nr_requests=1023, read_ahead_kb=128, rotational=0,
           logical_block_size=512, physical_block_size=4096, max_sectors_kb=1280)
    _write(nvme / "device/model", "Fast NVMe 1TB")
    _write(nvme / "size", "2000409264")
    _write(nvme / "nvme0n1p2/partition", "2")
    dm = sys / "devices/virtual/block/dm-0"
    _queue(dm, "none", nr_requests=128, read_ahead_kb=4096, rotational=0,
           logical_block_size=512, physical_block_size=4096, max_sectors_kb=512)
    _write(dm / "dm/name", "vg-data")
    _write(dm / "size", "1000000000")
    (dm / "slaves").mkdir()
    (dm / "slaves/nvme0n1p2").symlink_to(nvme / "nvme0n1p2")
    data = tmp_path / "data"
    data.mkdir()
    dev = os.stat(data).st_dev
    (sys / "dev/block").mkdir(parents=True)
    (sys / f"dev/block/{os.major(dev)}:{os.minor(dev)}").symlink_to(dm)
    for cpu in ("cpu0", "cpu1"):
        _write(sys / f"devices/system/cpu/{cpu}/cpufreq/scaling_governor", "performance")
    _write(sys / "kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
    _write(sys / "kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never")
    mountinfo = (f"29 1 {os.major(dev)}:{os.minor(dev)} / {tmp_path} rw,noatime shared:1 - xfs /dev/mapper/vg-data "
                 "rw,attr2,inode64,logbsize=256k,noquota\n")
    return sys, data, mountinfo


def test_every_device_under_the_data_directory_is_recorded(sysfs):
    sys, data, mountinfo = sysfs
    s = host.storage_of(data, sys_root=sys, mountinfo=mountinfo)
    assert (s["device"], s["disk"], s["dm_name"], s["slaves"]) == ("dm-0", "dm-0", "vg-data", ["nvme0n1p2"])
    assert (s["fs_type"], s["source"], s["mount_options"]) == ("xfs", "/dev/mapper/vg-data", "rw,noatime")
    assert s["fs_options"] == "rw,attr2,inode64,logbsize=256k,noquota"
    assert s["diskstats_devices"] == ["dm-0"] and s["scheduler"] == "none" and s["rotational"] is False
    assert s["stack"] == [
        {"device": "dm-0", "disk": "dm-0", "scheduler": "none", "rotational": False, "nr_requests": 128,
         "read_ahead_kb": 4096, "logical_block_size": 512, "physical_block_size": 4096, "max_sectors_kb": 512},
        {"device": "nvme0n1p2", "disk": "nvme0n1", "scheduler": "none", "rotational": False, "nr_requests": 1023,
         "read_ahead_kb": 128, "logical_block_size": 512, "physical_block_size": 4096, "max_sectors_kb": 1280}]


def test_a_device_sysfs_does_not_know_is_recorded_without_a_stack(sysfs, tmp_path):
    _, data, mountinfo = sysfs
    s = host.storage_of(data, sys_root=tmp_path / "empty", mountinfo=mountinfo)
    assert s["device"] is None and "stack" not in s and s["mount_options"] == "rw,noatime"


def test_cpu_governor_and_transparent_huge_pages(sysfs, tmp_path):
    sys, _, _ = sysfs
    assert host.tuning(sys) == {"cpu_governor": "performance", "transparent_hugepages": "madvise",
                                "transparent_hugepages_defrag": "madvise"}
    # a virtual machine without cpufreq: not readable, said so
    assert host.tuning(tmp_path / "empty") == {"cpu_governor": None, "transparent_hugepages": None,
                                               "transparent_hugepages_defrag": None}


def test_one_short_block_shows_the_stack(sysfs):
    sys, data, mountinfo = sysfs
    storage = {"data_directory": host.storage_of(data, sys_root=sys, mountinfo=mountinfo),
               "wal": {**host.storage_of(data, sys_root=sys, mountinfo=mountinfo), "same_device_as_data": True}}
    rows = dict(storage_stack.pairs(Storage.of(storage), host.tuning(sys)))
    assert rows["Data"] == (f"/dev/mapper/vg-data (xfs) mounted at {data.parent} (rw,noatime, attr2,inode64,"
                            f"logbsize=256k,noquota), data directory {data}")
    assert rows["WAL"] == f"same device as data, {data}"
    assert rows["Devices"] == (
        "dm-0: scheduler none, nr_requests 128, read-ahead 4 MiB, non-rotational, blocks 512 B logical, "
        "4096 B physical, max request 512 KiB; nvme0n1: scheduler none, nr_requests 1023, read-ahead 128 KiB, "
        "non-rotational, blocks 512 B logical, 4096 B physical, max request 1280 KiB")
    assert rows["Host"] == "CPU frequency governor performance, transparent huge pages madvise (defrag madvise)"


def test_the_report_shows_the_block_in_every_format(sysfs):
    sys, data, mountinfo = sysfs
    doc = results.read(FIXTURES / "result_format2.json")
    doc["environment"]["storage"]["data_directory"] = host.storage_of(data, sys_root=sys, mountinfo=mountinfo)
    doc["environment"]["host"].update(host.tuning(sys))
    for form in ("text", "md", "html"):
        out = report.render(of(doc), form)
        assert "Storage stack" in out and "nr_requests 1023" in out and "governor performance" in out, form
    section = next(s for s in json.loads(report.render(of(doc), "json"))["sections"] if s["id"] == "storage")
    assert dict(section["pairs"])["Devices"].startswith("dm-0: scheduler none")


def test_a_result_recorded_before_the_stack_shows_what_it_has():
    doc = results.read(FIXTURES / "result_complete.json")
    rows = dict(storage_stack.pairs(Storage.of(doc["environment"]["storage"]), doc["environment"]["host"]))
    assert rows["Devices"] == "vda: scheduler mq-deadline, rotational, blocks 512 B"  # "none [mq-deadline] ..."
    assert "Host" not in rows


def _with_steal(pct):
    doc = results.completed(json.loads((FIXTURES / "result_complete.json").read_text()))
    doc["figures"]["cpu"]["host"]["steal_pct"] = pct
    return {f.code: f for f in verdict.findings(of(doc))}


def test_steal_beyond_five_percent_of_the_window_is_a_warning():
    assert "cpu_steal" not in _with_steal(0.3)
    assert "cpu_steal" not in _with_steal(cpu_findings.STEAL_LIMIT)
    found = _with_steal(38.5)["cpu_steal"]
    assert found.level == "warning" and found.value == 38.5 and found.figure == "cpu.host.steal_pct"
    assert "38.5% of this host's CPU time" in found.message
