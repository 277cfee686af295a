"""The report's Layout section and WAL row (pure): shown only for a layout of its own, each place
with its device's figures, commit latency beside the WAL's sync latency."""

from __future__ import annotations

import copy
from pathlib import Path

from dbio import result as results
from dbio.report import layout_section, model, run_section
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _doc():
    return results.read(FIXTURES / "result_complete.json")  # as dbio report reads it


def _with_layout(doc):
    doc = copy.deepcopy(doc)
    storage = doc["environment"]["storage"]
    storage["wal"] = {**storage["wal"], "path": "/mnt/wal/dbio-wal", "same_device_as_data": False, "device": "vdb"}
    storage["tablespaces"] = [{**storage["data_directory"], "path": "/mnt/d1"}]
    doc["figures"]["devices"]["vdb"] = {"reads_per_s": 0.0, "read_mib_per_s": 0.0, "avg_read_us": None,
                                        "writes_per_s": 200.0, "write_mib_per_s": 1.5, "avg_write_us": 500.0,
                                        "utilization_pct": 10.0, "avg_queue": 0.1}
    return doc


def test_the_default_layout_adds_nothing():
    doc = _doc()
    assert not of(doc).environment.storage.has_layout
    assert "tables" not in layout_section.section(of(doc))
    assert all(pair[0] != "WAL" for pair in run_section.section(of(doc))["pairs"])


def test_a_wal_of_its_own_is_named_and_measured_on_its_device():
    doc = _with_layout(_doc())
    pairs = dict(run_section.section(of(doc))["pairs"])
    assert pairs["WAL"].startswith("/mnt/wal/dbio-wal on vdb") and "a device of its own" in pairs["WAL"]
    found = layout_section.section(of(doc))
    rows = {row[0]: row for row in found["tables"][0]["rows"]}
    assert list(rows) == ["data directory", "tablespace 1", "WAL"]
    columns = found["tables"][0]["columns"]
    assert rows["WAL"][columns.index("Avg write size")] == 1024.0 * 1.5 / 200.0  # KiB per write
    assert rows["WAL"][columns.index("Writes/s")] == 200.0
    assert found["lines"][0].startswith("WAL sync (engine): 319 us on average")  # the recorded run's
    assert any(s["id"] == "layout" for s in model.build(of(doc))["sections"])
