"""dbio ops results as recorded: read (and refused when malformed), reported in every format,
compared; the targets a backup is refused before anything is created; option checks."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dbio import ops_result
from dbio import report as reports
from dbio.jobs import ops as ops_command
from dbio.jobs import backup_destination
from dbio.jobs import ops as ops_job
from dbio.errors import UsageError
from dbio.report import ops_model
from dbio.stats import catalogue
from dbio.stats import ops as figures
from dbio.ops_records import of as typed_op

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _copy(tmp_path: Path, name: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    shutil.copy(FIXTURES / f"ops_{name}.json", directory / "result.json")
    return directory


def test_a_recorded_recovery_reads_and_reports(tmp_path):
    directory = _copy(tmp_path, "recovery")
    assert ops_result.is_ops(directory) and ops_result.is_ops(directory / "result.json")
    doc = ops_result.read(directory)
    detail = doc["detail"]
    # the figures are those the recorded detail and readings give
    again = figures.derive("recovery", detail, doc["readings"]["begin"], doc["readings"]["end"],
                           {"vda": ["data", "wal"]}, 2)
    assert again["recovery"] == doc["figures"]["recovery"]
    per_gb = catalogue.ops_figure("recovery_seconds_per_gb").value(doc["figures"])
    assert per_gb == pytest.approx(detail["recovery_seconds"] / (detail["wal_replayed_bytes"] / 1e9))
    for form in reports.FORMATS:
        text = reports.render_model(ops_model.build(typed_op(doc)), form)
        assert "crash recovery" in text or "recovery" in text
    text = reports.render_model(ops_model.build(typed_op(doc)), "text")
    assert f"{per_gb:,.0f} s per GB of WAL replayed" in text and "redo done at" in text


def test_an_interrupted_operation_says_so_first(tmp_path):
    doc = ops_result.read(_copy(tmp_path, "recovery_interrupted"))
    model = ops_model.build(typed_op(doc))
    assert doc["status"] == "interrupted" and model["findings"][0]["level"] == "warning"
    text = reports.render_model(model, "text")
    assert text.splitlines()[2].startswith("WARNING: the operation interrupted")
    assert "no redo" not in text  # an interrupted recovery never crashed the server


def test_a_backup_against_the_sequential_rate(tmp_path):
    doc = ops_result.read(_copy(tmp_path, "backup"))
    f = doc["figures"]
    assert f["backup"]["share_of_sequential"] == pytest.approx(f["mb_per_s"] / f["backup"]["sequential_read_mb_per_s"])
    assert "target" in f["devices"]["vda"]["roles"]
    assert "x the device's sequential read rate" in ops_model.headline(typed_op(doc))


def test_operations_compare_with_deltas(tmp_path):
    a, b = ops_result.read(_copy(tmp_path, "recovery")), ops_result.read(_copy(tmp_path, "recovery_interrupted"))
    model = ops_model.build_compare([("a", typed_op(a)), ("b", typed_op(b))])
    text = reports.render_model(model, "text")
    assert "Recovery seconds per GB of WAL" in text and "dbio compare (operations): a vs b" in text


def test_malformed_and_newer_documents_are_refused(tmp_path):
    directory = _copy(tmp_path, "recovery")
    doc = json.loads((directory / "result.json").read_text())
    doc["format_version"] = 99
    (directory / "result.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="newer dbio"):
        ops_result.read(directory)
    doc["format_version"] = 1
    doc["figures"]["seconds"] = "soon"
    (directory / "result.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="seconds"):
        ops_result.read(directory)


def test_targets_refused_before_anything(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    (full / "a").write_text("a")
    with pytest.raises(UsageError, match="is not empty"):
        backup_destination.check_shape(full)
    with pytest.raises(UsageError, match="is a file"):
        backup_destination.check_shape(full / "a")
    new = backup_destination.check_shape(tmp_path / "new" / "backup")
    assert not new.exists() and not (tmp_path / "new").exists()
    with pytest.raises(UsageError, match="free but the backup needs"):
        backup_destination.check_room(new, 1 << 60, [])  # more than any filesystem here has
    with pytest.raises(UsageError, match="inside"):
        backup_destination.check_room(full / "b", 1, [str(full)])
    assert not (tmp_path / "new").exists() and sorted(p.name for p in full.iterdir()) == ["a"]


@pytest.mark.parametrize("args, message", [
    (("index", None, "8MB", None, False), "takes no --wal"),
    (("recovery", None, None, "8MB", False), "takes no --dirty"),
    (("backup", None, None, None, False), "needs --target"),
    (("recovery", None, "100kB", None, False), "less than 1 MiB"),
    (("checkpoint", None, None, "lots", False), "--dirty lots"),
])
def test_requests_checked_without_a_server(args, message):
    with pytest.raises(UsageError, match=message):
        ops_command.request(*args)


def test_defaults_of_a_request():
    assert ops_command.request("recovery", None, None, None, False).wal_bytes == 256 << 20
    assert ops_command.request("checkpoint", None, None, "8MB", False).dirty_bytes == 8 << 20  # dbio reads MB as MiB


def test_a_checkpoint_beside_another_process_reading_is_warned_about(tmp_path):
    doc = ops_result.read(_copy(tmp_path, "recovery"))
    doc = {**doc, "operation": "checkpoint"}
    device = doc["figures"]["devices"]["vda"]
    device.update(read_bytes=30e6, write_bytes=2e6)
    assert any(f["code"] == "other_io" and "another process" in f["message"] for f in ops_model.findings(typed_op(doc)))
    device.update(read_bytes=0.1e6, write_bytes=2e6)
    assert not any(f["code"] == "other_io" for f in ops_model.findings(typed_op(doc)))


def test_a_sweeps_operation_is_checked_without_a_server():
    assert ops_command.sweep_op("recovery=64MB") == {"operation": "recovery", "wal_bytes": 64 << 20,
                                                     "dirty_bytes": None}
    assert ops_command.sweep_op("checkpoint")["dirty_bytes"] == ops_command.DEFAULT_DIRTY
    for bad, message in (("backup", "a sweep runs"), ("load", "a sweep runs"), ("index=1MB", "takes no size"),
                         ("recovery=lots", "--wal lots")):
        with pytest.raises(UsageError, match=message):
            ops_command.sweep_op(bad)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to play another user taking over a path")
def test_an_operations_result_directory_another_user_took_over_meanwhile_is_refused(tmp_path, monkeypatch):
    """--results-dir under a shared directory (/tmp) is checked before the operation's preparation, which
    takes seconds (the server started, probed): another user who makes a directory on the way meanwhile,
    to plant links in it, gets root's result written nowhere."""
    from dbio import results_dir
    from dbio.config import Sources, load_config
    from dbio.ui import UI

    tmp_path.chmod(0o755)
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    config = load_config(Sources(cli={"results_dir": str(shared / "opsres")}, cwd=tmp_path, discover=False))
    req = ops_command.request("checkpoint", None, None, None, False)
    directory = ops_job.run_directory(config)
    results_dir.check(config.run.results_dir)  # what ops() checks first: nothing is on the way yet
    taken = shared / "opsres"

    class Connection:
        closed = False

        def close(self) -> None:
            self.closed = True

    conn = Connection()

    def prepare(config, ui, req):  # the seconds of preparation, during which the other user makes the directory
        taken.mkdir(mode=0o777)
        os.chown(taken, 4242, 4242)
        return ops_job.Prepared(None, None, conn, None, None, {})

    monkeypatch.setattr(ops_job, "_prepare", prepare)
    monkeypatch.setattr(ops_job, "_run", lambda *args: pytest.fail("the operation ran with its result exposed"))
    with pytest.raises(UsageError, match=f"refusing to write the operation's result in {directory}: {taken} is "
                                         "owned by uid 4242"):
        ops_job._hold_and_run(config, UI(quiet=True), req, directory)
    assert conn.closed


