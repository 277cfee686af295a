"""dbio quickstart: an embedded instance, a data set 8x its buffer cache, a short synchronized run."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dbio.jobs.run import RunResult
    from dbio.config import Config
    from dbio.ui import UI

# Applied between the defaults and everything the user sets.
PRESET = {"scale": "1GiB", "threads_per_schema": 4, "run_time": "30s", "warmup": "5s", "label": "quickstart"}


def quickstart(config: "Config", ui: "UI", *, reload: bool = False) -> "RunResult":
    from dbio.jobs import run as run_job
    from dbio.jobs import setup as setup_job

    from dbio.units import format_bytes

    ui.say(f"dbio quickstart: {config.workload.sessions} session{'s' if config.workload.sessions != 1 else ''}, "
           f"{format_bytes(config.workload.data_bytes)} data set, instance in {config.instance.data_dir}")
    setup_job.setup(config, ui, reload=reload, command="dbio quickstart")
    return run_job.run(config, ui)


def closing_lines(config: "Config") -> list[str]:
    """The embedded server outlives quickstart: say so, and how to stop or remove it."""
    if not config.connection.embedded:
        return []
    where = ""
    if config.origins.get("engine", "default") != "default":  # another engine's instance lives elsewhere
        where += f" --engine {config.connection.engine}"
    if config.origins.get("data_dir", "default") != "default":
        where += f" --data-dir {shlex.quote(str(config.instance.data_dir))}"
    return [f"the embedded server is still running in {config.instance.data_dir}: stop it with "
            f"dbio instance stop{where}, remove it with dbio instance destroy{where}"]
