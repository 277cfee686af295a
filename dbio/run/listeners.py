"""The run's listeners: each concern around the window (the sessions' waits sampled, the read probe, the disk
guard, the external script, the metrics endpoint, ...) is one Listener, told of every phase the run enters
(phase.py), of every sample it writes and of what it tells the user, in the order of the one list the run is
given (RunContext.listeners, assembled by jobs/run_listeners.py: what needs a higher layer, the script and
the endpoint, is made there).

A listener reads the run through the RunView it is given (its clock, the window's readings, its nodes) and acts
on it only through the view: a background task bound to the run (stopped, bounded, before the window's end
reading), an event in the result, a line to the user, the run stopped for a reason. What it found goes into the
outcome as its record (under its key), and into each sample as its fields.

A listener that raises is recorded (an event, a line to the user), told nothing more, and the run goes on
without it, as a collector that fails does not lose a benchmark's run; a vital one (the disk guard, whose
failure would let the servers fill a disk) fails the run and stops it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Coroutine, Iterable, Mapping, Protocol

from dbio.run.phase import Phase

if TYPE_CHECKING:
    import asyncio

    from dbio.run.clock import TimeSource
    from dbio.run.liveness import Liveness
    from dbio.run.nodes import Monitoring, NodeRun
    from dbio.run.outcome import StartFacts, WindowReadings
    from dbio.run.plan import RunPlan
    from dbio.run.sessions import Clock


class RunView(Protocol):
    """What a listener may read of the run, and do to it. Read-only: its records change as the run goes."""

    @property
    def run_id(self) -> int: ...

    @property
    def plan(self) -> RunPlan: ...

    @property
    def time(self) -> TimeSource: ...

    @property
    def nodes(self) -> list[NodeRun]: ...

    @property
    def clock(self) -> Clock:
        """The start, the window's opening and the deadline (server clock), set when the run enters WARMUP."""
        ...

    @property
    def start(self) -> StartFacts:
        """How the sessions were released: the first node's clock against this host's (offset) as it enters
        WARMUP."""
        ...

    @property
    def window(self) -> WindowReadings:
        """The window's first reading as it enters WINDOW; its end, and when it closed, before CLEAN_UP (closed
        None: it never closed)."""
        ...

    @property
    def lost(self) -> Mapping[str, Any]:
        """The nodes lost so far (node_loss.py), by name."""
        ...

    @property
    def liveness(self) -> Liveness: ...

    @property
    def monitoring(self) -> list[Monitoring]:
        """Each monitored node's monitoring, opened in CONNECT (empty before START)."""
        ...

    @property
    def background_stop(self) -> asyncio.Event:
        """Set when the run stops its background, before the window's end reading: a spawned task ends then."""
        ...

    def spawn(self, owner: Listener, work: Coroutine[Any, Any, None]) -> None:
        """Run work beside the sessions until the background stops (waited for, bounded, then cancelled); if it
        raises, it is owner's failure."""
        ...

    def event(self, kind: str, message: str) -> None:
        """An event in the result, at this instant."""
        ...

    def tell(self, message: str) -> None:
        """A line to the user, now."""
        ...

    def disrupting(self, planned: tuple[str, ...], active: tuple[tuple[int, str], ...]) -> None:
        """The --event actions planned (their kinds) and those in progress now (number, action as given): the live
        line's and the metrics' (jobs/disruptions.py tells it as the window opens and as each begins and ends)."""
        ...

    async def stop_run(self, kind: str, message: str, *, at_once: bool = False) -> None:
        """The run fails for this reason (unless something ended it before) and stops, with an event of this kind
        and a line to the user; at_once: no slice may finish, those running are cancelled now."""
        ...


class Listener:
    """One concern of the run, told of its phases and samples. Every method is optional; each must return at once
    (the sessions' event loop runs it): a longer work is spawned (RunView.spawn)."""

    key = ""  # the name of its record in the outcome and result.json ("": it has none)
    title = "a listener"  # its name in a sentence: "the read probe"
    vital = False  # its failure fails the run (else the run goes on without it)

    def phase(self, phase: Phase, run: RunView) -> None:
        """The run entered phase (in order; a run that ends early goes on to CLEAN_UP, and DONE once its outcome
        is made)."""

    def fields(self) -> Mapping[str, Any]:
        """What it adds to the sample being made, before it is written (the waits counted since the last)."""
        return {}

    def sample(self, record: Mapping[str, Any]) -> None:
        """A record the run wrote to samples.jsonl, from the reading before the start to the late slices' record
        (a sample too late to be one is there too, marked "missing")."""

    def told(self, message: str) -> None:
        """The run told the user this (a node lost, a session failed, a signal, ...)."""

    def disrupting(self, planned: tuple[str, ...], active: tuple[tuple[int, str], ...]) -> None:
        """The --event actions planned, and those in progress now (RunView.disrupting)."""

    def record(self) -> Any:
        """What it adds to the outcome, under its key, when the run is done (JSON data, for result.json)."""
        return None


Failure = Callable[[Listener, Exception], None]


class Listeners:
    """The run's listeners, each told in the list's order; one that raises is told nothing more (failed says what
    to do of it: run_state.py records it, and fails the run if the listener is vital)."""

    def __init__(self, listeners: Iterable[Listener], failed: Failure):
        self.all = list(listeners)
        keys = [listener.key for listener in self.all if listener.key]
        if len(set(keys)) != len(keys):
            raise ValueError(f"two listeners keep their records under one key: {sorted(keys)}")
        self.active = list(self.all)
        self.failed = failed

    def phase(self, phase: Phase, run: RunView) -> None:
        for listener in list(self.active):
            self._call(listener, listener.phase, phase, run)

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for listener in list(self.active):
            out.update(self._call(listener, listener.fields) or {})
        return out

    def sample(self, record: Mapping[str, Any]) -> None:
        for listener in list(self.active):
            self._call(listener, listener.sample, record)

    def told(self, message: str) -> None:
        for listener in list(self.active):
            self._call(listener, listener.told, message)

    def disrupting(self, planned: tuple[str, ...], active: tuple[tuple[int, str], ...]) -> None:
        for listener in list(self.active):
            self._call(listener, listener.disrupting, planned, active)

    def records(self) -> dict[str, Any]:
        """Each listener's record by its key (one that failed gives what it had, if it can)."""
        out = {}
        for listener in self.all:
            if listener.key:
                out[listener.key] = self._call(listener, listener.record)
        return out

    def guarded(self, owner: Listener, work: Coroutine[Any, Any, None]) -> Coroutine[Any, Any, None]:
        """work, whose exception is owner's failure (a cancellation is not one)."""
        async def run() -> None:
            try:
                await work
            except Exception as exc:
                self._fail(owner, exc)
        return run()

    def _call(self, listener: Listener, method: Callable[..., Any], *args: Any) -> Any:
        try:
            return method(*args)
        except Exception as exc:
            self._fail(listener, exc)
            return None

    def _fail(self, listener: Listener, exc: Exception) -> None:
        if listener in self.active:
            self.active.remove(listener)
            self.failed(listener, exc)
