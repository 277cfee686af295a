"""A DBIO_* variable dbio would not read is refused in one line, never passed over: a misspelt one
(DBIO_RUNTIME for DBIO_RUN_TIME) would leave the run at its default without a word, and an option only
the command line sets (DBIO_START_AT) would run the pods of one run unsynchronized. Its value is never shown
(a misspelt DBIO_ variable may hold anything)."""

from __future__ import annotations

import pytest

from dbio.config import Sources, load_config
from dbio.config_files import READ_ELSEWHERE, read_env
from dbio.config_resolver import command_sources
from dbio.engines import registry
from dbio.errors import ConfigErrors
from dbio.option_table import OPTIONS


def _refused(tmp_path, env: dict[str, str]) -> str:
    with pytest.raises(ConfigErrors) as refused:
        load_config(Sources(env=env, cwd=tmp_path, discover=False))
    return str(refused.value)


def test_a_misspelt_variable_is_refused_with_the_name_it_is_near(tmp_path):
    text = _refused(tmp_path, {"DBIO_RUNTIME": "secret-looking-value"})
    assert "DBIO_RUNTIME" in text and "names no dbio option" in text and "did you mean DBIO_RUN_TIME?" in text
    assert "secret-looking-value" not in text and text.count("\n") == 0


def test_a_variable_of_a_command_line_option_is_refused_naming_its_flag(tmp_path):
    for option in (o for o in OPTIONS if not o.file or o.kind == "settings"):
        text = _refused(tmp_path, {option.env: "1"})
        assert f"{option.key} is not read from the environment" in text and option.flag in text, text


def test_every_variable_of_an_option_read_from_the_environment_is_taken():
    for option in (o for o in OPTIONS if o.file and o.kind != "settings"):
        errors: list = []
        assert read_env({option.env: "1"}, errors) == {option.key: ("1", option.env)} and not errors


def test_the_variables_dbio_reads_elsewhere_and_others_are_left_alone():
    errors: list = []
    assert read_env({name: "1" for name in READ_ELSEWHERE} | {"PGHOST": "x", "DBIOX": "y"}, errors) == {}
    assert not errors


def test_an_engines_password_variable_never_reaches_the_configuration(monkeypatch):
    passwords = {registry.entry(name).password_env for name in registry.names()}
    for name in passwords:
        monkeypatch.setenv(name, "pw")
    monkeypatch.setenv("DBIO_RUN_TIME", "5s")
    env = command_sources({}).env
    assert env["DBIO_RUN_TIME"] == "5s" and not passwords & set(env)
