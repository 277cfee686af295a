"""The managed MariaDB/MySQL instance's pure parts: its settings as server options, when it must
restart, the version, its connection string (no password ever sent), its options."""

from pathlib import Path

import pytest

from dbio.config import Sources, load_config
from dbio.engines.mysql import dsn
from dbio.engines.mysql.instance import binaries, settings
from dbio.engines.mysql.instance.layout import Layout
from dbio.engines.mysql.instance.managed import _product, why_failed
from dbio.engines.mysql.engine_options import InstanceConfig
from dbio.errors import ConfigErrors

MiB = 1 << 20


def test_the_profile_is_what_the_method_needs():
    cfg = InstanceConfig(data_dir=Path("/x"), buffer_pool=32 * MiB)
    got = settings.profile(cfg, 8192, sessions=4)
    assert got["innodb_buffer_pool_size"] == str(32 * MiB) and got["innodb_page_size"] == "8192"
    assert got["innodb_flush_method"] == "O_DIRECT" and got["skip_networking"] == "ON"
    assert got["innodb_read_ahead_threshold"] == "0" and got["innodb_random_read_ahead"] == "OFF"
    assert got["performance_schema"] == "ON" and got["innodb_buffer_pool_load_at_startup"] == "OFF"
    assert got["innodb_adaptive_hash_index"] == "OFF"
    assert got["max_connections"] == "151"  # the server's default, enough for few sessions
    assert settings.profile(cfg, 8192, sessions=400)["max_connections"] == "420"


def test_the_server_reads_no_option_file_and_only_its_own_directories():
    layout = Layout(Path("/srv/i"))
    args = settings.arguments({"innodb_page_size": "8192", "skip_networking": "ON"}, layout)
    assert args[0] == "--no-defaults"  # must come first, or the server reads /etc/mysql and ~/.my.cnf
    assert "--datadir=/srv/i/data" in args and "--socket=/srv/i/socket/mysqld.sock" in args
    assert "--port=0" in args and "--skip-networking=ON" in args and "--innodb-page-size=8192" in args


def test_an_option_given_once_per_key():
    layout = Layout(Path("/srv/i"))
    args = settings.arguments({"performance_schema_instrument:stage/%": "OFF",
                               "performance_schema_instrument:idle": "OFF", "innodb_page_size": "8192"}, layout)
    assert args[-3:] == ["--performance-schema-instrument=stage/%=OFF", "--performance-schema-instrument=idle=OFF",
                         "--innodb-page-size=8192"]
    assert settings.argument("innodb_flush_method", "O_DIRECT") == "--innodb-flush-method=O_DIRECT"


def test_a_restart_only_for_a_setting_that_differs_or_too_few_connections():
    running = {"innodb_buffer_pool_size": "1", "max_connections": "200"}
    assert settings.restart_needed(running, {"innodb_buffer_pool_size": "1", "max_connections": "151"}) == []
    assert settings.restart_needed(running, {"innodb_buffer_pool_size": "2", "max_connections": "300"}) == [
        "innodb_buffer_pool_size", "max_connections"]


def test_the_version_and_the_product():
    text = "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n"
    assert binaries.parse_version(text) == "10.11.19-MariaDB-0+deb12u1"
    assert binaries.parse_version("mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)") == "8.0.36"
    assert binaries.parse_version("nonsense") is None
    assert _product("10.11.19-MariaDB-0+deb12u1") == "MariaDB 10.11.19" and _product("8.0.36") == "MySQL 8.0.36"


def test_the_instance_connection_string_sends_no_password(monkeypatch):
    text = "mysql://root@localhost/dbio?unix_socket=/srv/i/socket/mysqld.sock&auth=socket"
    parsed = dsn.parse(text)
    assert parsed.socket_auth and parsed.via_socket and dsn.socket_path(parsed) == "/srv/i/socket/mysqld.sock"
    assert dsn.redact(text) == text and dsn.parse(dsn.unparse(parsed)) == parsed
    assert "auth" in (dsn.problem("mysql://root@localhost/dbio?auth=password") or "")
    assert not dsn.parse("mysql://root@localhost/dbio").socket_auth


