"""A read-only run after an update run reads and does not write (issue: every day's runs, item 1).

UPDATEs leave old row versions, unset hint bits and dirty pages; the next read-only run's reads
pruned and rewrote those pages inside its window (198 blocks/s and 1.5 MB/s of WAL on a 2 GiB
load). dbio now settles the data set first and says so; and judges every run by what it wrote."""

import pytest

from dbio import result as results
from dbio.engines.postgres import settle
from dbio.report import verdict

from tests.integration.conftest import SMALL, dbio, load_result, over, result_dir
from dbio.result_records import of

READ_ONLY_WRITE_LIMIT = 0.01  # of the bytes read, the bound


def _written_share(doc: dict) -> float:
    io, load = doc["figures"]["io_profile"], doc["figures"]["load_profile"]
    written = io["data_write_mib_per_s"] + load["wal_bytes_per_s"] / 2**20
    return written / io["data_read_mib_per_s"]


@pytest.fixture(scope="module")
def changed_db(instance):
    done = dbio("setup", *instance.args("settle", *SMALL))
    assert done.code == 0, done.text
    return "settle"


def test_a_read_only_run_after_updates_settles_first_and_writes_under_1_percent(instance, changed_db):
    updates = dbio("run", *instance.args(changed_db, *over(SMALL, "--run-time", "3s"), "-t", "2", "--update-pct", "50"))
    assert updates.code == 0, updates.text
    reads = dbio("run", *instance.args(changed_db, *over(SMALL, "--run-time", "3s"), "-t", "2", "--update-pct", "0"))
    assert reads.code == 0, reads.text
    doc = load_result(result_dir(reads))
    settled = [e for e in doc["events"] if e["kind"] == "settled"]
    assert len(settled) == 1, doc["events"]
    assert settled[0]["vacuum_wal_bytes"] > 64 << 10 and settled[0]["checkpoint"] == "done"
    assert "settled the data set before this read-only run" in reads.text and "VACUUM of 1 table" in reads.text
    assert _written_share(doc) < READ_ONLY_WRITE_LIMIT, doc["figures"]["io_profile"]
    assert "read_only_wrote" not in {f.code for f in verdict.findings(of(results.completed(doc)))}

    again = dbio("run", *instance.args(changed_db, *SMALL, "-t", "2", "--update-pct", "0"))
    assert again.code == 0, again.text
    assert not [e for e in load_result(result_dir(again))["events"] if e["kind"] == "settled"], \
        "a data set at rest was settled again, and said so"


def test_a_read_only_run_after_updates_in_another_database_checkpoints_first(instance, changed_db, loaded_db):
    """The buffers are the server's: pages an update run dirtied in another database would be written out by
    the checkpointer inside this read-only run's window, though its own data set is at rest."""
    updates = dbio("run", *instance.args(changed_db, *over(SMALL, "--run-time", "3s"), "-t", "2", "--update-pct", "50"))
    assert updates.code == 0, updates.text
    reads = dbio("run", *instance.args(loaded_db, *over(SMALL, "--run-time", "3s"), "-t", "2", "--update-pct", "0"))
    assert reads.code == 0, reads.text
    doc = load_result(result_dir(reads))
    [settled] = [e for e in doc["events"] if e["kind"] == "settled"]
    assert settled["checkpoint"] == "done", settled
    assert settled["wal_since_checkpoint_bytes"] >= settle.PENDING_AT_REST_WAL_BYTES, settled
    assert _written_share(doc) < READ_ONLY_WRITE_LIMIT, doc["figures"]["io_profile"]
