"""The embedded instance destroyed: what it would remove and leave, checked before anything is
touched; then only what dbio created is removed, and what it changed of a directory it found is
restored."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbio.engines.postgres.instance import binaries, placement
from dbio.engines.postgres.instance.paths import Layout, running_as_root
from dbio.engines.postgres.instance.record import Meta
from dbio.filesystem import tree_bytes
from dbio.managed import location as managed_location


@dataclass(frozen=True)
class DestroyPlan:
    data_dir: Path
    meta: Meta
    size_bytes: int
    others: list[Path]  # entries dbio did not create, left in place

    def leftovers(self) -> list[str]:
        """What destroy leaves on the machine on purpose, with how to remove it."""
        notes = []
        bin_dir = Path(self.meta.bin_dir)
        if bin_dir.is_relative_to(binaries.SYSTEM_BASE):
            copy = bin_dir.parents[2]
            notes.append(f"the server binaries copied to {copy} (other instances may use them): rm -r {copy}")
        if running_as_root():
            notes.append(f"the system user '{self.meta.server_user}' (other instances may use it): "
                         f"userdel {self.meta.server_user}")
        return notes


def destroy_plan(layout: Layout, meta: Meta, others: list[Path],
                 standbys: list[tuple[Path, Layout, bool]]) -> DestroyPlan:
    """What destroy would remove and leave, checked before anything is touched. others: the directory's entries
    dbio did not make; standbys: (root, layout, whether placed outside the directory) of each."""
    inside = [root for root, _, placed in standbys if not placed]  # made inside: removed with it
    size = tree_bytes(layout.pgdata) + sum(tree_bytes(member.pgdata) for _, member, _ in standbys)
    return DestroyPlan(layout.root, meta, size, [p for p in others if p not in inside])


def remove(layout: Layout, plan: DestroyPlan, notify: Callable[[str], None]) -> None:
    """What dbio created removed (the server stopped, its standbys removed before), and only that; what it
    changed of a directory it found restored."""
    for path in (layout.pgdata, layout.socket_dir, layout.log_dir):
        shutil.rmtree(path, ignore_errors=not path.exists())
    for place in plan.meta.places:  # the WAL's and the tablespaces' directories dbio made
        placement.remove(place)
    managed_location.give_back(layout.root, layout.meta_file, plan.meta.preexisting_mode, plan.others,
                               "embedded instance", notify)
