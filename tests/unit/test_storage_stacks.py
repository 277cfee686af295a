"""Storage stacks under the run's places, from sysfs and mountinfo recorded on real stacks
(tests/fixtures/stacks/): a loop device with and without direct I/O, a btrfs over two devices, a
tmpfs; what the result records of each, what the Storage stack block says and what the verdict says."""

import copy
import json
import os
from pathlib import Path

import pytest

from dbio import report
from dbio import result as results
from dbio.collect import host
from dbio.report import storage_stack, verdict
from dbio.result_context import Storage
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
RECORDED = json.loads((FIXTURES / "stacks/sysfs_loop_btrfs.json").read_text())
TABLESPACES = json.loads((FIXTURES / "stacks/tablespaces_run.json").read_text())


@pytest.fixture()
def sys_tree(tmp_path):
    """The recorded sysfs files and links under tmp_path/sys; the device number of tmp_path's own
    filesystem is left out (on the recording host it was vda's: the tests give it their own)."""
    sys = tmp_path / "sys"
    for name, text in RECORDED["files"].items():
        path = sys / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n")
    for name, target in RECORDED["links"].items():
        if name == f"dev/block/{_dev(tmp_path)}":
            continue
        (sys / name).parent.mkdir(parents=True, exist_ok=True)
        (sys / name).symlink_to(target)
    return sys


def _mount(recorded_point: str, at: Path, dev: str | None = None) -> str:
    """The recorded mountinfo line of recorded_point, moved to `at` (and to st_dev `dev` when given)."""
    line = next(ln for ln in RECORDED["mountinfo"].splitlines() if f" {recorded_point} " in ln)
    fields = line.split(" ")
    fields[4] = str(at)
    if dev is not None:
        fields[2] = dev
    return " ".join(fields) + "\n"


def _dev(path: Path) -> str:
    st = os.stat(path)
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"


def _on_device(sys: Path, tmp_path: Path, device: str, recorded_point: str) -> dict:
    """storage_of a directory whose st_dev the tree maps to the recorded device."""
    data = tmp_path / "mnt/inst"
    data.mkdir(parents=True)
    (sys / "dev/block" / _dev(data)).symlink_to(f"../../devices/virtual/block/{device}")
    return host.storage_of(data, sys_root=sys, mountinfo=_mount(recorded_point, tmp_path / "mnt", _dev(data)))


def test_a_loop_device_records_its_backing_file_and_whether_it_reads_it_directly(sys_tree, tmp_path):
    s = _on_device(sys_tree, tmp_path, "loop1", "/var/tmp/stk/mnt/dioff")
    assert s["device"] == "loop1" and s["diskstats_devices"] == ["loop1"]
    loop = s["stack"][0]["loop"]
    assert (loop["backing_file"], loop["direct_io"]) == ("/var/tmp/stk/b.img", False)


def test_a_loop_device_with_direct_io(sys_tree, tmp_path):
    s = _on_device(sys_tree, tmp_path, "loop0", "/var/tmp/stk/mnt/dion")
    assert s["stack"][0]["loop"]["direct_io"] is True


def test_btrfs_is_found_by_path_and_its_reads_counted_on_its_member_devices(sys_tree, tmp_path):
    """A btrfs file's st_dev (0:42 recorded) is not its mount's (0:41) and no block device's."""
    data = tmp_path / "btrfs/inst"
    data.mkdir(parents=True)
    s = host.storage_of(data, sys_root=sys_tree, mountinfo=_mount("/var/tmp/stk/mnt/btrfs", tmp_path / "btrfs"))
    assert (s["fs_type"], s["source"], s["mount_point"]) == ("btrfs", "/dev/loop2", str(tmp_path / "btrfs"))
    assert s["device"] is None and s["members"] == ["loop2", "loop3"]
    assert s["diskstats_devices"] == ["loop2", "loop3"]
    assert s["btrfs_profiles"] == {"data": ["raid0"], "metadata": ["raid1"]}
    assert [q["disk"] for q in s["stack"]][:2] == ["loop2", "loop3"]
    assert "devices loop2, loop3 (data raid0, metadata raid1)" in dict(storage_stack.pairs(
        Storage.of({"data_directory": s}), {}))["Data"]


def test_tmpfs_is_recorded_in_memory(sys_tree, tmp_path):
    data = tmp_path / "tmpfs/inst"
    data.mkdir(parents=True)
    s = host.storage_of(data, sys_root=sys_tree,
                        mountinfo=_mount("/var/tmp/stk/mnt/tmpfs", tmp_path / "tmpfs", _dev(data)))
    assert s["in_memory"] is True and s["device"] is None and s["diskstats_devices"] == []


