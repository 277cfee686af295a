"""The read probe (read_probe.py) as a listener of the run: a probe for each node as the run prepares (its
connection opened, given up and closed with the node's monitoring: nodes.py), its lookups from the start on,
counted while the window is open; its record, each node's probe, is the outcome's "read_probe", on which
the result's single-read figures are built.
"""

from __future__ import annotations

from typing import Any

from dbio.engines.base import helper_application_name
from dbio.run.listeners import Listener, RunView
from dbio.run.phase import Phase
from dbio.run.read_probe import ReadProbe

KEY = "read_probe"  # its record in the outcome and result.json (each node's probe: ReadProbe.record)


class ReadProbing(Listener):
    """The read probes of one run: one per node, counting their lookups while the window is open."""

    key = KEY
    title = "the read probe"

    def __init__(self) -> None:
        self.probes: dict[str, ReadProbe] = {}
        self.measuring = False  # the window is open (its close ends the probes' count before the end reading)

    def phase(self, phase: Phase, run: RunView) -> None:
        if phase is Phase.PREPARE:
            scale = run.plan.control.scale
            for r in run.nodes:  # the schemas its sessions read, at their scale; opened with its monitoring
                r.read_probe = self.probes[r.node.name] = ReadProbe(
                    r.engine, run.plan.bounds_us, [s.schema_index for s in r.sessions], scale, seed=run.run_id,
                    application_name=helper_application_name(run.run_id, "probe"), time=run.time)
        elif phase is Phase.WARMUP:
            for name, probe in self.probes.items():
                if name not in run.lost:  # a node lost before the start has no probe to run
                    run.spawn(self, probe.run(lambda: self.measuring, run.background_stop))
        elif phase is Phase.WINDOW:
            self.measuring = True
        elif phase is Phase.CLEAN_UP:
            self.measuring = False

    def record(self) -> dict[str, dict[str, Any]]:
        return {name: probe.record(probe.method) for name, probe in self.probes.items()}
