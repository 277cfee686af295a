"""A run on the fake engine in a process of its own, for the tests that send it SIGINT or SIGTERM at a known
moment (tests/unit/test_signal_after_window.py): `python -m tests.signalled_run RESULTS_DIR [KEY=VALUE ...]`,
each KEY=VALUE an option of the run (external_script=PATH, run_time=1, repeat=2 for run --repeat).

It ends as `dbio run` does: it prints the result's directory and exits 130 after SIGINT, 143 after SIGTERM
(also one that came after a whole window, as the command line's closing step says), 0 otherwise."""

from __future__ import annotations

import sys
from pathlib import Path

from dbio.commands import repeat as repeats
from dbio.jobs import run as run_job
from dbio.run.plan import make_plan
from dbio.target import Target
from dbio.ui import UI
from tests.fake_engine import FakeEngine
from tests.fake_runs import load, run_config


def main(results: Path, options: dict[str, str]) -> int:
    repeat = int(options.pop("repeat", "0"))
    config = run_config(results.parent, results_dir=str(results), warmup=0, **options)
    engine = FakeEngine()  # the machine's time: the test's signal comes on the same clock
    load(engine, config)
    plan = make_plan(config.workload, 1)

    def run_one(directory: Path) -> run_job.RunResult:
        return run_job.run_on([Target(engine, "fake:", None)], config, UI(quiet=True), directory, plan,
                              unique=directory.parent != results)

    if repeat:
        done = repeats.run(config, UI(quiet=True), repeat, run_one=run_one)
        status, signal = done.status, done.signal
        print(f"result: {done.directory}", flush=True)
    else:
        result = run_one(run_job.run_directory(config))
        status, signal = result.status, result.signal
        print(f"result: {result.directory}", flush=True)
    if status == "interrupted" or signal:  # as cli_run_commands._finish_run
        return 143 if signal == "SIGTERM" else 130
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), dict(arg.split("=", 1) for arg in sys.argv[2:])))
