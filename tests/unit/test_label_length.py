"""Issue 41: --label had no bound. A label is shown and stored whole (reports, result.json, metrics, the pods'
labels): at most 200 characters, refused beyond in one line, exit 2, nothing created, wherever one is taken."""

from __future__ import annotations

import pytest

from dbio import cli as dbio_cli
from dbio.option_table import MAX_LABEL

DSN = "host=/nonexistent port=1 dbname=dbio user=dbio"


def _refused(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as done:
        dbio_cli.main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("command", [["run"], ["sweep", "--vary", "sessions=1,2"], ["run", "--repeat", "2"],
                                     ["kubernetes", "--image", "dbio", "--start-at", "2099-01-01T00:00:00Z"]])
def test_a_label_longer_than_200_characters_is_refused_by_every_run(tmp_path, capsys, command):
    results = tmp_path / "results"
    err = _refused(capsys, [*command, "--dsn", DSN, "--label", "x" * (MAX_LABEL + 1), "--results-dir",
                            str(results)])
    assert "--label" in err and f"at most {MAX_LABEL} characters" in err and not results.exists(), err


def test_a_label_longer_than_200_characters_is_refused_by_the_environment_too(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DBIO_LABEL", "y" * 1000)
    results = tmp_path / "results"
    err = _refused(capsys, ["run", "--dsn", DSN, "--results-dir", str(results)])
    assert "DBIO_LABEL" in err and "longer than 200 characters" in err and not results.exists(), err


def test_a_merged_label_longer_than_200_characters_is_refused(tmp_path, capsys):
    out = tmp_path / "merged"
    err = _refused(capsys, ["merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out), "--label",
                            "z" * (MAX_LABEL + 1)])
    assert "--label is 201 characters long" in err and not out.exists(), err


def test_a_label_of_200_characters_is_taken(tmp_path):
    from dbio.config import Sources, load_config

    config = load_config(Sources(env={}, cli={"dsn": [DSN], "label": "x" * MAX_LABEL}, cwd=tmp_path))
    assert config.run.label == "x" * MAX_LABEL
