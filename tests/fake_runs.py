"""Runs on the fake engine (tests/fake_engine.py) as the pipeline tests make them: its configuration, and one
run on a loaded fake server. Shared by the unit tests that run the pipeline on it."""

from __future__ import annotations

from pathlib import Path

from dbio.jobs import run as run_job
from dbio.config import Sources, load_config
from dbio.engines.base import SetupSpec
from dbio.run.plan import make_plan
from dbio.target import Target
from dbio.ui import UI
from tests import fake_engine
from tests.fake_engine import FakeEngine

SESSIONS = 3
WORK_UNIT = 8
STATEMENTS_PER_S = SESSIONS * fake_engine.ITERATIONS_PER_SECOND
READS_PER_S = STATEMENTS_PER_S * WORK_UNIT


def run_config(tmp_path: Path, **cli):
    """A run's Config: SESSIONS sessions of one schema, 3 s of window after 1 s of warm-up; cli replaces any."""
    options = {"schemas": 1, "threads_per_schema": SESSIONS, "scale": 2000, "run_time": 3, "warmup": 1,
               "results_dir": str(tmp_path / "results"), "allow_cached": True,
               "work_unit": WORK_UNIT, **cli}
    return load_config(Sources(env={}, cli=options, cwd=tmp_path))


def load(engine: FakeEngine, config) -> None:
    """engine's fake server loaded for config's runs (a load there is only its record)."""
    conn = engine.connect("fake:", application_name="test")
    record = engine.begin_setup(conn, SetupSpec(2000, 1, 0, config.workload.key_order), setup_id="s1",
                                server_version=engine.version)
    engine.finish_setup(conn, record)
    engine.close(conn)


def run_loaded(tmp_path: Path, engine: FakeEngine, **cli) -> run_job.RunResult:
    """A run on engine's fake server, loaded first (a load there is only its record), in its server's time (virtual
    for a FakeEngine(time=VirtualTime()): the run takes no wall time)."""
    config = run_config(tmp_path, **cli)
    load(engine, config)
    directory = run_job.run_directory(config)
    target = Target(engine, "fake:", None)
    return run_job.run_on([target], config, UI(quiet=True), directory, make_plan(config.workload, 1),
                              clock=engine.time)
