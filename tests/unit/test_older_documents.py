"""Results and run manifests an older dbio wrote read with the facts this dbio consults, filled in
by the engine that wrote them (engines/postgres/legacy.py); the goldens show they render as before."""

import copy
import json
import shutil
import socket
from pathlib import Path

import pytest

from dbio import engines
from dbio import result as results
from dbio.engines.postgres import facts
from dbio.engines.postgres.engine import PostgresEngine
from dbio.run import abandoned

FIXTURES = Path(__file__).parent.parent / "fixtures"
SCENARIOS = ("complete", "interrupted", "cached", "pg15")


def raw(name):
    return json.loads((FIXTURES / f"result_{name}.json").read_text())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_an_older_result_gets_the_facts_its_settings_imply(scenario):
    doc = raw(scenario)
    assert "cache_name" not in doc["capabilities"]  # written before the facts existed
    settings = doc["environment"]["server"]["settings"]
    done = results.completed(doc)
    caps = done["capabilities"]
    assert caps["times_data_io"] == (settings["track_io_timing"]["setting"] == "on")
    assert caps["times_redo_io"] == (settings["track_wal_io_timing"]["setting"] == "on")
    assert caps["cache_name"] == "shared_buffers" and caps["settings_shown"] == list(facts.SETTINGS_SHOWN)
    assert caps["maintenance_process"] == "autovacuum worker" and caps["maintenance_name"] == "autovacuum"
    assert done["figures"].get("validity", {}).get("cache_bytes") == doc["figures"].get("validity", {}).get(
        "shared_buffers_bytes")
    assert doc == raw(scenario)  # pure: the document read is not changed
    assert results.completed(done) == done  # idempotent


def test_the_cache_figure_keeps_its_place_among_the_validity_figures():
    doc = raw("complete")
    before = list(doc["figures"]["validity"])
    after = list(results.completed(doc)["figures"]["validity"])
    assert after == [("cache_bytes" if k == "shared_buffers_bytes" else k) for k in before]


def test_a_complete_result_and_one_of_another_engine_come_back_unchanged():
    done = results.completed(raw("complete"))
    assert engines.complete_result(done) == done
    other = copy.deepcopy(raw("complete"))
    other["capabilities"]["engine"] = "fake"  # no engine of dbio's: nothing to fill in
    assert engines.complete_result(other) is other


def test_a_malformed_result_is_left_for_the_shape_check():
    for broken in ({"capabilities": {"engine": "postgresql"}, "environment": None, "figures": []},
                   {"capabilities": {"engine": "postgresql"}, "normalized": {"begin": {"writers": {"x": "y"}}},
                    "nodes": [None, {"server": 3}]}):
        assert engines.complete_result(broken) is not None


def test_an_abandoned_run_of_an_older_dbio_recovers_with_its_facts(tmp_path):
    directory = tmp_path / "results" / "run"
    shutil.copytree(FIXTURES / "abandoned_run", directory)
    manifest = json.loads((directory / "run.json").read_text())
    assert "shared_buffers_bytes" in manifest["server"] and "cache_name" not in manifest["capabilities"]
    manifest["client"] = f"{socket.gethostname()}:999999999"  # a dbio process that no longer runs
    (directory / "run.json").write_text(json.dumps(manifest))
    doc = abandoned.recover(directory, lambda _name: PostgresEngine())
    assert doc["figures"]["validity"]["cache_bytes"] == manifest["server"]["shared_buffers_bytes"]
    assert doc["capabilities"]["cache_name"] == "shared_buffers"
    timed = manifest["server"]["settings"]["track_io_timing"]["setting"] == "on"
    assert (doc["figures"]["latency"]["avg_read_us"] is not None) == timed
    assert "checkpoints" in doc["normalized"]["end"]
