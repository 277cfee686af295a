"""The MySQL engine without a server: DSNs, passwords, configuration checks, counters from a
recorded snapshot of MariaDB 10.11's global status, row sizing, session states."""

import json
from pathlib import Path

import pytest

from dbio.config import Sources, load_config
from dbio.engines import counters, registry
from dbio.engines.mysql import catalog, dsn, loader, sqlfiles, stats
from dbio.errors import ConfigErrors

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mysql" / "snapshot_mariadb_10_11.json"


def test_a_local_dsn_uses_the_socket_as_the_mysql_client_does(monkeypatch):
    monkeypatch.delenv("MYSQL_UNIX_PORT", raising=False)
    parsed = dsn.parse("mysql://root@localhost/dbio_test")
    assert (parsed.user, parsed.host, parsed.database, parsed.unix_socket) == ("root", None, "dbio_test", None)
    assert parsed.via_socket and dsn.socket_path(parsed) in dsn.DEFAULT_SOCKETS
    given = dsn.parse("mysql://app@localhost/db1?unix_socket=/srv/my.sock")
    assert given.via_socket and dsn.socket_path(given) == "/srv/my.sock"
    monkeypatch.setenv("MYSQL_UNIX_PORT", "/env/my.sock")
    assert dsn.socket_path(parsed) == "/env/my.sock"


def test_a_dsn_with_host_or_port_uses_tcp():
    remote = dsn.parse("mysql://bench@db.example:3307/dbio")
    assert (remote.host, remote.port, remote.via_socket) == ("db.example", 3307, False)
    assert dsn.parse("mysql://bench@127.0.0.1/dbio").port == 3306
    assert dsn.parse("mysql://bench@localhost:3306/dbio").host == "localhost"  # a port asks for TCP


@pytest.mark.parametrize("text, why", [
    ("postgresql://u@h/db", "does not begin with mysql://"),
    ("mysql://u@h", "names no database"),
    ("mysql://u@h/db?ssl=1", "unknown parameter 'ssl'"),
    ("mysql://u@h:99999/db", "cannot be parsed"),
    ("mysql://u@remote/db?unix_socket=/x.sock", "needs the host localhost"),
])
def test_a_bad_dsn_says_what_is_wrong(text, why):
    assert why in (dsn.problem(text) or "")


def test_a_password_in_the_dsn_is_found_and_never_kept():
    for text in ("mysql://root:s3cret@localhost/db", "mysql://root@localhost/db?password=s3cret",
                 "mysql://root:@localhost/db"):
        assert dsn.has_password(text)
        assert "s3cret" not in dsn.redact(text) and "s3cret" not in dsn.scrub(f"failed: {text}")
    assert not dsn.has_password("mysql://root@localhost/db")
    assert dsn.redact("mysql://root:s3cret@db:3307/x") == "mysql://root@db:3307/x"
    assert dsn.same_server("mysql://root:s3cret@db:3307/x", "mysql://root@db:3307/x")
    assert not dsn.same_server("mysql://root@db:3307/x", "mysql://root@db:3308/x")
    assert registry.entry("mysql").redact_dsn("mysql://a:b@h/d") == "mysql://a@h/d"


def test_the_password_comes_from_mysql_pwd_or_the_option_file(tmp_path, monkeypatch):
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    option_file = tmp_path / ".my.cnf"
    assert dsn.password(option_file) is None
    option_file.write_text("[mysqld]\npassword = server\n[client]\nuser = me\npassword = 'from file'\n")
    assert dsn.password(option_file) == "from file"
    monkeypatch.setenv("MYSQL_PWD", "from env")
    assert dsn.password(option_file) == "from env"


def _config_errors(tmp_path, **cli):
    with pytest.raises(ConfigErrors) as exc:
        load_config(Sources(cwd=tmp_path, discover=False, cli={"engine": "mysql", **cli}))
    return [str(e) for e in exc.value.errors]


def test_the_configuration_refuses_a_password_and_a_system_database(tmp_path):
    errors = _config_errors(tmp_path, dsn=["mysql://root:s3cret@localhost/dbio"])
    assert len(errors) == 1 and "s3cret" not in errors[0] and "MYSQL_PWD" in errors[0]
    assert errors[0].startswith("--dsn = (contains a password): a password on the command line")
    assert "keeps for itself" in _config_errors(tmp_path, dsn=["mysql://root@localhost/mysql"])[0]
    assert "keeps for itself" in _config_errors(tmp_path, dbname="mysql")[0]  # the managed instance's database
    good = load_config(Sources(cwd=tmp_path, discover=False,
                               cli={"engine": "mysql", "dsn": ["mysql://root@localhost/dbio_test"]}))
    assert good.to_dict()["connection"]["dsn"] == "mysql://root@localhost/dbio_test"


