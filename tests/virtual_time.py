"""Virtual time for the run pipeline's tests on the fake engine (a dbio.run.clock.TimeSource).

Seconds that pass only when nothing else can happen: the loop jumps to the next timer when it would otherwise
sit idle, with no ready callback, no outside event and no thread of its executor at work (a thread's fsync or
/proc reading takes no virtual time), so the events of a run keep their order and a 6 s run takes
milliseconds, however loaded the host. A thread that waits (`sleep_blocking`, as a polling step does) stops
counting as work until its wake-up, which the loop keeps as one of its timers. CPU time stays real: figures of
real CPU seconds over virtual ones mean nothing. It reaches into asyncio's selector event loop (its selector
and default executor), which is why it lives with the tests and not in dbio.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import selectors
import threading
import time
from typing import Any, Callable, Coroutine, TypeVar, cast

T = TypeVar("T")

# Executor threads of a virtual loop: more than the calls a test's run makes at once, so that a call never
# queues behind threads parked in sleep_blocking (they wait for virtual time, which a queued call would stop).
VIRTUAL_THREADS = 64


class VirtualTime:
    """Seconds that pass only when the loop running on them would otherwise sit idle (see the module's doc).
    They start at the machine's clocks' values when made, and stand still outside a run; one run at a time."""

    def __init__(self) -> None:
        self.now = time.monotonic()  # monotonic seconds, moved forward by _VirtualLoop only
        self.epoch = time.time() - self.now  # wall = epoch + now
        self.loop: _VirtualLoop | None = None

    def wall(self) -> float:
        return self.epoch + self.now

    def monotonic(self) -> float:
        return self.now

    def sleep_blocking(self, seconds: float) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():  # no run going: nothing else waits, the time is the sleeper's alone
            self.now += max(0.0, seconds)
            return
        woken = threading.Event()
        # now is exact here: the loop does not move the time while this thread still counts as working
        loop.call_soon_threadsafe(loop.park, self.now + max(0.0, seconds), woken)
        woken.wait()

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        if self.loop is not None and not self.loop.is_closed():
            raise RuntimeError("a VirtualTime runs one event loop at a time")
        loop = self.loop = _VirtualLoop(self)
        with asyncio.Runner(loop_factory=lambda: loop) as runner:
            return runner.run(main)


class _VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop on VirtualTime: its time is the virtual one, and its selector moves that time on to the
    next timer when nothing is ready and no executor thread is at work."""

    def __init__(self, clock: VirtualTime) -> None:
        super().__init__()
        self.clock = clock
        self.working = 0  # executor calls under way and not parked in sleep_blocking: the time waits for them
        inner: selectors.BaseSelector = self._selector  # type: ignore[has-type]
        self._selector = cast(selectors.BaseSelector, _IdleSkipping(inner, self))
        self.set_default_executor(concurrent.futures.ThreadPoolExecutor(VIRTUAL_THREADS, "virtual-time"))

    def time(self) -> float:
        return self.clock.now

    def run_in_executor(self, executor: Any, func: Callable[..., T], *args: Any) -> asyncio.Future[T]:  # type: ignore[override]
        self._check_closed()  # type: ignore[attr-defined]
        pool = executor if executor is not None else self._default_executor  # type: ignore[attr-defined]
        submitted = pool.submit(func, *args)
        future = asyncio.wrap_future(submitted, loop=self)
        self.working += 1
        # after wrap_future's own callback: the result is on the loop before the call stops counting as work
        submitted.add_done_callback(lambda _: self.call_soon_threadsafe(self._finished))
        return future

    def _finished(self) -> None:
        self.working -= 1

    def park(self, wake_at: float, woken: threading.Event) -> None:
        """A thread waits in sleep_blocking until wake_at: not work meanwhile."""
        self.working -= 1
        self.call_at(wake_at, self._unpark, woken)

    def _unpark(self, woken: threading.Event) -> None:
        self.working += 1
        woken.set()


class _IdleSkipping:
    """The loop's selector, which jumps the virtual time to the next timer instead of waiting for it when no
    outside event is there and no thread works; else it waits as a selector does (a thread's answer wakes it)."""

    def __init__(self, selector: selectors.BaseSelector, loop: _VirtualLoop) -> None:
        self.selector, self.loop = selector, loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if self.loop.working or (timeout is not None and timeout <= 0):
            return self.selector.select(timeout)
        events = self.selector.select(0)
        if events or timeout is None:  # nothing scheduled at all: only the outside can wake the loop
            return events or self.selector.select(timeout)
        self.loop.clock.now += timeout  # timeout is what is left until the next timer: it is due now
        return []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.selector, name)
