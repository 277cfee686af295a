"""What the user sees while dbio works: messages, the load's progress bar, the run's live line."""

from __future__ import annotations

import threading
import time
from typing import Any, Sequence

from rich.console import Console
from rich.live import Live
from rich.progress import (BarColumn, DownloadColumn, Progress, ProgressColumn, TaskProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.text import Text

from dbio import controls
from dbio.stats import live, published
from dbio.units import format_bytes


class VisibleConsole(Console):
    """A console that prints every control character in what it is given (a label, a node name, a server's
    message) as a visible one, lines and tabs aside: rich's own styles are the only escape sequences it sends."""

    def print(self, *objects: Any, **options: Any) -> None:
        super().print(*(_visible(item) for item in objects), **options)


def _visible(item: Any) -> Any:
    if isinstance(item, str):
        return controls.visible(item, controls.LINE_BREAKS)
    if isinstance(item, Text):  # one character for one: its styled spans stay where they were
        shown = item.copy()
        shown.plain = controls.visible(item.plain, controls.LINE_BREAKS)
        return shown
    return item


class UI:
    def __init__(self, console: Console | None = None, *, quiet: bool = False):
        self.console = console or VisibleConsole(stderr=False, highlight=False)
        self.err = VisibleConsole(stderr=True, highlight=False)
        self.quiet = quiet
        self.metrics: Any = None  # metrics.Endpoint while --metrics-port serves (the run's listener of it feeds it)

    def say(self, message: str) -> None:
        if not self.quiet:
            self.console.print(message, markup=False, highlight=False, soft_wrap=True)

    def note(self, message: str) -> None:
        """Something dbio did on the user's behalf (created a user, restarted the server)."""
        if not self.quiet:
            self.console.print(Text("dbio: ", style="bold cyan") + Text(message), soft_wrap=True)

    def warn(self, message: str) -> None:
        self.err.print(Text("dbio: warning: ", style="bold yellow") + Text(message), soft_wrap=True)

    def load_progress(self) -> "LoadProgress | PlainLoadProgress":
        """A bar on a terminal; plain lines otherwise (a log or a pipe gets no wrapped bar)."""
        if not self.quiet and not self.console.is_terminal:
            return PlainLoadProgress(self.console)
        return LoadProgress(self.console, enabled=not self.quiet)

    def run_observer(self, *, sessions: int, window: float, warmup: float,
                     bounds_us: Sequence[float] | None = None, facts: live.RunFacts | None = None) -> "RunObserver":
        return RunObserver(self, sessions=sessions, window=window, warmup=warmup, bounds_us=bounds_us, facts=facts)


class BinarySpeedColumn(ProgressColumn):
    """MiB/s, the unit family of the sizes beside it (rich's own speed column is decimal)."""

    def render(self, task: Any) -> Text:
        speed = task.finished_speed or task.speed
        return Text("?" if speed is None else f"{format_bytes(speed)}/s", style="progress.data.speed")


class LoadProgress:
    """dbio.load.Progress on a rich progress bar: MB loaded and MB/s."""

    def __init__(self, console: Console, *, enabled: bool):
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                 DownloadColumn(binary_units=True), BinarySpeedColumn(), TimeElapsedColumn(),
                                 TimeRemainingColumn(), console=console, disable=not enabled, transient=False)
        self.task: Any = None

    def start(self, total_bytes: int, done_bytes: int, description: str) -> None:
        self.progress.start()
        self.task = self.progress.add_task(description, total=total_bytes, completed=done_bytes)

    def advance(self, nbytes: int) -> None:
        self.progress.update(self.task, advance=nbytes)

    def stop(self) -> None:
        self.progress.stop()


