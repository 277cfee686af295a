import signal

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


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/* from the current renderers (then review the diff)")
