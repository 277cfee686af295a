"""The run's listeners (dbio/run/listeners.py), on the fake engine in virtual time: a concern registered as one
more line of the list (jobs/run_listeners.py) is told every phase in order and every sample as written, may
run a task bound to the run, adds its record to the result; one that fails is recorded and the run goes on,
unless it is vital."""

from __future__ import annotations

import asyncio
import json

import pytest

from dbio import result as results
from dbio.jobs import run_listeners
from dbio.run.listeners import Listener, RunView
from dbio.run.phase import Phase
from tests.fake_engine import FakeEngine
from tests.fake_runs import run_loaded
from tests.virtual_time import VirtualTime


class Recorder(Listener):
    """Every phase, with what the run's view held then, and every sample."""

    key = "recorder"
    title = "the recorder"

    def __init__(self) -> None:
        self.phases: list[Phase] = []
        self.seen: dict[Phase, dict] = {}
        self.samples: list[dict] = []
        self.ticks = 0

    def phase(self, phase: Phase, run: RunView) -> None:
        self.phases.append(phase)
        self.seen[phase] = {"start": run.clock.start, "window_open": run.clock.window_open,
                            "deadline": run.clock.deadline, "begin": run.window.begin is not None,
                            "closed": run.window.closed, "offset": run.start.offset}
        if phase is Phase.WARMUP:
            run.spawn(self, self._tick(run))

    async def _tick(self, run: RunView) -> None:
        while not run.background_stop.is_set():
            self.ticks += 1
            await asyncio.sleep(0.5)

    def sample(self, record) -> None:
        self.samples.append(dict(record))

    def record(self):
        return {"phases": [p.value for p in self.phases], "samples": len(self.samples)}


def _with(monkeypatch, *extra: Listener) -> None:
    """extra, each one more line at the end of the run's list (jobs/run_listeners.py)."""
    listed = run_listeners.listeners
    monkeypatch.setattr(run_listeners, "listeners", lambda around: [*listed(around), *extra])


def test_a_listener_sees_every_phase_in_order_and_every_sample_as_written(tmp_path, monkeypatch):
    recorder = Recorder()
    _with(monkeypatch, recorder)
    done = run_loaded(tmp_path, FakeEngine(time=VirtualTime()))
    assert done.status == "complete", done.document["status_reason"]
    assert recorder.phases == list(Phase)
    written = [json.loads(line) for line in (done.directory / results.SAMPLES_FILE).read_text().splitlines()]
    assert recorder.samples == written and written[0]["k"] == 0 and written[-1]["final"]
    # the clock is set as the run enters its warm-up; the window's first reading as it opens; its end before the
    # clean-up; the server's clock against this host's (the fake server's is this host's)
    assert recorder.seen[Phase.START]["start"] is None
    warmup = recorder.seen[Phase.WARMUP]
    assert warmup["window_open"] - warmup["start"] == pytest.approx(1.0)  # 1 s of warm-up
    assert warmup["deadline"] - warmup["window_open"] == pytest.approx(3.0)  # 3 s of window
    assert recorder.seen[Phase.WINDOW]["begin"] and not recorder.seen[Phase.WARMUP]["begin"]
    assert recorder.seen[Phase.DRAIN]["closed"] is None
    assert recorder.seen[Phase.CLEAN_UP]["closed"] == pytest.approx(warmup["deadline"], abs=0.6)
    assert recorder.seen[Phase.WARMUP]["offset"] == pytest.approx(0.0, abs=0.01)
    assert 6 <= recorder.ticks <= 10  # its task ran beside the sessions, half a second apart, until the end reading
    assert done.document["recorder"] == {"phases": [p.value for p in Phase], "samples": len(written)}


class Failing(Recorder):
    """Raises at its third sample."""

    key = "failing"
    title = "the failing listener"

    def sample(self, record) -> None:
        super().sample(record)
        if len(self.samples) == 3:
            raise RuntimeError("the listener broke")


def test_a_listener_that_fails_is_recorded_told_nothing_more_and_the_run_goes_on(tmp_path, monkeypatch):
    failing, recorder = Failing(), Recorder()
    _with(monkeypatch, failing, recorder)
    done = run_loaded(tmp_path, FakeEngine(time=VirtualTime()))
    assert done.status == "complete", done.document["status_reason"]
    # told nothing after it failed (the window opened a second after the start, before its third sample)
    assert len(failing.samples) == 3 and failing.phases[-1] is Phase.WINDOW
    assert recorder.phases == list(Phase)  # the others are told on
    (event,) = [e for e in done.document["events"] if e["kind"] == "listener_failed"]
    assert event["message"] == ("the failing listener failed (RuntimeError: the listener broke): the run goes on "
                                "without it")
    assert done.document["figures"]["load_profile"]["statements_per_s"] > 0


class VitalTask(Listener):
    """A vital listener whose task fails a second after the start."""

    title = "the vital listener"
    vital = True

    def phase(self, phase: Phase, run: RunView) -> None:
        if phase is Phase.WARMUP:
            run.spawn(self, self._fail())

    async def _fail(self) -> None:
        await asyncio.sleep(1.5)
        raise OSError("no statvfs")


def test_a_vital_listener_that_fails_fails_the_run_and_stops_it(tmp_path, monkeypatch):
    _with(monkeypatch, VitalTask())
    done = run_loaded(tmp_path, FakeEngine(time=VirtualTime()), run_time=10)
    assert done.status == "failed"
    assert done.document["status_reason"] == "the vital listener failed (OSError: no statvfs): the run stops"
    assert done.document["timeline"]["window_seconds"] < 2  # stopped half a second into its 10 s window


def test_two_listeners_cannot_keep_their_records_under_one_key():
    from dbio.run.listeners import Listeners

    with pytest.raises(ValueError, match="under one key"):
        Listeners([Recorder(), Recorder()], lambda listener, exc: None)


def test_a_disk_guard_whose_check_fails_stops_the_run_it_no_longer_guards(tmp_path, monkeypatch):
    """The disk guard is vital: a check that raises (not an OSError, which it reads as no room known) stops an
    update run at once, failed and saying why. Its task used to die unseen and the run went on unguarded."""
    from dbio.jobs import run as run_job
    from dbio.run import disk_guard

    checks = []

    def tightest(paths):
        checks.append(paths)
        if len(checks) > 3:  # the check before the start, then the guard's first two
            raise RuntimeError("statvfs broke")
        return 900 << 20, str(tmp_path)

    monkeypatch.setattr(run_job, "written_paths", lambda storages: (str(tmp_path),))
    monkeypatch.setattr(disk_guard, "tightest", tightest)
    done = run_loaded(tmp_path, FakeEngine(time=VirtualTime()), update_pct=25, run_time=5, warmup=0)
    assert done.status == "failed"
    assert done.document["status_reason"] == "the disk guard failed (RuntimeError: statvfs broke): the run stops"
    assert done.document["timeline"]["window_seconds"] < 2  # stopped within a second of its failure, not after 5 s