class PlainLoadProgress:
    """dbio.load.Progress as plain lines: one at the start, one per tenth of the load (at most one
    every PLAIN_EVERY seconds), one at the end."""

    def __init__(self, console: Console, clock: Any = time.monotonic):
        self.console, self.clock = console, clock
        self.description, self.total, self.done, self.began_at = "", 0, 0, 0
        self.started = self.said = 0.0
        self.lock = threading.Lock()

    def _line(self, text: str) -> None:
        self.console.print(Text(text), soft_wrap=True, highlight=False)

    def start(self, total_bytes: int, done_bytes: int, description: str) -> None:
        self.description, self.total, self.done, self.began_at = description, total_bytes, done_bytes, done_bytes
        self.started = self.said = self.clock()
        self._line(f"{description}: {format_bytes(total_bytes - done_bytes)} to load"
                   + (f" ({format_bytes(done_bytes)} already loaded)" if done_bytes else ""))

    def advance(self, nbytes: int) -> None:
        with self.lock:  # the load's streams advance it from their threads
            tenth = max(1, self.total // 10)
            before, self.done = self.done, self.done + nbytes
            now = self.clock()
            if self.done // tenth <= before // tenth or now - self.said < PLAIN_EVERY or self.done >= self.total:
                return
            self.said = now
            self._line(f"{self.description}: {format_bytes(self.done)} of {format_bytes(self.total)} "
                       f"({100 * self.done / self.total:.0f}%), {self._speed(now)}")

    def _speed(self, now: float) -> str:
        elapsed = now - self.started
        return f"{format_bytes((self.done - self.began_at) / elapsed)}/s" if elapsed > 0 else "? MiB/s"

    def stop(self) -> None:
        now = self.clock()
        self._line(f"{self.description}: {format_bytes(self.done - self.began_at)} loaded in "
                   f"{now - self.started:,.1f} s, {self._speed(now)}")


PLAIN_EVERY = 5.0  # seconds: the least time between two plain progress lines


class RunObserver:
    """runner.Observer: one live status line (reads/s, average read, SELECT p99, writes/s, the busiest device,
    CPU busy and steal, time left), refreshed each interval on a terminal and printed every PLAIN_EVERY seconds
    otherwise; a finding the window's counters show is said the moment it appears (stats/live.py)."""

    def __init__(self, ui: UI, *, sessions: int, window: float, warmup: float,
                 bounds_us: Sequence[float] | None = None, facts: live.RunFacts | None = None):
        self.ui = ui
        self.facts = facts or live.RunFacts()  # what the findings know of the run besides its samples
        self.sessions = sessions
        self.window = window
        self.warmup = warmup
        self.bounds = list(bounds_us or [])
        self.phase_text = "starting"
        self.last: dict[str, Any] | None = None
        self.spans = published.Spans()  # what each sample's engine counters gained, over what span of work
        self.figures = ""
        self.started = time.monotonic()
        self.measuring_since: float | None = None
        self.findings: live.Findings | None = None
        self.enabled = not ui.quiet and ui.console.is_terminal
        self.plain = not ui.quiet and not ui.console.is_terminal  # a log or a pipe: plain lines instead
        self.said = 0.0
        self.disruptions = ""  # the --event actions in progress: "event 1 stall:3s"
        # drawn when something changed (each sample, each phase), not on a timer: the live view's cost
        self.live = Live(Text(""), console=ui.console, auto_refresh=False, transient=True)
        if self.enabled:
            self.live.start()

    def phase(self, message: str) -> None:
        self.phase_text = message
        if message.startswith("measuring") and self.measuring_since is None:
            self.measuring_since = time.monotonic()
            self.findings = live.Findings(self.facts)
        if self.plain:
            self._plain(message)
        self._refresh()

    def _plain(self, text: str) -> None:
        self.said = time.monotonic()
        self.ui.console.print(Text(f"{self.said - self.started:,.0f} s: {text}"), soft_wrap=True, highlight=False)

    def event(self, message: str) -> None:
        self.ui.err.print(Text("dbio: ", style="bold yellow") + Text(message), soft_wrap=True)

    def disrupting(self, active: tuple[tuple[int, str], ...]) -> None:
        """The --event actions in progress, on the live line while they last."""
        self.disruptions = ", ".join(f"event {number} {action}" for number, action in active)
        if self.plain and self.disruptions:
            self._plain(f"{self._status()}")
        self._refresh()

    def second(self, sample: dict[str, Any]) -> None:
        """A per-second sample whose engine counters are already normalized."""
        previous, self.last = self.last, sample
        span = self.spans.next(sample)
        if self.findings is not None:
            for finding in self.findings.check(sample):
                self.ui.err.print(Text("dbio: now: ", style="bold yellow") + Text(finding), soft_wrap=True)
        if previous is None:
            return
        # the figures are made only for a line that shows them: on a pipe, one every PLAIN_EVERY seconds
        plain_due = self.plain and time.monotonic() - self.said >= PLAIN_EVERY
        if not self.enabled and not plain_due:
            return
        figures = live.line({**live.interval(previous, sample, self.bounds, span),
                             "rate_asked_per_s": self.facts.rate_asked_per_s})
        if not figures:
            return
        self.figures = figures
        if plain_due:
            self._plain(f"{self._status()} · {self.figures}")
        self._refresh()

    def _status(self) -> str:
        status = self.phase_text
        if self.measuring_since is not None and self.window > 0:
            left = max(0.0, self.window - (time.monotonic() - self.measuring_since))
            status += f" · {left:,.0f} s left"
        return status + (f" · {self.disruptions}" if self.disruptions else "")

    def _refresh(self) -> None:
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        line = f"{self._status()} · {elapsed:,.0f} s · {self.sessions} sessions" + (
            f" · {self.figures}" if self.figures else "")
        self.live.update(Text(controls.visible(line), style="cyan"), refresh=True)

    def close(self) -> None:
        if self.enabled:
            self.live.stop()

