"""Escape sequences and bidirectional overrides (issue 26, item 4): refused in what the user gives,
shown as visible characters in every report and on the terminal, never sent raw."""

from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from dbio import cli, controls
from dbio import report as reports
from dbio import result
from dbio.ui import UI, VisibleConsole
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
# recolour, retitle the window (OSC ... BEL), CSI as one C1 byte, a right-to-left override, DEL, a line rewritten
HOSTILE = "\x1b[31mred\x1b]0;owned\x07\x9b2J\u202eevil\u2066\x7f\rover\nINVALID: forged"
# C0 but the line break, DEL, C1, the bidirectional controls: nothing of it may reach a reader
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_result() -> dict:
    """A result whose every string a server, a host or a user gave holds HOSTILE."""
    doc = copy.deepcopy(json.loads((FIXTURES / "result_format2.json").read_text()))
    doc["label"] = f"lab{HOSTILE}"
    doc["status_reason"] = f"the server said {HOSTILE}"
    doc["nodes"][0]["name"] = f"node{HOSTILE}"
    server = doc["environment"]["server"]
    server["version"] = f"18.6{HOSTILE}"
    server["description"] = f"PostgreSQL {HOSTILE}"
    for name, setting in server["settings"].items():
        setting["setting"] = f"{setting['setting']}{HOSTILE}"
    for key, value in list(doc["environment"]["host"].items()):
        if isinstance(value, str):
            doc["environment"]["host"][key] = f"{value}{HOSTILE}"
    doc["events"].append({"t": doc["events"][-1]["t"], "since_start": 1.0, "kind": "node_lost",
                          "message": f"node1 stopped answering: {HOSTILE}"})
    return doc


@pytest.mark.parametrize("form", ["text", "md", "html"])
def test_no_control_character_from_a_result_reaches_a_report(tmp_path, form):
    path = tmp_path / "result.json"
    result.write(tmp_path, hostile_result())
    rendered = reports.render(of(result.read(path)), form)
    assert "owned" in rendered and "evil" in rendered  # the values are there...
    assert not RAW.findall(rendered), sorted(set(RAW.findall(rendered)))  # ...shown, never sent
    assert "␛[31mred" in rendered
    assert "\nINVALID: forged" not in rendered  # a line break inside a value does not start a line of its own
    if form == "html":
        assert "<script" not in rendered


def test_the_report_command_prints_no_control_character(tmp_path, capsys):
    result.write(tmp_path, hostile_result())
    cli.main(["report", str(tmp_path)])  # returns: exit 0
    out, err = capsys.readouterr()
    assert "owned" in out and not RAW.findall(out) and not RAW.findall(err)


def test_an_error_naming_what_the_user_gave_prints_no_control_character(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", str(tmp_path / f"x{HOSTILE}")])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "␛[31m" in err and not RAW.findall(err)


@pytest.mark.parametrize("argv", [
    ["run", "--label", "a\x1b[2Jb"], ["run", "--label", "a\u202eb"], ["run", "--label", "tab\there"],
    ["run", "--label", "a\x9bb"], ["run", "--dsn", "host=x\nport=1"], ["run", "--results-dir", "r\x1b[1m"],
    ["merge", "a", "b", "--out", "m", "--label", "x\x1b]0;t\x07"], ["compare", "a", "b", "--names", "a\x1b,b"],
])
def test_free_text_with_a_control_character_is_refused_before_anything_is_made(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    argv = argv + (["--data-dir", str(tmp_path / "instance")] if argv[0] == "run" else [])
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    _, err = capsys.readouterr()
    assert exc.value.code == 2, err
    assert len(err.strip().splitlines()) == 1 and "contains a control character (U+" in err
    assert not RAW.findall(err) and list(tmp_path.iterdir()) == []


def test_the_terminal_shows_control_characters_but_keeps_lines_and_styles():
    out = io.StringIO()
    console = VisibleConsole(file=out, force_terminal=True, color_system="standard", highlight=False)
    ui = UI(console)
    ui.say(f"label {HOSTILE}\nnext line")
    console.print(Text("dbio: ", style="bold red") + Text(HOSTILE))
    printed = out.getvalue()
    styles = re.sub(r"\x1b\[[0-9;]*m", "", printed)  # rich's own colours are the only escapes
    assert not RAW.findall(styles.replace("\n", "")), sorted(set(RAW.findall(styles)))
    assert "label ␛[31mred" in styles and "\nnext line" in styles and "\x1b[1;31mdbio: " in printed


def test_visible_keeps_widths_and_problem_names_the_character():
    assert controls.visible("a\x1bb\x7fc\x9bd\u202ee") == "a␛b␡c\ufffdd\ufffde"
    assert len(controls.visible(HOSTILE)) == len(HOSTILE)
    assert controls.visible("a\nb\tc", controls.LINE_BREAKS) == "a\nb\tc"
    assert controls.problem("plain label-1 ü ✓") is None
    assert controls.problem("a\u2067b") == "contains a control character (U+2067)"
    assert controls.problem("a\udcffb") == "contains bytes that are not UTF-8 text"


def test_a_plain_console_would_send_them():
    """The check above can fail: rich alone passes ESC through."""
    out = io.StringIO()
    Console(file=out, force_terminal=True, highlight=False).print(HOSTILE, markup=False)
    assert "\x1b]0;owned" in out.getvalue() and RAW.findall(out.getvalue())
