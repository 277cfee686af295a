"""A full results filesystem (a real tmpfs, filled): every file dbio writes there is whole or absent,
and a run keeps one result, which says what happened: a report that did not fit is named missing."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from dbio import report
from dbio import result as results
from dbio import trust
from dbio.jobs import run as run_job
from dbio.jobs import run_files
from dbio.run import abandoned
from dbio.ui import UI
from tests import small_fs
from tests.fake_engine import FakeEngine
from tests.fake_runs import run_loaded as _run
from dbio.result_records import of

PAGE = 4096


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("fake"), FakeEngine(), run_time=1, warmup=0)


@pytest.fixture()
def tiny(tmp_path):
    with small_fs.mounted("1m", tmp_path) as mount:
        yield mount


@pytest.fixture()
def rescues(tmp_path, monkeypatch):
    """Where rescued results go in these tests (never the user's own state directory)."""
    base = tmp_path / "rescued"
    monkeypatch.setattr(abandoned, "rescue_bases", lambda: [base])
    return base


def _sizes(document: dict) -> dict[str, int]:
    return {"result": len(json.dumps(document, indent=1)) + 1,
            "text": len(report.render(of(document), "text").encode()),
            "html": len(report.render(of(document), "html").encode())}


def _pages(size: int) -> int:
    return -(-size // PAGE) * PAGE


def _run_dir_copy(finished, fs: Path, *, dead_client: bool = False) -> Path:
    """The run's directory as the run left it before its result: its manifest and samples, on fs."""
    directory = fs / finished.directory.name
    directory.mkdir()
    for name in (results.RUN_MANIFEST, results.SAMPLES_FILE):
        shutil.copy(finished.directory / name, directory / name)
    if dead_client:  # the dbio process that ran it is gone: a lost run, to be rebuilt
        man = json.loads((directory / results.RUN_MANIFEST).read_text())
        man["client"] = f"{man['client'].rpartition(':')[0]}:999999999"
        (directory / results.RUN_MANIFEST).write_text(json.dumps(man))
    return directory


def _whole_files(directory: Path) -> list[str]:
    """The names in directory; no temporary file may be left behind."""
    names = sorted(p.name for p in directory.iterdir())
    assert not [n for n in names if n.endswith(".tmp") or n.startswith(".")], names
    return names


def test_a_report_that_does_not_fit_is_named_missing_in_the_one_result(finished, tiny, rescues):
    directory = _run_dir_copy(finished, tiny)
    document = copy.deepcopy(finished.document)
    sizes = _sizes(document)
    room = _pages(sizes["result"]) + _pages(sizes["text"]) + 6 * PAGE  # the result and the text, not the HTML
    small_fs.fill(tiny / "filler", room)
    written = run_files.write_result(directory, document, None, UI(quiet=True))
    assert _whole_files(directory) == ["report.txt", "result.json", "run.json", "samples.jsonl"]
    stored = json.loads((directory / "result.json").read_text())
    assert stored["status"] == "complete" and stored["files"]["html"] is None
    unwritten = [e for e in stored["events"] if e["kind"] == "report_unwritten"]
    assert [e["file"] for e in unwritten] == ["report.html"]
    assert f"{directory / 'report.html'} could not be written (No space left on device)" in unwritten[0]["message"]
    assert (directory / "report.txt").read_text() == report.render(of(stored), "text")  # whole, and of this result
    assert results.read(directory)["status"] == "complete"
    assert not rescues.exists()  # one result: no second copy anywhere
    assert written.directory == directory
    assert [(u.path, u.reason) for u in written.unwritten] == [(directory / "report.html", "No space left on device")]


@pytest.mark.parametrize("fits", ["nothing", "the text report alone"])
def test_a_result_that_does_not_fit_is_rescued_whole_and_leaves_nothing_behind(finished, tiny, rescues, fits):
    directory = _run_dir_copy(finished, tiny)
    document = copy.deepcopy(finished.document)
    sizes = _sizes(document)
    room = 0 if fits == "nothing" else _pages(sizes["text"]) + 2 * PAGE
    assert room < _pages(sizes["result"])
    small_fs.fill(tiny / "filler", room)
    written = run_files.write_result(directory, document, None, UI(quiet=True))
    # no result and no report of a result that is not there: the run's only result is the rescued one
    assert [n for n in _whole_files(directory) if n not in ("run.json", "samples.jsonl")] == [abandoned.RESCUED_TO]
    (rescued,) = rescues.iterdir()
    doc = results.read(rescued)
    assert doc["status"] == "failed" and "No space left on device" in doc["status_reason"]
    assert (rescued / "report.txt").read_text() == report.render(of(json.loads((rescued / "result.json").read_text())),
                                                                  "text")
    assert "FAILED" in (rescued / "report.html").read_text() or "failed" in (rescued / "report.html").read_text()
    # the next run does not rebuild it as lost: not even once the rescued copy was moved away
    assert abandoned.abandoned(tiny) == []
    assert written.directory == rescued and not written.unwritten
    shutil.rmtree(rescued)
    assert abandoned.abandoned(tiny) == []


def test_a_lost_run_rebuilt_on_a_full_filesystem_names_the_report_it_could_not_write(finished, tiny, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setattr(run_job, "engine_named", lambda name: FakeEngine())
    roomy = _run_dir_copy(finished, tmp_path, dead_client=True)
    sizes = _sizes(abandoned.recover(roomy, run_job.engine_named))
    directory = _run_dir_copy(finished, tiny, dead_client=True)
    room = _pages(sizes["result"]) + _pages(sizes["text"]) + 6 * PAGE
    small_fs.fill(tiny / "filler", room)
    assert run_job.recover_abandoned(tiny, UI(quiet=True)) == [directory]
    assert _whole_files(directory) == ["report.txt", "result.json", "run.json", "samples.jsonl"]
    doc = results.read(directory)
    assert doc["status"] == "lost" and doc["files"]["html"] is None
    assert [e["file"] for e in doc["events"] if e["kind"] == "report_unwritten"] == ["report.html"]


def test_an_output_file_that_does_not_fit_keeps_what_it_held(tiny):
    out = tiny / "report.html"
    out.write_text("the earlier report\n")
    small_fs.fill(tiny / "filler", PAGE)
    with pytest.raises(OSError, match="No space left on device"):
        trust.write_output(out, "x" * (8 * PAGE))
    assert out.read_text() == "the earlier report\n"
    assert _whole_files(tiny) == ["filler", "report.html"]



def test_a_sweep_s_reports_that_do_not_fit_are_named_and_never_left_cut_short(tiny):
    from dbio.sweep import steps as sweep_steps
    from dbio.errors import DbioError
    from dbio.sweep import document

    directory = tiny / "sweep"
    shutil.copytree(Path(__file__).parent.parent / "fixtures" / "sweep_capacity", directory)
    doc = document.read(directory)
    small_fs.fill(tiny / "filler", 2 * PAGE)  # the text report fits, the HTML does not
    unwritten = sweep_steps._write_reports(directory, doc)
    assert [(u.path.name, u.reason) for u in unwritten] == [("sweep.html", "No space left on device")]
    assert "sweep.html" not in _whole_files(directory) and (directory / "sweep.txt").read_text().endswith("\n")
    with pytest.raises(DbioError, match="the sweep is complete, but 1 of its reports could not be written "
                                        r"\(No space left on device\)"):
        sweep_steps._finish(directory, doc, UI(quiet=True), None, unwritten)


def test_the_room_goes_to_the_result_first_then_to_the_reports_in_their_order():
    block = 4096
    # each file takes its blocks and one more; the result also keeps a block for the events naming a report
    assert run_files.fitting(20 * block, block, 10 * block, [2 * block, 30 * block]) == [True, False]
    assert run_files.fitting(11 * block, block, 10 * block, [1]) == [False]  # nothing beside the result
    assert run_files.fitting(100 * block, block, 10 * block, [2 * block, 30 * block]) == [True, True]
    assert run_files.fitting(20 * block, block, 10 * block, [30 * block, 2 * block]) == [False, True]
