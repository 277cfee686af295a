import json
from pathlib import Path

import pytest

from dbio.engines.postgres import stats

FIXTURES = Path(__file__).parent.parent / "fixtures"


def load(name):
    return json.loads((FIXTURES / name).read_text())


def test_pg18_snapshot_normalizes_from_pg_stat_io():
    raw = load("pg18_snapshot.json")
    n = stats.normalize(raw)
    relation = [r for r in raw["io"] if r["object"] == "relation"]
    assert n["data"]["reads"] == sum(r["reads"] or 0 for r in relation)
    assert n["data"]["read_bytes"] == sum(float(r["read_bytes"] or 0) for r in relation)
    clients = [r for r in relation if r["backend_type"] == "client backend"]
    assert n["client"]["read_time_ms"] == pytest.approx(sum(r["read_time"] or 0 for r in clients))
    wal = [r for r in raw["io"] if r["object"] == "wal"]
    assert wal, "a PostgreSQL 18 snapshot has WAL rows in pg_stat_io"
    assert n["wal"]["writes"] == sum(r["writes"] or 0 for r in wal)
    assert n["wal"]["syncs"] == sum(r["fsyncs"] or 0 for r in wal)
    assert n["wal"]["bytes"] == float(raw["wal"]["wal_bytes"])
    assert set(n["by_backend"]) == {r["backend_type"] for r in raw["io"]}
    workers = [r for r in relation if r["backend_type"] == "background worker"]  # parallel query workers
    assert n["workers"]["reads"] == sum(r["reads"] or 0 for r in workers)
    assert n["db"]["blks_read"] == raw["database"]["blks_read"]


def test_pg15_snapshot_falls_back_to_database_and_writer_views():
    raw = load("pg15_snapshot.json")
    assert "io" not in raw
    n = stats.normalize(raw)
    assert n["data"]["reads"] == raw["database"]["blks_read"]
    assert n["data"]["read_bytes"] == raw["database"]["blks_read"] * 8192
    written = sum(raw["writers"][k] for k in ("checkpoint_buffers_written", "bgwriter_buffers_clean",
                                               "backend_buffers_written"))
    assert n["data"]["writes"] == written
    assert n["data"]["write_time_ms"] is None
    assert n["wal"]["writes"] == raw["wal"]["wal_write"] and n["wal"]["write_bytes"] is None
    assert n["by_backend"] is None


@pytest.mark.parametrize("version, expected, absent", [
    (180006, ["stats/io_18", "pg_stat_checkpointer"], ["op_bytes", "wal_write,"]),
    (170004, ["op_bytes", "pg_stat_checkpointer", "wal_write"], ["read_bytes, 'read_time'"]),
    (160008, ["op_bytes", "buffers_backend"], []),
    (150020, ["buffers_backend", "wal_write"], ["pg_stat_io"]),
])
def test_snapshot_query_follows_the_version(version, expected, absent):
    query = stats.snapshot_sql(version)
    for text in expected:
        if text == "stats/io_18":
            assert "'read_bytes', read_bytes" in query
        else:
            assert text in query
    for text in absent:
        assert text not in query


@pytest.mark.parametrize("fixture", ["pg18_snapshot.json", "pg15_snapshot.json"])
def test_normalize_fills_the_neutral_counter_record(fixture):
    from dbio.engines import counters

    assert counters.problems(stats.normalize(load(fixture))) == []


def test_the_counter_record_check_names_what_is_wrong():
    from dbio.engines import counters

    record = stats.normalize(load("pg18_snapshot.json"))
    del record["wal"]
    record["data"] = {**record["data"], "reads": "many"}
    record["cpu"] = {}
    record["client"].pop("hits")
    assert counters.problems(record) == ["wal is missing", "cpu is not a counter group", "data.reads is 'many', "
                                         "not a number or None", "client.hits is missing"]


def test_session_states_label_what_a_session_does():
    assert stats.session_state("active", None, None) == "CPU"
    assert stats.session_state("active", "IO", "DataFileRead") == "IO:DataFileRead"
    assert stats.session_state("idle", None, None) == "Client:between slices"
    assert stats.session_state("idle in transaction", "Client", "ClientRead") == "Client:idle in transaction"
    assert stats.session_state(None, None, None) == "Unknown"


def test_dbio_s_own_connections_count_as_the_run_s_not_as_other_sessions():
    """The run's control, monitor and wait-sampler connections read catalog pages too (slow storage
    made that 1.2% of the reads once): their I/O is dbio's, never "other sessions'"."""
    import inspect

    from dbio.run import nodes

    from dbio.engines.base import helper_application_name

    query = stats.snapshot_sql(180000, "dbio:12345:")
    source = " ".join(inspect.getsource(nodes).split())  # however its lines are wrapped
    for helper in ("control", "monitor", "waits"):
        # each run's own: the parts of one run sharing a server count only theirs (dbio/parts.py)
        assert f"'{helper_application_name(912345, helper)}'" in query and "'dbio:control:12346'" not in query
        assert f'helper_application_name(self.run_id, "{helper}")' in source
    assert "LIKE 'dbio:12345:%'" in query


def test_every_value_of_a_snapshot_may_be_null():
    """A connection still authenticating has no application name nor user (issue 26, item 9): its NULL
    name, and a NULL anywhere in pg_stat_io's names, reads as a name, never as None among strings."""
    raw = load("pg18_snapshot.json")
    raw["others"] = {"active": 2, "names": [None, "psql", ""]}
    raw["io"] = [*raw["io"], {**raw["io"][0], "backend_type": None, "context": None}]
    n = stats.normalize(raw)
    assert n["gauges"]["other_session_names"] == sorted(["(no name yet)", "psql"])
    assert None not in n["by_backend"]
    assert stats.session_state("active", "IO", None) == "IO:unknown"
