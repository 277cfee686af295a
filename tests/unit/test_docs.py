"""The README and docs/ stay true: the README a page a newcomer reads in minutes that links every docs page,
every relative link resolving, every `dbio ...` line of a fenced sh block accepted by dbio's command line
(parsed with --help appended: nothing runs), the generated pages made from the code as it is now, and the
README's report excerpt a real report's first lines."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbio.cli import cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _make_docs():
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "tools" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _prose(text: str) -> str:
    """The text without its code: fenced blocks and inline code hold no links."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def _links(page: Path) -> list[str]:
    return LINK.findall(_prose(page.read_text()))


def _anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_anchor(m) for m in re.findall(r"^#+ (.*)$", FENCE.sub("", page.read_text()), re.M)}


def test_readme_is_a_page_read_in_minutes():
    lines = README.read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move a section to a page under docs/"


def test_readme_links_every_docs_page_and_each_exists():
    linked = {(README.parent / link.split("#")[0]).resolve() for link in _links(README) if link.startswith("docs/")}
    pages = {p.resolve() for p in DOCS.glob("*.md")}
    assert pages, "docs/ has no page"
    assert not pages - linked, f"docs pages the README does not link: {sorted(p.name for p in pages - linked)}"
    assert not linked - pages, f"README links docs pages that do not exist: {sorted(str(p) for p in linked - pages)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):  # https:, mailto:
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link}: {target.name} has no heading with that anchor")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def command_lines(text: str) -> list[list[str]]:
    """Every `dbio ...` command of the fenced sh blocks, as the arguments after `dbio`: continuation lines
    joined, comments dropped, commands split at ; & && ||, [optional] brackets taken off and each
    alternative of a|b|c made a command of its own."""
    commands = []
    for _, language, body in FENCE.findall(text):
        if language != "sh":
            continue
        for line in body.replace("\\\n", " ").splitlines():
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            tokens = list(lexer)
            parts: list[list[str]] = [[]]
            for token in tokens:
                if token in (";", "&", "&&", "||"):
                    parts.append([])
                else:
                    parts[-1].append(token)
            for part in parts:
                start = next((i for i, t in enumerate(part) if t == "dbio" or t.endswith("/dbio")), None)
                if start is not None:
                    commands += _alternatives([t.strip("[]") for t in part[start + 1:]])
    return commands


def _alternatives(words: list[str]) -> list[list[str]]:
    """`instance init | start` (a|b as the lexer splits it): one command per alternative."""
    if "|" not in words:
        return [words]
    at = words.index("|")
    choices, after = [words[at - 1], words[at + 1]], at + 2
    while after < len(words) and words[after] == "|":
        choices.append(words[after + 1])
        after += 2
    return [c for choice in choices for c in _alternatives([*words[:at - 1], choice, *words[after:]])]


def _accepted(args: list[str]) -> tuple[bool, str]:
    """Whether dbio's command line takes these arguments: with --help appended click parses every option
    (an unknown one, or one another command owns, fails) and then prints the help instead of running."""
    result = CliRunner().invoke(cli, [*args, "--help"], prog_name="dbio")
    return result.exit_code == 0 and "Usage:" in result.output, result.output.strip().splitlines()[-1:]


def test_the_command_line_check_can_fail():
    assert command_lines("```sh\ndbio instance stop|start  # x\n```\n") == [["instance", "stop"], ["instance", "start"]]
    assert command_lines("```sh\nfor h in a b; do ssh $h dbio run -t 1 & done; wait\n```\n") == [["run", "-t", "1"]]
    assert _accepted(["run", "--sessions", "4"])[0]
    assert not _accepted(["run", "--no-such-option"])[0]
    assert not _accepted(["instance", "status", "--sessions", "4"])[0]  # an option this command does not take
    assert not _accepted(["no-such-command"])[0]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_dbio_command_line_parses(page):
    refused = []
    for args in command_lines(page.read_text()):
        ok, why = _accepted(args)
        if not ok:
            refused.append(f"dbio {' '.join(args)}: {why}")
    assert not refused, f"{page.relative_to(ROOT)}: dbio refuses " + "; ".join(refused)


def test_readme_has_command_lines_checked():
    assert len(command_lines(README.read_text())) >= 15


def test_generated_pages_are_up_to_date():
    make_docs = _make_docs()
    stale = make_docs.stale(ROOT)
    assert not stale, f"out of date: {', '.join(stale)}: run {make_docs.COMMAND}"


def test_a_generated_page_out_of_date_is_found(tmp_path):
    make_docs = _make_docs()
    for name in make_docs.PAGES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text())
    assert make_docs.stale(tmp_path) == []
    page = tmp_path / "docs" / "configuration.md"
    page.write_text(page.read_text().replace("`DBIO_SCALE`", "`DBIO_SIZE`"))
    assert make_docs.stale(tmp_path) == ["docs/configuration.md"]


def test_generated_pages_hold_every_option_and_figure():
    from dbio.option_table import OPTIONS
    from dbio.stats import catalogue

    options = (DOCS / "configuration.md").read_text()
    figures = (DOCS / "result-reference.md").read_text()
    assert all(f"| `{o.key}` |" in options for o in OPTIONS)
    assert all(f"| `{f.name}` |" in figures for f in (*catalogue.FIGURES, *catalogue.OPS_FIGURES))


def test_readme_keeps_the_test_command_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    blocks = [body.strip() for _, language, body in FENCE.findall(README.read_text()) if language == "sh"]
    assert ci in blocks


def test_readme_report_excerpt_is_a_real_report():
    blocks = [body for _, language, body in FENCE.findall(README.read_text()) if language == ""]
    excerpt = [b for b in blocks if "VALID storage result" in b]
    assert len(excerpt) == 1
    lines = [line for line in excerpt[0].splitlines() if line != "..."]
    golden = (ROOT / "tests" / "golden" / "complete.txt").read_text().splitlines()
    assert lines == golden[:len(lines)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_toml_block_is_a_dbio_toml_dbio_reads(page):
    from dbio.config_files import read_toml

    for _, language, body in FENCE.findall(page.read_text()):
        if language == "toml":
            errors: list = []
            read_toml(Path("dbio.toml"), body, errors)
            assert not errors, f"{page.relative_to(ROOT)}: {errors}"
