"""Parts of one run on MySQL/MariaDB without a server: the named locks' names (GET_LOCK takes 64
characters), and what a merge of parts says when the server keeps no per-thread counts
(performance_schema off: only the server's total is known)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbio import merge
from dbio.engines.mysql import exclusive, stats
from dbio.parts import MAX_PARTS, Part

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize("database", ["dbio", "d" * 64, "x" * 25])
def test_every_lock_name_fits_and_names_its_run_and_part_count(database):
    part = Part(MAX_PARTS, MAX_PARTS, "r" * 64)
    names = [exclusive.lock_name(database), exclusive.gate_name(database), exclusive.install_name(database),
             f"{exclusive.slot_prefix(database)}{MAX_PARTS}", f"{exclusive.run_prefix(database, part)}{MAX_PARTS}"]
    assert all(len(n) <= 64 for n in names), names
    # the parts of one run find each other's locks; another run, or the same id with another part count, does not
    assert exclusive.run_prefix(database, Part(1, 3, "a")) == exclusive.run_prefix(database, Part(2, 3, "a"))
    assert exclusive.run_prefix(database, Part(1, 3, "a")) != exclusive.run_prefix(database, Part(1, 3, "b"))
    assert exclusive.run_prefix(database, Part(1, 3, "a")) != exclusive.run_prefix(database, Part(1, 2, "a"))
    assert exclusive.slot_prefix(database) != exclusive.slot_prefix(database + "2")


def test_without_performance_schema_a_merge_of_parts_knows_only_the_servers_total():
    raw = {k: v for k, v in json.loads((FIXTURES / "mysql" / "snapshot_mariadb_10_11_pfs.json").read_text()).items()
           if k != "pfs"}
    assert "sessions" not in stats.normalize(raw)  # no per-thread counts: no own count, never the server's
    base = json.loads((FIXTURES / "result_format2.json").read_text())
    docs = []
    for index in (1, 2, 3):
        doc = json.loads(json.dumps(base))
        doc["run_id"] = f"{index:x}"
        doc["part"] = {"index": index, "of": 3, "run": "run-abc"}
        for session in doc["sessions"]:  # its own threads: one server's at one time never share an id
            session["pid"] += 1000 * index
        node = doc["nodes"][0]
        node["server"]["identity"] = "uid:1795000000:host:3306:/var/lib/mysql/"
        for reading in ("begin", "end"):
            node["normalized"][reading].pop("sessions", None)
            node["normalized"][reading]["t"] -= index * 1e-4  # each part read the server at instants of its own
        docs.append((f"p{index}", doc))
    doc = merge.merge(docs, "m")
    [counted] = doc["counting"]
    assert counted["agree"] is None and counted["own_reads_per_s"] is None and counted["server_reads_per_s"]
    assert any("only the server's total is known" in e["message"] for e in doc["events"])
