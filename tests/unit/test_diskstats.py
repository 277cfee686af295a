"""/proc/diskstats as every kernel writes it: 14 fields until 4.17, 18 from 4.18 (discards), 20 from 5.5
(flushes), the 11 counters dbio reads first in each (Documentation/admin-guide/iostats.rst). A line of
another width or with a field that is not a counter is a named gap: the device's figures are absent and
the report says why, never a crash, a since-boot count or a column read from the wrong place."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dbio.collect import procfs
from dbio.report import window_sections
from dbio.stats import figures, ops, series
from dbio import result as results

FIXTURES = Path(__file__).parent.parent / "fixtures"

# Recorded-style lines, one per kernel layout: the same 11 counters, then the fields each kernel added.
COUNTERS = "283470 1212 17293618 152480 449620 297536 14418416 1290680 3 461436 1443304"
EXPECTED = dict(zip(procfs.DISK_FIELDS, (283470.0, 1212.0, 17293618.0, 152480.0, 449620.0, 297536.0, 14418416.0,
                                         1290680.0, 3.0, 461436.0, 1443304.0)))
LINES = {
    14: f"   8       0 sda {COUNTERS}",  # 4.15 (Ubuntu 18.04)
    18: f" 259       0 nvme0n1 {COUNTERS} 30211 0 251658240 1204",  # 4.18 .. 5.4: discards
    20: f" 253       0 vda {COUNTERS} 30211 0 251658240 1204 52113 8802",  # 5.5 and later: flushes
}


@pytest.mark.parametrize("width", sorted(LINES))
def test_each_kernel_s_layout_reads_the_same_counters(width):
    line = LINES[width]
    assert len(line.split()) == width
    name = line.split()[2]
    read = procfs.parse_diskstats(f"{line}\n", {name})
    assert read.counters == {name: EXPECTED} and read.unread == {}


@pytest.mark.parametrize("line, why", [
    ("   8       1 sda1 1924 15386 204 1632", "7 fields"),  # 2.6's partition lines: 4 counters of another order
    ("   8       0 sda 283470 1212 17293618 152480 449620 297536 14418416 1290680", "11 fields"),
    (f"   8       0 sda {COUNTERS} 30211", "15 fields"),  # 14 and one more: no kernel's
    (f"   8       0 sda {COUNTERS} 30211 0 251658240 1204 52113 8802 77 12", "22 fields"),  # a later kernel's
])
def test_an_unknown_width_is_a_named_gap(line, why):
    # 15 and 22 fields were read as if 14 (whatever the extra fields meant), 7 and 11 dropped unnamed
    name = line.split()[2]
    read = procfs.parse_diskstats(line + "\n", {name})
    assert read.counters == {}
    assert read.unread == {name: f"its /proc/diskstats line has {why}, a layout dbio does not know (14: before "
                                  "4.18, 18: 4.18 and later, 20: 5.5 and later)"}


@pytest.mark.parametrize("field", ["x", "nan", "inf", "1e5", "-3", "12.5", "٣", str(2 ** 64), "9" * 5000])
def test_a_field_that_is_not_a_counter_is_a_named_gap(field):
    # a word in a field crashed the reading (float("x")); "nan" and "inf" went into the readings as floats
    fields = COUNTERS.split()
    fields[4] = field
    text = f"{LINES[20]}\n   8       0 sda {' '.join(fields)}\n"
    read = procfs.parse_diskstats(text, {"sda", "vda"})
    assert read.counters == {"vda": EXPECTED}
    assert read.unread == {"sda": "its /proc/diskstats line has a field that is not a counter (a whole number)"}


def test_a_device_listed_twice_is_a_named_gap():
    # the second line silently replaced the first: one of two readings, which one unknown
    again = LINES[20].replace("283470", "999999", 1)
    read = procfs.parse_diskstats(f"{LINES[20]}\n{again}\n{LINES[14]}\n", {"vda", "sda"})
    assert read.counters == {"sda": EXPECTED} and read.unread == {"vda": "listed twice in /proc/diskstats"}


def test_a_device_the_file_does_not_list_is_named():
    read = procfs.parse_diskstats(LINES[20] + "\n", {"vda", "sdz"})
    assert set(read.counters) == {"vda"} and read.unread == {"sdz": "not listed in /proc/diskstats"}
    assert procfs.parse_diskstats(LINES[20] + "\n\n   8\n").counters == {"vda": EXPECTED}  # a line too short


def test_this_machine_s_diskstats_reads_whole():
    text = Path("/proc/diskstats").read_text()
    names = {line.split()[2] for line in text.splitlines() if len(line.split()) > 2}
    read = procfs.parse_diskstats(text, names)
    assert read.unread == {} and set(read.counters) == names


@pytest.fixture(scope="module")
def doc():
    return results.completed(json.loads((FIXTURES / "result_complete.json").read_text()))


def _window(doc, unread_line: str):
    """The recorded window with a second device, vdb, whose end reading is the line given."""
    w = {"seconds": doc["timeline"]["window_seconds"], "engine_begin": doc["normalized"]["begin"],
         "engine_end": doc["normalized"]["end"], "totals": doc["totals"], "histograms": doc["histograms"],
         "os_begin": copy.deepcopy(doc["snapshots"]["begin"]["os"]),
         "os_end": copy.deepcopy(doc["snapshots"]["end"]["os"]),
         "cores": doc["environment"]["host"]["cpus"], "cache_bytes": doc["figures"]["validity"]["cache_bytes"],
         "data_bytes": doc["figures"]["validity"]["data_bytes"], "direct_io": True}
    w["os_begin"]["disks"]["vdb"] = dict(EXPECTED)
    end = procfs.parse_diskstats(unread_line.replace(" sda ", " vdb ") + "\n", {"vdb"})
    w["os_end"]["disks"].update(end.counters)
    w["os_end"][procfs.UNREAD] = end.unread
    return w


def test_a_device_unread_at_an_end_has_no_figures_and_the_report_says_why(doc):
    w = _window(doc, f"   8       0 sda {COUNTERS} 30211")
    f = figures.derive(w)
    assert set(f["devices"]) == {"vda"}
    assert f["devices_unread"] == {"vdb": "at the end, its /proc/diskstats line has 15 fields, a layout dbio does "
                                          "not know (14: before 4.18, 18: 4.18 and later, 20: 5.5 and later)"}
    # the devices' sums against the engine's would be vda's alone: absent, not a part taken for the whole
    v = f["validity"]
    assert v["device_reads"] is None and v["device_to_db_read_ratio"] is None and v["device_write_bytes"] is None
    section = window_sections.devices(f)
    rows = {row[0]: row[1:] for row in section["tables"][0]["rows"]}
    assert set(rows) == {"vda", "vdb"} and all(value is None for value in rows["vdb"])
    assert any(note.startswith("vdb: no figures, at the end, its /proc/diskstats line has 15 fields")
               for note in section["tables"][0]["notes"])
    whole = figures.derive(_window(doc, f"   8       0 sda {COUNTERS}"))  # vdb read at both ends: both summed
    assert "devices_unread" not in whole and set(whole["devices"]) == {"vda", "vdb"}
    assert whole["validity"]["device_reads"] == f["devices"]["vda"]["reads"] + whole["devices"]["vdb"]["reads"]


def test_a_device_read_at_one_end_only_is_no_figure_of_the_span(doc):
    # read at the end only, its counts since boot were the window's "reads"
    w = copy.deepcopy(_window(doc, f"   8       0 sda {COUNTERS}"))
    del w["os_begin"]["disks"]["vdb"]
    f = figures.derive(w)
    assert set(f["devices"]) == {"vda"} and f["devices_unread"] == {"vdb": "read at the end only"}
    begin = {"t": 0.0, "stat": {}, "disks": {"vda": EXPECTED}}
    end = {"t": 10.0, "stat": {}, "disks": {"vda": EXPECTED, "vdb": EXPECTED}}
    timed = ops.window(begin, end, {}, 2)
    assert set(timed["devices"]) == {"vda"} and timed["devices_unread"] == {"vdb": "read at the end only"}


def test_an_interval_with_a_device_unread_has_no_device_rate():
    def sample(k: int, reads: float, unread: dict[str, str] | None = None):
        disks = {"vda": {**EXPECTED, "reads": reads}}
        return {"k": k, "engine": {"t": 100.0 + k}, "os": {"t": 100.0 + k, "disks": disks,
                                                            **({procfs.UNREAD: unread} if unread else {})}}

    rows = series.per_interval([sample(1, 1000.0), sample(2, 1400.0), sample(3, 1900.0, {"vdb": "not listed"})],
                               {}, [1.0], 100.0)
    assert rows[0]["device_reads_per_s"] == pytest.approx(400.0) and "device_reads_per_s" not in rows[1]
