"""A sweep's step's label is the sweep's to say (issue 35, item 2): it passes it down to the run, whose
metrics carry it; a run does not look for a sweep's file beside its directory to guess it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dbio import metrics
from dbio.jobs import run as run_job
from dbio.run.plan import make_plan
from dbio.sweep.document import SWEEP_FILE
from dbio.target import Target
from dbio.ui import UI
from tests import fake_runs
from tests.fake_engine import FakeEngine
from tests.virtual_time import VirtualTime

JOBS = Path(__file__).resolve().parents[2] / "dbio" / "jobs"


@pytest.fixture
def served():
    endpoint = metrics.Endpoint("127.0.0.1", 0)  # a real endpoint on a free port, stopped after
    yield endpoint
    endpoint.close()


def _run(tmp_path: Path, endpoint: metrics.Endpoint, directory: Path, **given) -> run_job.RunResult:
    engine = FakeEngine(time=VirtualTime())
    config = fake_runs.run_config(tmp_path)
    fake_runs.load(engine, config)
    ui = UI(quiet=True)
    ui.metrics = endpoint
    return run_job.run_on([Target(engine, "fake:", None)], config, ui, directory, make_plan(config.workload, 1),
                          clock=engine.time, unique=False, **given)


def test_the_step_the_sweep_names_is_the_one_the_metrics_carry(tmp_path, served):
    sweep = tmp_path / "results" / "sweep"
    sweep.mkdir(parents=True)
    done = _run(tmp_path, served, sweep / "02-t4", step_label="02-t4")
    assert done.document["status"] == "complete"
    assert served.state.run is not None and served.state.run.step == "02-t4"


def test_a_run_beside_a_sweep_file_is_no_step_unless_the_sweep_says_so(tmp_path, served):
    beside = tmp_path / "results" / "looks-like-a-sweep"
    beside.mkdir(parents=True)
    (beside / SWEEP_FILE).write_text("{}")  # the file a run once looked for: it decides nothing now
    _run(tmp_path, served, beside / "run")
    assert served.state.run is not None and served.state.run.step == ""


def test_the_run_jobs_import_nothing_of_the_sweep():
    for name in ("run.py", "measure.py"):
        tree = ast.parse((JOBS / name).read_text())
        imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
        assert not [m for m in imported if m and m.startswith("dbio.sweep")], name