def test_the_instance_options(tmp_path):
    config = load_config(Sources(cwd=tmp_path, discover=False, cli={"engine": "mysql", "buffer_pool": "64MiB",
                                                                    "innodb_page_size": "8k", "data_dir": "inst"}))
    assert config.instance == InstanceConfig(data_dir=tmp_path / "inst", buffer_pool=64 * MiB, innodb_page_size="8k")
    assert config.connection.embedded
    with pytest.raises(ConfigErrors, match="--innodb-page-size = 32k"):
        load_config(Sources(cwd=tmp_path, discover=False, cli={"engine": "mysql", "innodb_page_size": "32k"}))
    with pytest.raises(ConfigErrors, match="buffer-pool"):  # another engine's option is refused
        load_config(Sources(cwd=tmp_path, discover=False, cli={"buffer_pool": "64MiB"}))


@pytest.mark.parametrize("command", [["instance", "init"], ["setup", "--scale", "128MiB"]])
def test_without_server_binaries_one_line_names_the_package_and_nothing_is_made(tmp_path, monkeypatch, capsys,
                                                                                 command):
    from dbio import cli

    monkeypatch.setattr(binaries, "SERVER_DIRS", (tmp_path / "no-server-here",))
    data_dir = tmp_path / "instance"
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*command, "--engine", "mysql", "--data-dir", str(data_dir)])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1, err
    assert "mariadbd or mysqld" in err and "mariadb-server" in err
    assert not data_dir.exists()


def test_server_programs_others_could_change_are_refused(tmp_path):
    from dbio.errors import UsageError

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    server = bin_dir / "mariadbd"
    server.write_text("#!/bin/sh\n")
    server.chmod(0o757)  # writable by every user
    with pytest.raises(UsageError, match="refusing to use the server program"):
        binaries.require_trusted(binaries.Binaries(server, None, "10.11.19-MariaDB"))


def test_every_row_goes_in_with_a_partner_row_of_zeros_the_server_makes():
    import numpy as np

    from dbio.engines.base import RowBatch
    from dbio.engines.mysql import loader

    batch = RowBatch(np.array([7, 3], dtype=np.int64), np.array([[1, 2], [255, 0]], dtype=np.uint8))
    assert loader.values_sql(11, batch) == [
        "(11,7,7,X'0102')", "(12,-12,0,REPEAT(X'00',2))", "(13,3,3,X'ff00')", "(14,-14,0,REPEAT(X'00',2))"]


def test_quickstart_names_the_engine_of_the_server_it_leaves_running(tmp_path):
    from dbio.commands.quickstart import closing_lines

    config = load_config(Sources(cwd=tmp_path, discover=False, cli={"engine": "mysql", "data_dir": "inst"}))
    line, = closing_lines(config)
    assert f"dbio instance stop --engine mysql --data-dir {tmp_path / 'inst'}" in line
    default, = closing_lines(load_config(Sources(cwd=tmp_path, discover=False)))
    assert "--engine" not in default and default.endswith("dbio instance destroy")


def test_a_pid_file_naming_another_process_or_a_link_names_no_server(tmp_path):
    import os

    from dbio.engines.mysql.instance import process

    layout = Layout(tmp_path)
    layout.socket_dir.mkdir()
    assert process.pid_of(layout) is None  # no pid file
    layout.pid_file.write_text(f"{os.getpid()}\n")  # this test, not a mariadbd of this instance: never signalled
    assert process.pid_of(layout) is None and not process.is_server_of(os.getpid(), layout)
    layout.pid_file.unlink()
    (tmp_path / "elsewhere").write_text("1\n")
    layout.pid_file.symlink_to(tmp_path / "elsewhere")  # the server user's link is not followed
    assert process.pid_of(layout) is None


def test_a_failed_installer_is_told_by_its_first_error_not_its_closing_abort():
    output = ("2026-12-04  2:47:26 0 [Note] Starting MariaDB 10.11.14 as process 4242\n"
              "2026-12-04  2:47:26 0 [ERROR] InnoDB: Cannot allocate memory for the buffer pool\n"
              "2026-12-04  2:47:26 0 [ERROR] Plugin 'InnoDB' registration as a STORAGE ENGINE failed.\n"
              "2026-12-04  2:47:26 0 [ERROR] Aborting\n")
    assert why_failed(output, 1) == "2026-12-04  2:47:26 0 [ERROR] InnoDB: Cannot allocate memory for the buffer pool"
    assert why_failed("2026-12-04  2:47:26 0 [ERROR] Aborting\n", 1) == "2026-12-04  2:47:26 0 [ERROR] Aborting"
    assert why_failed("Installation of system tables failed!\n\n", 1) == "Installation of system tables failed!"
    assert why_failed("", 3) == "exit status 3"
