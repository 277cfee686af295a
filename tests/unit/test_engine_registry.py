"""The engine registry: the engine option, engine-declared options, and no driver loaded to read them."""

import dataclasses
import subprocess
import sys

import pytest

from dbio import cli
from dbio.config import Sources, load_config
from dbio.config_checks import foreign_option_errors
from dbio.engines import registry
from dbio.errors import ConfigErrors, UsageError
from dbio.option_table import BY_KEY, OPTIONS


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


def test_the_engine_is_postgresql_by_default_and_its_options_are_marked(tmp_path):
    config = load_config(Sources(cwd=tmp_path, discover=False))
    assert config.connection.engine == registry.DEFAULT == "postgresql"
    assert BY_KEY["engine"].choices == registry.names() and BY_KEY["engine"].section == "connection"
    postgres_only = {o.key for o in OPTIONS if o.engine == "postgresql"}
    mysql_only = {o.key for o in OPTIONS if o.engine == "mysql"}
    instance_keys = {o.key for o in OPTIONS if o.section == "instance"}
    # data_dir: every engine's; the workload's PostgreSQL-only options are not the instance's
    assert instance_keys == postgres_only - {"access_path", "scan_workers"} | mysql_only | {"data_dir"}
    assert "access_path" in postgres_only and {"buffer_pool", "innodb_page_size"} <= mysql_only
    assert {"scale", "dsn", "engine", "interval"}.isdisjoint(postgres_only)
    assert len({o.key for o in OPTIONS}) == len(OPTIONS)


def test_an_unknown_engine_is_one_line_listing_the_choices(tmp_path, capsys):
    code, _, err = run(["instance", "status", "--engine", "oracle", "--data-dir", str(tmp_path / "none")], capsys)
    assert code == 2
    assert err.strip().splitlines() == ["dbio: --engine = oracle: not one of postgresql, mysql; "
                                        "use postgresql or mysql"]
    with pytest.raises(ConfigErrors) as exc:
        load_config(Sources(cwd=tmp_path, discover=False, env={"DBIO_ENGINE": "db2"}))
    assert "DBIO_ENGINE" in str(exc.value.errors[0]) and "postgresql" in str(exc.value.errors[0])
    with pytest.raises(UsageError, match="use one of postgresql, mysql"):
        registry.entry("oracle")


def test_an_option_of_another_engine_set_by_the_user_is_refused(tmp_path):
    config = load_config(Sources(cwd=tmp_path, discover=False, cli={"shared_buffers": "256MiB", "scale": "1GiB"}))
    assert foreign_option_errors(config) == []
    # as it would be with another engine chosen (only PostgreSQL is registered today)
    other = dataclasses.replace(config, connection=dataclasses.replace(config.connection, engine="other"),
                                spec=dataclasses.replace(config.spec, name="other"))
    errors = [str(e) for e in foreign_option_errors(other)]
    assert errors == ["--shared-buffers = 256 MiB: applies only to engine postgresql (engine is other); "
                      "remove it, or set engine = postgresql"]


def test_dbio_options_shows_the_engine_each_option_belongs_to(capsys):
    cli.main(["options"])  # returns: exit 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if line.startswith("[")]
    assert len(heads) == len(OPTIONS)
    assert "[instance] shared_buffers  --shared-buffers  DBIO_SHARED_BUFFERS  (postgresql only)" in heads
    assert "[workload] access_path  --access-path  DBIO_ACCESS_PATH  (postgresql only)" in heads
    assert "[workload] scale  --scale  DBIO_SCALE slob.conf SCALE" in heads
    assert "[connection] engine  --engine  DBIO_ENGINE" in heads


def test_reading_options_and_configuration_loads_no_driver(tmp_path):
    """Every engine's entry is read for the option table: none may load a database driver."""
    code = ("import sys; from dbio import cli, target; from dbio.config import Sources, load_config; "
            f"load_config(Sources(cwd=__import__('pathlib').Path({str(tmp_path)!r}), discover=False)); "
            "[__import__(m) for m in ('dbio.engines.postgres.entry', 'dbio.engines.mysql.entry')]; "
            "loaded = [m for m in ('psycopg', 'pymysql', 'MySQLdb', 'mariadb') if m in sys.modules]; "
            "assert not loaded, loaded")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
