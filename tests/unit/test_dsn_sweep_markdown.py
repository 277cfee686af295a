"""Issue 8, item 16: a malformed DSN is a connection-string error; a sweep takes a password from
DBIO_DSN as run does and never stores it; Markdown output escapes what a label can inject."""

import json

import pytest

from dbio import cli

SECRET = "hunter2-not-for-files"


def run_cli(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in [n for n in __import__("os").environ if n.startswith(("DBIO_", "PG"))]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("dsn, fragment", [
    ("host=x port", 'missing "=" after "port"'),
    ("nonsense", 'missing "=" after "nonsense"'),
    ("host=x colour=blue", 'invalid connection option "colour"'),
    ("host='x", "unterminated quoted string"),
    ("host=x port=54x", 'port "54x" is not a number'),
    ("postgresql://u@h:70000/db", 'port "70000" is not a number'),
    ("postgresql://u@h/db?colour=blue", 'invalid URI query parameter: "colour"'),
])
@pytest.mark.parametrize("command", [["run"], ["setup"], ["sweep", "--sessions", "1,2"], ["teardown"]])
def test_a_malformed_dsn_is_a_connection_string_error_before_anything_is_created(clean_env, capsys, dsn, fragment,
                                                                                 command):
    code, _, err = run_cli([*command, "--dsn", dsn], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "--dsn" in lines[0] and "is not a valid connection string" in lines[0] and fragment in lines[0]
    assert "server reported" not in err and "internal error" not in err and "host=db port=5432" in lines[0]
    assert list(clean_env.iterdir()) == []


def test_a_malformed_dsn_in_the_environment_names_it_and_hides_the_password(clean_env, capsys, monkeypatch):
    monkeypatch.setenv("DBIO_DSN", f"host=x password={SECRET} port")
    code, _, err = run_cli(["run"], capsys)
    assert code == 2 and err.startswith("dbio: DBIO_DSN = ") and "connection string" in err and SECRET not in err


# -- sweep with a password in DBIO_DSN ---------------------------------------------------------

def test_sweep_steps_take_the_password_from_dbio_dsn_and_keep_it_out_of_what_is_stored(clean_env, monkeypatch):
    from dbio.sweep import step_config as sweep_step_config
    from dbio.config import Sources, environment, load_config, option_values

    monkeypatch.setenv("DBIO_DSN", f"host=db.example port=5433 dbname=dbio user=u password={SECRET}")
    base = load_config(Sources(env=environment(), cwd=clean_env))
    stored = option_values(base)
    assert SECRET not in json.dumps(stored)
    step = sweep_step_config.step_config(stored, {"threads_per_schema": "2"}, clean_env, base.connection.dsn)
    assert SECRET in step.connection.dsn and step.workload.threads_per_schema == 2
    assert SECRET not in json.dumps(step.to_dict())


def test_sweep_accepts_a_password_in_dbio_dsn_as_run_does(clean_env, capsys, monkeypatch):
    """Before, every step's configuration took the DSN as if typed on the command line and refused
    its password; now the sweep goes on to connect (here to a socket that does not exist)."""
    monkeypatch.setenv("DBIO_DSN", f"host={clean_env}/no-server port=1 dbname=dbio user=u password={SECRET}")
    code, out, err = run_cli(["sweep", "--sessions", "1,2"], capsys)
    assert "contains a password" not in err and "cannot connect to PostgreSQL" in err
    assert SECRET not in out + err and list(clean_env.iterdir()) == []


@pytest.mark.parametrize("env_dsn, expected_password", [
    (f"host=db.example port=5433 dbname=dbio user=u password={SECRET}", SECRET),  # the same server: its password
    (f"host=other port=5433 dbname=dbio user=u password={SECRET}", None),  # another server: not sent there
    (None, None),  # PGPASSWORD or ~/.pgpass, as libpq finds them
])
def test_a_resumed_sweep_gets_the_password_from_dbio_dsn_again(clean_env, monkeypatch, env_dsn, expected_password):
    from dbio.sweep import step_config as sweep_step_config
    from dbio.engines.postgres.dsn import parse

    stored = {"dsn": "host=db.example port=5433 dbname=dbio user=u"}
    if env_dsn:
        monkeypatch.setenv("DBIO_DSN", env_dsn)
    live = sweep_step_config.live_dsn(stored["dsn"])
    assert parse(live).get("password") == expected_password
    assert {k: v for k, v in parse(live).items() if k != "password"} == parse(stored["dsn"])


# -- Markdown escapes labels ---------------------------------------------------------------------

INJECTED = "<script>alert(1)</script> a|b *x* [l](http://e)"


def _model(text):
    from dbio.report.model import table

    return {"title": f"dbio report: {text}", "findings": [{"level": "warning", "message": f"run {text}"}],
            "headline_text": f"{text} vs base", "sections": [
                {"title": f"Section {text}", "pairs": [[f"Label {text}", text]]},
                {"title": "t", "tables": [table("t", f"Table {text}", ["", text], ["text", "text"],
                                                [[text, text]], [f"note {text}"])],
                 "lines": [f"line {text}"]}]}


def test_markdown_escapes_html_and_table_pipes_everywhere_a_label_goes():
    from dbio.report import markdown

    out = markdown.render(_model(INJECTED))
    assert "<script>" not in out and "</script>" not in out and "&lt;script&gt;" in out
    for line in out.splitlines():
        if line.startswith("|"):  # every table row keeps its column count
            cells = line.replace("\\|", "").count("|")
            assert cells == 3, line


def test_report_and_compare_markdown_of_a_labelled_run_inject_nothing(tmp_path, capsys):
    from pathlib import Path

    from dbio import result

    doc = json.loads((Path(__file__).parent.parent / "fixtures" / "result_complete.json").read_text())
    doc["label"] = INJECTED
    doc["config"]["run"]["label"] = INJECTED
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        result.write(tmp_path / name, doc)
    cli.main(["report", "--format", "md", str(tmp_path / "a")])
    cli.main(["compare", "--format", "md", "--names", f"{INJECTED},b", str(tmp_path / "a"), str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert "<script>" not in out and "&lt;script&gt;" in out
