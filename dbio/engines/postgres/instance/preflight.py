"""What the embedded instance is checked against before it is made, started or given another layout,
and the room its WAL has: a check that fails leaves nothing created, stopped or restarted."""

from __future__ import annotations

from pathlib import Path

from dbio.collect.host import supports_direct_io
from dbio.engines.postgres.instance import binaries, location, placement, settings
from dbio.engines.postgres.instance.paths import Layout
from dbio.engines.postgres.instance.record import Meta
from dbio.engines.postgres.instance.standbys import check_new as check_new_standbys
from dbio.engines.postgres.engine_options import InstanceConfig
from dbio.errors import UsageError
from dbio.filesystem import free_bytes, tree_bytes



def check_location(layout: Layout, meta: Meta | None) -> None:
    """Before creating anything: the directory must be usable by the server user."""
    location.check_location(layout.root, is_instance=meta is not None)


def check_settings(layout: Layout, meta: Meta | None, cfg: InstanceConfig, *, sessions: int) -> None:
    """Every setting the server would get, judged by the server binary itself, before anything
    is created, stopped or restarted: a bad one never leaves an instance half made or down."""
    if meta is not None:
        bins = binaries.Binaries(Path(meta.bin_dir), meta.wheel_version)
        binaries.require_trusted(bins.bin_dir)
        port, socket_dir = meta.port, str(layout.socket_dir)
    else:
        bins, port, socket_dir = binaries.wheel_binaries(), 5432, str(layout.socket_dir)
    profile = settings.build_profile(cfg, port=port, socket_dir=socket_dir, sessions=sessions, purpose="run")
    refused = bins.refused_setting(settings.as_arguments(profile))
    if refused:
        raise UsageError(f"the server refuses the instance settings: {refused}",
                         "fix that value in [instance.pg_settings] or --pg-setting (or the dbio option that "
                         "sets it)")


def check_new(layout: Layout, exists: bool, cfg: InstanceConfig, sessions: int) -> None:
    """Everything a new instance needs, checked before anything is created."""
    data_dir = layout.root
    if exists:
        raise UsageError(f"a dbio instance already exists in {data_dir}",
                         "use it as it is, or remove it first with dbio instance destroy")
    check_location(layout, None)
    check_settings(layout, None, cfg, sessions=sessions)
    wal_room = settings.WAL_OVERSHOOT * (settings.WAL_SIZES_MB[-1] << 20)
    needed = settings.INITDB_BYTES + settings.DISK_RESERVE + (0 if cfg.wal_dir else wal_room)
    if cfg.wal_dir is not None:
        placement.check(cfg.wal_dir, data_dir=data_dir, option="wal_dir", subdir=placement.WAL_SUBDIR,
                        needed_bytes=wal_room + settings.DISK_RESERVE)
    check_data_dirs(data_dir, None, cfg)
    check_new_standbys(data_dir, cfg)
    needed += sum(settings.INITDB_BYTES for k in range(cfg.standbys) if k >= len(cfg.standby_data_dir))
    if free_bytes(data_dir) < needed:
        raise UsageError(f"--data-dir {data_dir} has {free_bytes(data_dir) >> 20} MiB free, but a new "
                         f"instance needs at least {needed >> 20} MiB (initdb, and room for its WAL)",
                         "choose a filesystem with more free space")


def check_data_dirs(data_dir: Path, meta: Meta | None, cfg: InstanceConfig) -> None:
    """The tablespace directories not yet made, checked before anything is made."""
    made = {Path(p["path"]).parent for p in meta.places} if meta is not None else set()
    for chosen in cfg.data_dirs:
        if chosen not in made:
            placement.check(chosen, data_dir=data_dir, option="data_dirs",
                            subdir=placement.TABLESPACE_SUBDIR, needed_bytes=settings.DISK_RESERVE)


def check_same_wal(data_dir: Path, meta: Meta, cfg: InstanceConfig) -> None:
    """initdb fixed where the WAL lives: another wal_dir needs another instance."""
    if cfg.wal_dir is None:
        return  # the instance's WAL stays where it is
    if meta.wal_dir is None or Path(meta.wal_dir).parent != cfg.wal_dir:  # the record names dbio's subdirectory
        where = f"in {Path(meta.wal_dir).parent}" if meta.wal_dir else "inside its data directory"
        raise UsageError(f"the instance in {data_dir} keeps its WAL {where}, not in wal_dir = "
                         f"{cfg.wal_dir}: the WAL's place is fixed when an instance is created",
                         "use another --data-dir for that layout (a new instance), or destroy this one first")


def wal_location(layout: Layout, meta: Meta | None) -> Path:
    """Where the WAL is written: wal_dir's subdirectory, or the data directory."""
    wal_dir = meta.wal_dir if meta is not None else None
    return Path(wal_dir) if wal_dir else layout.root


def wal_budget(layout: Layout, meta: Meta | None) -> int:
    """Bytes the instance's WAL may occupy: the free space of its filesystem plus the WAL it has."""
    wal_dir = meta.wal_dir if meta is not None else None
    if wal_dir is not None:  # initdb --waldir: pg_wal is a link to it, on its own filesystem
        wal = Path(wal_dir)
        return free_bytes(wal) + (tree_bytes(wal) if wal.is_dir() and not wal.is_symlink() else 0)
    wal = layout.pgdata / "pg_wal"
    # the server user may turn pg_wal into a link: then its files are not counted as room
    return free_bytes(layout.root) + (tree_bytes(wal) if wal.is_dir() and not wal.is_symlink() else 0)


def check_redo_room(layout: Layout, meta: Meta | None, cfg: InstanceConfig) -> None:
    """Before an update run: refuses one that could fill the disk with WAL."""
    chosen = dict(cfg.pg_settings).get("max_wal_size")
    budget = wal_budget(layout, meta)
    wal_mb = settings.max_wal_mb({"max_wal_size": chosen}) if chosen else settings.wal_size_for(budget)
    if wal_mb is None or settings.wal_fits(wal_mb, budget):
        return
    raise UsageError(f"the run could fill the disk: its WAL may grow to about {settings.WAL_OVERSHOOT} x "
                     f"max_wal_size ({wal_mb} MB), with {settings.DISK_RESERVE >> 20} MiB kept free besides, but "
                     f"the filesystem of {wal_location(layout, meta)} can give it only {budget >> 20} MiB",
                     settings.wal_room_fix(wal_mb, budget))


def check_host(cfg: InstanceConfig, memory_bytes: int) -> None:
    """Before a setup creates or starts the instance: its filesystem takes direct I/O when asked,
    and its buffer cache leaves the host some memory."""
    if cfg.direct_io and not supports_direct_io(cfg.data_dir):
        raise UsageError(f"the filesystem of --data-dir {cfg.data_dir} does not support direct I/O (O_DIRECT)",
                         "choose a directory on a filesystem that does, or pass --no-direct-io (and read the "
                         "report's page-cache warning)")
    problem = settings.memory_problem(cfg, memory_bytes)
    if problem:
        raise UsageError(problem, "lower shared_buffers")
