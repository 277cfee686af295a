"""A connection string of one engine given to another: named for the engine it is for, never with its password."""

import pytest

from dbio.config import Sources, load_config
from dbio.engines import registry, scrub
from dbio.errors import ConfigErrors
from tests import forked_dbio


@pytest.mark.parametrize("dsn, owner", [
    ("mysql://root@localhost/test", "mysql"), ("MariaDB://u@h/d", "mysql"), ("postgresql://u@h/d", "postgresql"),
    ("postgres://u@h/d", "postgresql"), ("host=h dbname=d", None), ("http://u@h/d", None), ("", None)])
def test_the_engine_a_connection_string_is_for(dsn, owner):
    assert registry.owner_of_dsn(dsn) == owner


@pytest.mark.parametrize("engine, dsn, expected", [
    ("postgresql", "mysql://root:s3cret@localhost/test",
     "--dsn = mysql://root@localhost/test: is a connection string of the mysql engine, and the engine is "
     "postgresql; add --engine mysql, or give a postgresql connection string"),
    ("mysql", "postgresql://u:s3cret@db/x",
     "--dsn = user=u dbname=x host=db: is a connection string of the postgresql engine, and the engine is mysql; "
     "add --engine postgresql, or give a mysql connection string"),
])
def test_one_line_names_the_engine_and_no_other_rule_speaks(tmp_path, engine, dsn, expected):
    with pytest.raises(ConfigErrors) as caught:
        load_config(Sources(cli={"engine": engine, "dsn": (dsn,)}, cwd=tmp_path))
    assert [str(e) for e in caught.value.errors] == [expected]


@pytest.mark.parametrize("dsn", ["mysql://root:s3cret@h/d", "postgresql://u:s3cret@h/d", "http://u:s3cret@h/d",
                                 "host=h password=s3cret"])
def test_every_engine_scrubs_every_scheme(dsn):
    for name in registry.names():
        assert "s3cret" not in registry.entry(name).scrub(f"cannot parse {dsn}")
    assert "s3cret" not in scrub(dsn)


@pytest.mark.parametrize("args", [["run", "--dsn", "mysql://root:s3cret@localhost/test"],
                                  ["run", "--engine", "mysql", "--dsn", "postgresql://u:s3cret@db/x"],
                                  ["run", "--dsn", "http://u:s3cret@db/x"],
                                  ["run", "--engine", "mysql", "--dsn", "http://u:s3cret@db/x"]])
def test_no_password_reaches_the_terminal(tmp_path, args):
    done = forked_dbio.completed(args, cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert "s3cret" not in done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("engine, dsn, where", [
    ("postgresql", "postgresql://root:p@ss@127.0.0.1:1/x", {"DBIO_DSN": "postgresql://root:p@ss@127.0.0.1:1/x"}),
    ("mysql", "postgresql://u:p@ss@db/x", None), ("postgresql", "mysql://root:p@ss@localhost/x", None)])
def test_a_password_typed_with_an_unencoded_at_is_never_shown_in_part(tmp_path, engine, dsn, where):
    # libpq ends the user:password part at the first "@": the rest ("ss") was shown and stored as the host
    sources = Sources(cli={"engine": engine}, env=where, cwd=tmp_path) if where else \
        Sources(cli={"engine": engine, "dsn": (dsn,)}, cwd=tmp_path)
    with pytest.raises(ConfigErrors) as caught:
        load_config(sources)
    text = "\n".join(str(e) for e in caught.value.errors)
    assert "ss@" not in text and "p@" not in text, text
    assert "ss@" not in scrub(f"failed: {dsn} refused") and "p@" not in scrub(f"failed: {dsn} refused")


def test_a_password_asked_for_reaches_every_engine_s_driver(monkeypatch):
    import getpass
    import os

    from dbio import config_resolver

    for name in ("PGPASSWORD", "MYSQL_PWD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(getpass, "getpass", lambda prompt: "typed-pw")
    config_resolver.command_sources({"ask_password": True})
    assert os.environ["PGPASSWORD"] == "typed-pw" and os.environ["MYSQL_PWD"] == "typed-pw"