@pytest.mark.parametrize("name", ["backup", "recovery", "recovery_interrupted"])
def test_an_operation_renders_with_any_field_nulled(name):
    """As a run's result (test_reports_survive_nulls.py): each field an ops result may hold nulled, as far as
    the reader accepts it, renders and compares. Recorded before the typed records: a null in a backup's
    command crashed its report."""
    from dbio import file_formats, jsondoc
    from tests.unit.test_reports_survive_nulls import _nulled, cases

    doc = json.loads((FIXTURES / f"ops_{name}.json").read_text())
    rendered, failures = 0, []
    for _, group in cases(doc):
        for paths in [group] + ([[p] for p in group] if len(group) > 1 else []):
            nulled = _nulled(doc, paths)
            try:
                jsondoc.check(nulled, file_formats.ops(ops_result.FORMAT_VERSION))
            except jsondoc.Malformed:
                continue
            rendered += 1
            try:
                reports.render_model(ops_model.build(typed_op(nulled)), "text")
                reports.render_model(ops_model.build_compare([("a", typed_op(nulled)), ("b", typed_op(doc))]), "md")
            except Exception as exc:  # noqa: BLE001 - any crash is the finding
                failures.append(f"{'; '.join('.'.join(p) for p in paths)}: {type(exc).__name__}: {exc}")
    assert rendered > 100
    assert not failures, "\n".join(failures[:20])
