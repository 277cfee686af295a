import signal

# A shell starts a background job (`cmd &`) with SIGINT ignored, and every program it starts inherits
# that: the tests that stop dbio with SIGINT need it at its default in the processes they start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items):
    """Every test under tests/integration needs a real server: marked so that `-m "not integration"` runs the
    unit tests alone (a `pytestmark` in a conftest.py marks nothing)."""
    import pytest

    for item in items:
        if "integration" in item.path.relative_to(config.rootpath).parts[:2]:
            item.add_marker(pytest.mark.integration)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/* from the current renderers (then review the diff)")