def _doc(storage, validity=None):
    doc = results.read(FIXTURES / "result_format2.json")
    doc["environment"]["storage"] = storage
    if validity is not None:
        doc["figures"]["validity"] = copy.deepcopy(validity)
    return doc


def _codes(doc):
    return {f.code: f for f in verdict.findings(of(doc))}


def test_a_loop_device_without_direct_io_under_the_data_is_invalid(sys_tree, tmp_path):
    s = _on_device(sys_tree, tmp_path, "loop1", "/var/tmp/stk/mnt/dioff")
    found = _codes(_doc({"data_directory": s, "wal": None}))["loop_page_cache"]
    assert found.level == "invalid" and "loop1" in found.message and "/var/tmp/stk/b.img" in found.message
    assert verdict.headline(of(_doc({"data_directory": s, "wal": None}))).startswith("not a storage result (INVALID)")
    assert "loop over /var/tmp/stk/b.img" in dict(storage_stack.pairs(Storage.of({"data_directory": s}), {}))["Devices"]


def test_a_loop_device_with_direct_io_is_no_finding(sys_tree, tmp_path):
    s = _on_device(sys_tree, tmp_path, "loop0", "/var/tmp/stk/mnt/dion")
    found = _codes(_doc({"data_directory": s, "wal": None}))
    assert not {"loop_page_cache", "data_in_memory", "no_device"} & set(found)


def test_data_in_memory_is_invalid_and_said_first(sys_tree, tmp_path):
    data = tmp_path / "tmpfs/inst"
    data.mkdir(parents=True)
    s = host.storage_of(data, sys_root=sys_tree,
                        mountinfo=_mount("/var/tmp/stk/mnt/tmpfs", tmp_path / "tmpfs", _dev(data)))
    doc = _doc({"data_directory": s, "wal": None})
    found = verdict.findings(of(doc))
    assert found[0].code == "data_in_memory" and found[0].level == "invalid"
    assert report.render(of(doc), "text").splitlines()[0].startswith("NOT VALID: the data directory")
    assert report.render(of(doc), "text").splitlines()[3].startswith("INVALID: the data directory")
    # the reads it counted as physical were memory's: the headline quotes them as the engine's count only
    headline = next(line for line in report.render(of(doc), "text").splitlines() if line.startswith("Headline: "))
    assert headline.startswith("Headline: not a storage result (INVALID): the engine counted ")
    assert "physical reads/s" not in headline and json.loads(report.render(of(doc), "json"))["headline"] == []


def test_the_recorded_tablespace_run_names_the_place_without_a_device_not_a_page_cache():
    """Recorded before the fix: a tablespace on btrfs had no device, so the devices saw 77% of the
    engine's reads, and the verdict blamed the OS page cache / the data directory's device."""
    doc = _doc(copy.deepcopy(TABLESPACES["storage"]), TABLESPACES["validity"])
    found = _codes(doc)
    assert "page_cache" not in found
    assert found["no_device"].level == "warning" and "/var/tmp/stk/mnt/btrfs/ts2" in found["no_device"].message
    # the WAL was on a tmpfs: its syncs reached no device
    assert found["wal_in_memory"].level == "warning"
    rows = dict(storage_stack.pairs(Storage.of(doc["environment"]["storage"]), {}))
    assert rows["Tablespace 1"].startswith("/dev/loop1 (ext4)") and "/var/tmp/stk/mnt/btrfs/ts2" in rows["Tablespace 2"]
    assert "loop1" in rows["Devices"]


def test_the_page_cache_rule_still_fires_when_every_place_has_a_device():
    storage = copy.deepcopy(TABLESPACES["storage"])
    storage["tablespaces"][1]["diskstats_devices"] = ["loop2", "loop3"]
    assert _codes(_doc(storage, TABLESPACES["validity"]))["page_cache"].level == "invalid"


def test_the_layout_names_a_btrfs_place_s_members_and_a_place_in_memory():
    from dbio.report import layout_section
    storage = copy.deepcopy(TABLESPACES["storage"])
    storage["tablespaces"][1].update(members=["loop2", "loop3"], diskstats_devices=["loop2", "loop3"])
    doc = _doc(storage, TABLESPACES["validity"])
    doc["figures"]["devices"] = copy.deepcopy(TABLESPACES["devices"])
    section = layout_section.section(of(doc))
    rows = {row[0]: row for row in section["tables"][0]["rows"]}
    assert rows["tablespace 1"][2] == "loop1" and rows["tablespace 1"][3] is not None
    assert rows["tablespace 2"][2] == "loop2+loop3" and rows["WAL"][2] == "memory"
    assert any("several devices" in note for note in section["tables"][0]["notes"])
