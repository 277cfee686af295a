"""--event AT=throttle:IOPS:DURATION's means: the server's reads on its data device limited to IOPS a second by the
kernel's own limit, so that the disruption has a known depth: cgroup v1's blkio controller
(blkio.throttle.read_iops_device, "MAJ:MIN N"; lifted with 0) where the machine has it, else cgroup v2's io
controller (io.max, "MAJ:MIN riops=N"; lifted with riops=max; dbio's cgroup made under the unified hierarchy's
root, whose cgroup.subtree_control is given the io controller when it lacks it). The processes that read for the
sessions (their server processes, the server's I/O workers) are moved into a cgroup of dbio's own for the event's
length and back into the cgroups they came from after it, also when the run is interrupted; the cgroup is removed
then. Root only; refused in one line before the run where the machine has neither controller (check)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dbio.errors import UsageError

BLKIO = Path("/sys/fs/cgroup/blkio")  # cgroup v1's blkio hierarchy
LIMIT_FILE = "blkio.throttle.read_iops_device"
UNIFIED = Path("/sys/fs/cgroup")  # cgroup v2's unified hierarchy, where the machine mounts it
IO_MAX = "io.max"
SYS_BLOCK = Path("/sys/class/block")


@dataclass(frozen=True)
class Controller:
    """The kernel's read limit as one cgroup version has it: where, in which file, written how."""

    version: int  # 1: blkio; 2: io
    root: Path
    limit_file: str

    def limit(self, disk: str, iops: int) -> str:
        return f"{disk} {iops}\n" if self.version == 1 else f"{disk} riops={iops}\n"

    def lift(self, disk: str) -> str:
        return f"{disk} 0\n" if self.version == 1 else f"{disk} riops=max\n"


def controller(v1: Path = BLKIO, v2: Path = UNIFIED) -> Controller | None:
    """cgroup v1's blkio where it is mounted, else cgroup v2's io where the unified hierarchy has it, else None."""
    if (v1 / LIMIT_FILE).is_file():
        return Controller(1, v1, LIMIT_FILE)
    try:
        if "io" in (v2 / "cgroup.controllers").read_text().split():
            return Controller(2, v2, IO_MAX)
    except OSError:
        pass
    return None


def check(devices: list[str], *, root: Path = BLKIO, unified: Path = UNIFIED,
          sys_block: Path = SYS_BLOCK) -> list[str]:
    """The whole disks ("MAJ:MIN") under the data directory's devices, or one line saying why a throttle cannot
    be: not root, neither cgroup controller, no block device known for the data directory."""
    if os.geteuid() != 0:
        raise UsageError("--event throttle: limiting the server's reads takes root (the cgroup io controller)",
                         "run dbio as root, or give another event")
    if controller(root, unified) is None:
        raise UsageError(f"--event throttle: this machine has neither cgroup v1's blkio controller ({root / LIMIT_FILE}"
                         f" is not there) nor cgroup v2's io controller (not in {unified / 'cgroup.controllers'})",
                         "mount the blkio or io controller, or give another event")
    disks = sorted({d for name in devices if (d := whole_disk(name, sys_block))})
    if not disks:
        raise UsageError("--event throttle: the data directory is on no block device dbio can find on this host",
                         "run the server's data directory on a local disk, or give another event")
    return disks


def whole_disk(name: str, sys_block: Path = SYS_BLOCK) -> str | None:
    """The MAJ:MIN of the disk a block device is (or is a partition of): the throttle's rule is per disk."""
    place = sys_block / name
    try:
        if (place / "partition").exists():
            place = place.resolve().parent
        return (place / "dev").read_text().strip() or None
    except OSError:
        return None


def blkio_cgroup(pid: int, version: int = 1, proc: Path = Path("/proc")) -> str | None:
    """The process's cgroup in the blkio hierarchy (v1) or the unified one (v2: its "0::" line), "/" or
    "/system.slice/x.service"; None when it is gone."""
    try:
        text = (proc / str(pid) / "cgroup").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        number, controllers, path = line.split(":", 2)
        if (version == 1 and "blkio" in controllers.split(",")) or (version == 2 and number == "0" and not controllers):
            return path
    return None


@dataclass
class Throttle:
    """One event's limit: made (apply), then taken away (remove), whatever happened between."""

    name: str  # the cgroup's, under root: one of dbio's own (dbio-event-RUN-N)
    disks: list[str]
    iops: int
    root: Path = BLKIO
    moved: dict[int, str] = field(default_factory=dict)  # pid -> the cgroup it came from
    version: int = 1  # the controller's cgroup version (Controller)
    proc: Path = Path("/proc")

    @property
    def place(self) -> Path:
        return self.root / self.name

    @property
    def controller(self) -> Controller:
        return Controller(self.version, self.root, LIMIT_FILE if self.version == 1 else IO_MAX)

    def apply(self, pids: list[int]) -> int:
        """The cgroup made with its limit on every disk, and each process moved into it: how many were."""
        if self.version == 2:  # the unified root gives its children the io controller (once: it stays)
            control = self.root / "cgroup.subtree_control"
            if "io" not in control.read_text().split():
                control.write_text("+io\n")
        self.place.mkdir(mode=0o755)
        for disk in self.disks:
            (self.place / self.controller.limit_file).write_text(self.controller.limit(disk, self.iops))
        for pid in pids:
            came_from = blkio_cgroup(pid, self.version, self.proc)
            if came_from is None:
                continue  # gone since the run began: nothing of it to limit
            try:
                (self.place / "cgroup.procs").write_text(f"{pid}\n")
            except ProcessLookupError:
                continue
            self.moved[pid] = came_from
        return len(self.moved)

    def undo_plan(self) -> dict[str, object]:
        """What a guard needs to lift the limit should dbio be killed first (disruption_actions.GUARD)."""
        return {"root": str(self.root), "place": str(self.place), "limit_file": self.controller.limit_file,
                "lift": [self.controller.lift(disk) for disk in self.disks]}

    def moved_from(self) -> dict[str, str]:
        """pid -> the cgroup it came from: what a guard needs to move the processes back."""
        return {str(pid): came_from for pid, came_from in self.moved.items()}

    def remove(self) -> list[str]:
        """Each process back where it came from, the cgroup removed: what could not be done (empty: all)."""
        problems = []
        for disk in self.disks if self.place.is_dir() else ():  # first the limit lifted (v1: 0; v2: max)
            try:
                (self.place / self.controller.limit_file).write_text(self.controller.lift(disk))
            except OSError as exc:
                problems.append(f"the limit on {disk} could not be lifted: {exc.strerror or exc}")
        for pid, came_from in list(self.moved.items()):
            try:
                (self.root / came_from.lstrip("/") / "cgroup.procs").write_text(f"{pid}\n")
            except ProcessLookupError:
                pass  # it ended meanwhile
            except OSError as exc:
                problems.append(f"process {pid} could not go back to {came_from}: {exc.strerror or exc}")
                continue
            del self.moved[pid]
        if self.place.is_dir():
            try:
                self.place.rmdir()
            except OSError as exc:
                problems.append(f"{self.place} could not be removed: {exc.strerror or exc}")
        return problems
