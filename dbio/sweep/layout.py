"""A sweep step's layout (a sweep over wal_dir or data_dirs): made before the step runs.

A WAL elsewhere needs no load: the engine moves it (the server stopped and started again). Tables
elsewhere are another load: the data set is loaded again over the step's directories (setup's own
progress lines show it), unless the loaded one already lies there."""

from __future__ import annotations

from dbio.jobs import dataset, setup as setup_job
from dbio.config import Config
from dbio.ui import UI


def check(configs: list[Config], ui: UI) -> None:
    """Every step's layout, before the sweep starts anything (a directory the WAL cannot go to...)."""
    for config in configs:
        config.spec.relayout(config, ui.note, check_only=True)


def relayout(config: Config, ui: UI) -> None:
    """What needs no load (the WAL's place), as the engine does it."""
    config.spec.relayout(config, ui.say)


def prepare(config: Config, ui: UI) -> None:
    relayout(config, ui)
    wanted = setup_job.spec_of(config)
    record = dataset.loaded_record(config, ui.note)
    if record is not None and record.status == "ready" and record.spec.places == wanted.places:
        return
    where = ", ".join(wanted.places) or "the data directory"
    ui.say(f"    layout: loading the tables again over {len(wanted.places) or 1} place(s): {where}")
    setup_job.setup(config, ui, reload=True)