def test_normalize_a_recorded_snapshot_gives_the_neutral_counters():
    raw = json.loads(FIXTURE.read_text())
    out = stats.normalize(raw)
    assert counters.problems(out) == []
    s = raw["status"]
    misses, page = s["innodb_buffer_pool_reads"], s["innodb_page_size"]
    assert out["client_normal"]["reads"] == misses and out["client_normal"]["read_bytes"] == misses * page
    read_ahead = s["innodb_buffer_pool_read_ahead"] + s["innodb_buffer_pool_read_ahead_rnd"]
    assert out["client"]["reads"] == misses + read_ahead
    assert out["client"]["hits"] == s["innodb_buffer_pool_read_requests"] - misses
    assert out["data"]["reads"] == s["innodb_data_reads"] and out["data"]["read_bytes"] == s["innodb_data_read"]
    assert out["data"]["writes"] == s["innodb_data_writes"]
    assert out["wal"]["bytes"] == s["innodb_lsn_current"] and out["wal"]["write_bytes"] == s["innodb_os_log_written"]
    assert out["wal"]["syncs"] is None  # MariaDB 10.11 does not count redo log fsyncs
    assert out["db"]["commits"] == s["handler_commit"] and out["client"]["read_time_ms"] is None
    assert "checkpoints" not in out and set(out["by_backend"]) == {"page cleaner"}  # its flushing, apart


def test_normalize_takes_mysql_8_names_when_present():
    raw = json.loads(FIXTURE.read_text())
    status = {k: v for k, v in raw["status"].items() if k != "innodb_lsn_current"}
    status.update(innodb_os_log_fsyncs=77.0, innodb_rows_read=5.0)
    out = stats.normalize({**raw, "status": status})
    assert counters.problems(out) == []
    assert out["wal"]["syncs"] == 77.0 and out["wal"]["bytes"] == status["innodb_os_log_written"]
    assert out["db"]["tup_returned"] == 5.0


def test_a_row_and_its_partner_fill_a_page_and_the_row_left_alone_is_never_merged():
    """At every page size: a row with its partner fills a page (no third row fits, so the next row
    starts a page), and the row left once its partner is deleted fills more of the page than the
    table's MERGE_THRESHOLD (InnoDB would merge it with a neighbour otherwise) but less than the
    default 50% (which would merge the pages two by two: why the table sets it)."""
    import re

    threshold = int(re.search(r"MERGE_THRESHOLD=(\d+)", sqlfiles.statement("data_table.sql")).group(1))
    assert "PRIMARY KEY (id) COMMENT 'MERGE_THRESHOLD=" in sqlfiles.statement("data_table.sql")
    for page in (4096, 8192, 16384):
        filler = loader.filler_bytes(page)
        row = filler + 8 * 3 + 6 + 7 + 5 + 2  # columns, hidden trx id and roll pointer, header, length
        usable = page - 38 - 56 - 8 - 26  # file header, page header, trailer, infimum and supremum
        assert 2 * row <= usable < 3 * row
        assert row <= page // 2 - 100  # under InnoDB's largest row (about half a page)
        assert threshold / 100 < row / page < 0.5, page


def test_leaf_pages_prove_one_row_a_page():
    from dbio.engines.mysql.verify import leaf_pages_fit

    assert leaf_pages_fit(1000, 1000) and leaf_pages_fit(1000, 1000 + 64)  # a last extent's free pages
    assert not leaf_pages_fit(1000, 500)  # two rows a page
    assert not leaf_pages_fit(1000, 999)  # one page holds two rows
    assert not leaf_pages_fit(1000, 1000 + 65)
    big = 1 << 20  # 2% over, at most
    assert leaf_pages_fit(big, big + big // 50) and not leaf_pages_fit(big, big + big // 50 + 1)


def test_insert_values_carry_the_filler_as_hex():
    import numpy as np

    from dbio.engines.base import RowBatch

    batch = RowBatch(np.array([7, 3], dtype=np.int64), np.array([[1, 2], [255, 0]], dtype=np.uint8))
    assert loader.values_sql(10, batch)[::2] == ["(10,7,7,X'0102')", "(12,3,3,X'ff00')"]
    assert loader.statement_rows(16 << 20, 8000) == 256 and loader.statement_rows(1 << 20, 8000) == 32


def test_tags_name_the_setup_and_nothing_else_is_dbios():
    assert catalog.tag_id(catalog.tag("0123456789ab")) == "0123456789ab"
    assert catalog.tag_id("dbio: something") is None and catalog.tag_id(None) is None


def test_the_sql_lives_in_files_and_splits_into_statements():
    assert set(registry.entry("mysql").builtin_scripts()) >= {"slice.sql", "control_tables.sql", "data_table.sql"}
    assert [s.split()[2] for s in sqlfiles.statements("control_tables.sql")] == [
        "dbio_setup", "dbio_setup_tables", "dbio_run_control", "dbio_pool", "dbio_rate_ticket"]
    assert sqlfiles.statement("slice.sql").startswith("CREATE PROCEDURE {procedure}(")


@pytest.mark.parametrize("command, state, label", [
    ("Sleep", "", "Client:between slices"), ("Query", "User lock", "Lock:barrier"),
    ("Query", "User sleep", "Timeout:think time"), ("Query", "Sending data", "Active:Sending data"),
    (None, None, "Unknown")])
def test_session_states_come_from_the_processlist(command, state, label):
    assert stats.session_state(command, state) == label
