"""With --dsn, an option of dbio's own instance would be silently unused (the server given keeps
its own settings): it is refused, named where the user set it; a sweep over such a server passes
the unused defaults on without being refused, and a step that varies one is refused."""

import pytest

from dbio import cli
from dbio.config import Sources, load_config, option_values
from dbio.errors import ConfigErrors, UsageError

PG_DSN = "host=db.example port=5433 dbname=dbio user=u"
MYSQL_DSN = "mysql://u@db.example:3306/dbio"


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in [n for n in __import__("os").environ if n.startswith(("DBIO_", "PG", "MYSQL"))]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("engine, dsn, cli_values, shown", [
    ("postgresql", PG_DSN, {"shared_buffers": "256MiB"}, "--shared-buffers = 256 MiB"),
    ("postgresql", PG_DSN, {"io_method": "worker"}, "--io-method = worker"),
    ("postgresql", PG_DSN, {"max_connections": "300"}, "--max-connections = 300"),
    ("postgresql", PG_DSN, {"data_dir": "/srv/dbio"}, "--data-dir = /srv/dbio"),
    ("postgresql", PG_DSN, {"pg_settings": ["work_mem=64MB"]}, "--pg-setting"),
    ("postgresql", PG_DSN, {"standbys": "1"}, "--standbys = 1"),
    ("mysql", MYSQL_DSN, {"buffer_pool": "256MiB"}, "--buffer-pool = 256 MiB"),
    ("mysql", MYSQL_DSN, {"innodb_page_size": "8k"}, "--innodb-page-size"),
])
def test_an_instance_option_with_dsn_is_refused_naming_it(clean_env, engine, dsn, cli_values, shown):
    with pytest.raises(ConfigErrors) as exc:
        load_config(Sources(cli={"engine": engine, "dsn": (dsn,), **cli_values}, cwd=clean_env, discover=False))
    text = str(exc.value.errors[0])
    assert len(exc.value.errors) == 1, exc.value.errors
    assert text.startswith(shown) and "an existing server (--dsn) keeps its own" in text and "without --dsn" in text
    # without --dsn the same value is dbio's own instance's, and taken
    load_config(Sources(cli={"engine": engine, **cli_values}, cwd=clean_env, discover=False))


def test_a_file_or_the_environment_setting_an_instance_option_with_dsn_is_told_unused(clean_env):
    """A dbio.toml or environment may serve dbio's own instance too: with --dsn its instance options are
    said to be unused, in one line, and the run goes on."""
    (clean_env / "dbio.toml").write_text('[instance]\nshared_buffers = "1GiB"\n')
    config = load_config(Sources(cli={"dsn": (PG_DSN,)}, env={"DBIO_IO_WORKERS": "6"}, cwd=clean_env))
    assert config.notices == ("dbio.toml: instance.shared_buffers, DBIO_IO_WORKERS: not used with --dsn (options of "
                              "dbio's own instance; the server given keeps its own settings, which the result "
                              "records)",)
    embedded = Sources(cli={}, env={"DBIO_SHARED_BUFFERS": "32MiB"}, cwd=clean_env, discover=False)
    assert load_config(embedded).notices == ()  # dbio's own instance: used


def test_the_command_line_refuses_it_in_one_line_before_anything_is_made(clean_env, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "--dsn", PG_DSN, "--shared-buffers", "4GiB", "--results-dir", str(clean_env / "r")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--shared-buffers = 4 GiB" in err and list(clean_env.iterdir()) == []


def test_a_sweep_over_a_dsn_passes_the_unused_defaults_on_and_refuses_a_step_that_varies_one(clean_env):
    from dbio.sweep import step_config as sweep_step_config

    base = load_config(Sources(cli={"dsn": (PG_DSN,), "data_dir": None}, cwd=clean_env, discover=False))
    stored = option_values(base)
    assert stored["shared_buffers"] == 128 << 20 and stored["data_dir"]  # every option's value is stored
    step = sweep_step_config.step_config(stored, {"threads_per_schema": "2"}, clean_env, base.connection.dsn)
    assert step.workload.threads_per_schema == 2 and not step.connection.embedded
    with pytest.raises(UsageError, match=r"sweep step shared_buffers=256MiB: --shared-buffers = 256 MiB: sets up"):
        sweep_step_config.step_config(stored, {"shared_buffers": "256MiB"}, clean_env, base.connection.dsn)


def test_a_sweep_on_the_embedded_instance_keeps_its_instance_options(clean_env):
    from dbio.sweep import step_config as sweep_step_config

    base = load_config(Sources(cli={"shared_buffers": "32MiB", "io_method": "worker"}, cwd=clean_env,
                               discover=False))
    step = sweep_step_config.step_config(option_values(base), {"threads_per_schema": "2"}, clean_env, None)
    assert step.instance.shared_buffers == 32 << 20 and step.instance.io_method == "worker"
    assert step.connection.embedded


def test_the_fix_names_the_flag_the_user_gave(clean_env):
    with pytest.raises(ConfigErrors) as exc:
        load_config(Sources(cli={"dsn": (PG_DSN,), "io_workers": "6"}, cwd=clean_env, discover=False))
    assert "remove --io-workers, or run without --dsn" in str(exc.value.errors[0])
