"""The one list of a run's listeners (dbio/run/listeners.py), in the order they are told: each concern around the
window is a module of its own and one line here. They are made here, in the jobs layer, because two of them need
what the run's layer may not import (the user's script, the metrics endpoint, the caller's signals)."""

from __future__ import annotations

from dataclasses import dataclass

from dbio import metrics, signals
from dbio.config import Config
from dbio.jobs import after_window, disruptions, external_script
from dbio.run import disk_guard, read_probing, wait_sampling
from dbio.run.listeners import Listener
from dbio.run.readings import Normalize


@dataclass(frozen=True)
class Around:
    """What one run's listeners are made of."""

    config: Config
    normalize: Normalize  # each node's raw counters to the neutral ones
    came: signals.Received  # the signals the run's caller notes
    hook: external_script.Hook  # --external-script's calls (their tail is after_window.py's)
    endpoint: metrics.Endpoint | None = None  # --metrics-port's, when it serves
    room_paths: tuple[str, ...] = ()  # where an update run's servers write on this host
    room_floor: int = disk_guard.FLOOR  # the bytes kept free there
    events: disruptions.Disruptions | None = None  # --event's, when any


def listeners(around: Around) -> list[Listener]:
    """The run's listeners, in order."""
    made: list[Listener | None] = [
        wait_sampling.WaitSampling(around.config.run.wait_sample_interval),  # what the sessions wait on, sampled
        disk_guard.DiskGuard(around.room_paths, around.room_floor) if around.room_paths else None,  # stops it in time
        read_probing.ReadProbing(),  # single reads timed by the engine, on a connection of each node's own
        after_window.Shield(around.came),  # from the window's opening, no signal may cost the run its result
        around.hook if around.hook.path is not None else None,  # the user's program, as the window opens and closes
        around.events,  # --event's disruptions, each at its offset into the window
        metrics.MetricsListener(around.endpoint, around.normalize) if around.endpoint is not None else None,
    ]
    return [listener for listener in made if listener is not None]
