"""A --data-dir holding another engine's managed instance: named for the engine it is for, in one line,
rather than "no dbio instance" (which invited a second instance, or a destroy that refused without saying why)."""

import pytest

from dbio import cli
from dbio.config import Sources, load_config
from dbio.engines import registry
from dbio.errors import ConfigErrors


def record_of(engine: str) -> str:
    return registry.entry(engine).instance_record


def test_each_engine_names_its_own_record():
    assert len({record_of(name) for name in registry.names()}) == len(registry.names())


@pytest.mark.parametrize("owner", ["mysql", "postgresql"])
def test_the_engine_an_instance_directory_is_for(tmp_path, owner):
    assert registry.owners_of_instance(tmp_path) == ()
    (tmp_path / record_of(owner)).write_text("{}")
    assert registry.owners_of_instance(tmp_path) == (owner,)


@pytest.mark.parametrize("engine, owner", [("postgresql", "mysql"), ("mysql", "postgresql")])
def test_one_line_names_the_engine(tmp_path, engine, owner):
    (tmp_path / record_of(owner)).write_text("{}")
    with pytest.raises(ConfigErrors) as caught:
        load_config(Sources(cli={"engine": engine, "data_dir": str(tmp_path)}, cwd=tmp_path))
    assert [str(e) for e in caught.value.errors] == [
        f"--data-dir = {tmp_path}: holds a managed instance of the {owner} engine, and the engine is {engine}; "
        f"add --engine {owner}, or give another --data-dir"]


def test_its_own_engine_is_not_refused(tmp_path):
    (tmp_path / record_of("mysql")).write_text("{}")
    config = load_config(Sources(cli={"engine": "mysql", "data_dir": str(tmp_path)}, cwd=tmp_path))
    assert config.connection.engine == "mysql" and config.instance.data_dir == tmp_path


@pytest.mark.parametrize("engine", ["mysql", "postgresql"])
def test_a_directory_with_its_own_engines_record_besides_anothers_is_not_refused(tmp_path, engine):
    """A directory holding both engines' records (one planted, or left there): the engine asked for has its
    instance there, and its own checks judge its record (the first engine's name was given instead, and
    `--engine mysql` refused with 'add --engine postgresql')."""
    for name in registry.names():
        (tmp_path / record_of(name)).write_text("{}")
    config = load_config(Sources(cli={"engine": engine, "data_dir": str(tmp_path)}, cwd=tmp_path))
    assert config.connection.engine == engine


def test_a_directory_that_cannot_be_looked_into_is_one_line_not_an_internal_error(tmp_path, capsys):
    """A --data-dir dbio cannot look into (a name too long; for a user who may not enter a parent, Permission
    denied): one line and exit 2, not "internal error: [Errno 36] File name too long" (run and setup met it
    first where they look for the instance's remembered options)."""
    too_long = tmp_path / ("d" * 300)
    with pytest.raises(ConfigErrors) as caught:
        load_config(Sources(cli={"data_dir": str(too_long)}, cwd=tmp_path))
    assert [str(e) for e in caught.value.errors] == [
        f"--data-dir = {too_long}: cannot be looked into (File name too long); give another --data-dir"]
    for command in (["instance", "status"], ["run"], ["setup"]):  # run and setup look for remembered options first
        with pytest.raises(SystemExit) as exited:
            cli.main([*command, "--data-dir", str(too_long)])
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.count("\n") == 1 and "cannot be looked into (File name" in err, err
