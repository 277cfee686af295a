import os
import signal
from pathlib import Path

# A shell starts a background job (`cmd &`) with SIGINT ignored, and every program it starts inherits
# that: the tests that stop dbio with SIGINT need it at its default in the processes they start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _in_wall_time(item) -> bool:
    """A unit test module that runs the run pipeline on the fake engine: its runs' windows take wall time."""
    return any(getattr(value, "__name__", None) == "tests.fake_engine"
               or getattr(value, "__module__", None) == "tests.fake_engine" for value in vars(item.module).values())


def pytest_collection_modifyitems(config, items):
    """Every test under tests/integration needs a real server: marked so that `-m "not integration"` runs the
    unit tests alone (a `pytestmark` in a conftest.py marks nothing).

    The modules are handed to the workers (--dist loadfile, --no-loadscope-reorder) longest first: the
    integration modules (real servers, real run windows: tens of seconds each), then the unit modules that
    run windows on the fake engine, then the other unit modules (milliseconds a test), which fill the workers'
    last minutes evenly. xdist's own order, by number of tests, handed out the integration modules of one to
    five slow tests last, so the suite ended with one worker running them alone."""
    import pytest

    def rank(item) -> int:
        if "integration" in item.path.relative_to(config.rootpath).parts[:2]:
            item.add_marker(pytest.mark.integration)
            return 0
        return 1 if getattr(item, "module", None) is not None and _in_wall_time(item) else 2

    items[:] = sorted(items, key=rank)  # stable: each module's tests stay together and in order


def pytest_configure(config):
    """dbio's and the tests' modules compiled once, by the main process before its workers start: where the
    environment says not to write bytecode (PYTHONDONTWRITEBYTECODE, as on these machines), every `python -m
    dbio` the tests start, and every worker, would otherwise compile all of dbio's sources again (0.25 s of
    CPU a start on a loaded host). compileall writes them whatever that says; git ignores __pycache__."""
    if hasattr(config, "workerinput"):
        return
    import compileall

    root = Path(__file__).resolve().parent.parent
    for package in ("dbio", "tests"):
        compileall.compile_dir(root / package, quiet=1, workers=1)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/* from the current renderers (then review the diff)")


_IMAGE_TESTS = Path(__file__).parent / "integration" / "test_kubernetes_pods.py"
_ahead: dict = {}


def _runs_the_image_test(config) -> bool:
    """Whether this test run's paths take in the module that runs dbio's image (and its marks do not leave
    the integration tests out)."""
    if "not integration" in (config.option.markexpr or ""):
        return False
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if path == _IMAGE_TESTS or path in _IMAGE_TESTS.parents:
            return True
    return False


def pytest_sessionstart(session):
    """dbio's image built beside the tests from their start (tests/pod_image.py build_ahead), once per test run:
    by the main process, not by each xdist worker."""
    config = session.config
    if hasattr(config, "workerinput") or config.option.collectonly or not _runs_the_image_test(config):
        return
    import tempfile

    from tests import pod_image

    fd, log = tempfile.mkstemp(prefix="dbio-image-ahead-", suffix=".log")
    os.close(fd)
    _ahead["log"] = Path(log)
    _ahead["proc"] = pod_image.build_ahead(_ahead["log"])


def pytest_sessionfinish(session):
    proc, log = _ahead.pop("proc", None), _ahead.pop("log", None)
    if proc is not None:
        from tests import pod_image

        if pod_image.stop_ahead(proc) and proc.returncode != 0:  # kept, and named in the summary
            _ahead["failed"] = (log, proc.returncode)
            return
    if log is not None:
        log.unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter):
    if "failed" in _ahead:
        log, code = _ahead["failed"]
        terminalreporter.write_line(f"dbio's image built ahead ended with {code} (its test builds it): see {log}")
