"""Progress is plain lines when the output is not a terminal (a log file, a pipe, CI): no wrapped bar."""

import io

from rich.console import Console

from dbio.ui import UI, PlainLoadProgress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _ui(terminal: bool) -> UI:
    return UI(Console(file=io.StringIO(), force_terminal=terminal, width=60))


def test_the_load_is_plain_lines_when_not_on_a_terminal():
    assert isinstance(_ui(False).load_progress(), PlainLoadProgress)
    assert not isinstance(_ui(True).load_progress(), PlainLoadProgress)
    clock = Clock()
    progress = PlainLoadProgress(Console(file=io.StringIO(), width=40), clock)
    progress.start(1 << 30, 0, "loading 2 of 2 tables, 2 streams")
    for _ in range(64):  # 16 MiB each, one second apart: a line per tenth, none closer than 5 s
        clock.now += 1.0
        progress.advance(16 << 20)
    progress.stop()
    lines = progress.console.file.getvalue().splitlines()
    assert lines[0] == "loading 2 of 2 tables, 2 streams: 1 GiB to load"
    assert lines[1] == "loading 2 of 2 tables, 2 streams: 112 MiB of 1 GiB (11%), 16 MiB/s"
    assert lines[-1] == "loading 2 of 2 tables, 2 streams: 1 GiB loaded in 64.0 s, 16 MiB/s"
    assert 8 <= len(lines) <= 12 and all("\r" not in ln and "━" not in ln for ln in lines)  # long lines unwrapped


def test_the_run_is_plain_lines_when_not_on_a_terminal():
    ui = _ui(False)
    observer = ui.run_observer(sessions=4, window=30, warmup=5)
    observer.phase("connecting 4 sessions")
    observer.phase("measuring")
    observer.close()
    out = ui.console.file.getvalue().splitlines()
    assert [ln.split(": ", 1)[1] for ln in out] == ["connecting 4 sessions", "measuring"]
    ui = _ui(True)
    on_terminal = ui.run_observer(sessions=4, window=30, warmup=5)
    on_terminal.phase("measuring")
    on_terminal.close()
    assert on_terminal.enabled and not on_terminal.plain  # a terminal has the live line instead
