"""--event vacuum, index and backup:PATH on the embedded PostgreSQL 18 (issue 37): the engine's operations as dbio
ops has them, done inside the window while the sessions run, each timed in its record and named in the report;
a backup the running server cannot take, or whose destination dbio ops backup would refuse, refused in one line
before anything is made."""

from __future__ import annotations

import psycopg
import pytest

from dbio.engines.postgres import catalog
from tests.integration.conftest import BRIEF, SMALL, dbio, load_result, over, result_dir

pytestmark = pytest.mark.integration


def _run(instance, db: str, label: str, *extra: str):
    return dbio("run", *instance.args(db, *over(SMALL, "--warmup", "1s", "--run-time", "8s", "--label", label,
                                                  *extra)), timeout=240)


def _index_tags(instance, db: str) -> list[tuple[str, str]]:
    with psycopg.connect(instance.conninfo(db)) as conn:
        return conn.execute(
            "SELECT i.relname, obj_description(i.oid, 'pg_class') FROM pg_class i JOIN pg_namespace n "
            "ON n.oid = i.relnamespace WHERE n.nspname ~ '^dbio_[0-9]+$' AND i.relkind = 'i' ORDER BY 1, 2").fetchall()


def _results(instance) -> set:
    return set(instance.results.glob("*")) if instance.results.exists() else set()


def test_a_vacuum_in_an_update_run_is_timed_with_its_wal(instance, loaded_db):
    done = _run(instance, loaded_db, "vacuum", "--update-pct", "20", "--event", "3s=vacuum")
    assert done.code == 0, done.text
    result = load_result(result_dir(done))
    [record] = result["disruptions"]
    assert record["outcome"] == "done", record
    vacuum = record["vacuum"]
    assert vacuum["tables"] and all(t.startswith("dbio_") and t.endswith("." + catalog.DATA_TABLE)
                                    for t in vacuum["tables"])
    assert vacuum["wal_bytes"] > 0  # the UPDATEs' dead rows pruned
    assert 0 <= vacuum["seconds"] <= record["end_s"] - record["start_s"] + 0.01
    assert "VACUUM of" in (result_dir(done) / "report.txt").read_text()


def test_the_index_re_created_is_dbios_own_and_stays_tagged(instance, loaded_db):
    before = _index_tags(instance, loaded_db)
    done = _run(instance, loaded_db, "index", "--event", "3s=index")
    assert done.code == 0, done.text
    result = load_result(result_dir(done))
    [record] = result["disruptions"]
    assert record["outcome"] == "done", record
    index = record["index"]
    assert index["indexes"] and index["index_bytes"] > 0
    assert {d["table"] for d in index["indexes"]} == {catalog.DATA_TABLE}
    assert _index_tags(instance, loaded_db) == before  # the same indexes, the same tags: nothing else touched
    assert "dbio's index re-created" in (result_dir(done) / "report.txt").read_text()
    assert result["figures"]["disruptions"][0]["before_reads_per_s"] > 0


def test_a_backup_the_running_server_cannot_take_is_refused_before_anything(instance, loaded_db):
    target = instance.root / "event-backup-minimal"
    before = _results(instance)
    done = _run(instance, loaded_db, "backup-minimal", "--event", f"3s=backup:{target}")
    assert done.code == 2, done.text
    assert f"--event 3s=backup:{target}: the server runs with wal_level = minimal" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert _results(instance) == before and not target.exists()


def test_a_destination_ops_backup_would_refuse_is_refused_before_anything(instance, loaded_db):
    target = instance.root / "event-backup-full"
    target.mkdir()
    (target / "left").write_text("someone's\n")
    before = _results(instance)
    done = _run(instance, loaded_db, "backup-full", "--wal-level", "replica", "--event", f"3s=backup:{target}")
    assert done.code == 2, done.text
    assert f"--event 3s=backup:{target}: the destination {target} is not empty" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert "restarting" not in done.text  # refused before the server was restarted for the run's settings
    assert _results(instance) == before and [p.name for p in target.iterdir()] == ["left"]
    inside = instance.data_dir / "pgdata" / "event-backup"
    done = _run(instance, loaded_db, "backup-inside", "--event", f"3s=backup:{inside}")
    assert done.code == 2, done.text  # the server's own directory: another user's (the server's) to redirect
    assert f"--event 3s=backup:{inside}: the destination " in done.err and len(done.err.strip().splitlines()) == 1
    assert not inside.exists()


@pytest.fixture
def replica_wal(instance, loaded_db):
    """The shared instance's runs with replica WAL (an online backup's), and its minimal WAL again after: the
    instance remembers the level a run gave, which the other tests' runs would keep."""
    yield ["--wal-level", "replica"]
    done = dbio("run", *instance.args(loaded_db, *over(SMALL, *BRIEF, "--wal-level", "minimal")), timeout=120)
    assert done.code == 0, done.text


def test_a_backup_is_taken_while_the_sessions_run(instance, loaded_db, replica_wal):
    target = instance.root / "event-backup"
    done = _run(instance, loaded_db, "backup", *replica_wal, "--event", f"2s=backup:{target}")
    assert done.code == 0, done.text
    result = load_result(result_dir(done))
    [record] = result["disruptions"]
    assert record["outcome"] == "done", record
    backup = record["backup"]
    assert (target / "base.tar").stat().st_size > 32 << 20 and backup["bytes"] > 32 << 20
    assert backup["target"] == str(target) and backup["seconds"] <= record["end_s"] - record["start_s"] + 0.01
    assert "the backup wrote" in (result_dir(done) / "report.txt").read_text()
