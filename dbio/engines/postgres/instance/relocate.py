"""Moving an embedded instance's WAL to another directory (or back into its data directory), for a
sweep over wal_dir: the server is stopped, the WAL's files move, pg_wal points at the new place.

initdb --waldir fixed the WAL's place when the instance was made; PostgreSQL itself supports moving
it while the server is down (pg_wal is then a link to the new directory). The files are the server
user's and so are the directories they move between: the moves run as that user, so root never
follows a link that user could have planted."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from dbio import signals
from dbio.engines.postgres.instance import as_server, placement, settings
from dbio.engines.postgres.instance.paths import Layout
from dbio.engines.postgres.instance.record import Meta
from dbio.filesystem import tree_bytes
from dbio.managed.server_user import ServerUser

# The move is a copy, a switch and a removal, so that a signal never leaves the WAL split between two
# places: until the switch the old WAL is whole (a stopped copy is discarded); the switch is a few
# renames made with the signals a Ctrl-C sends held back; after it, only an old copy is removed.
COPY_SCRIPT = r'''set -e
cp -a -- "$1"/. "$2"/'''
# $1: the copy, $2: pg_wal in the data directory. Back into the data directory the copy is $2.dbio-new and
# takes the link's place; elsewhere a link to it replaces the link (atomically) or the directory (kept as
# $2.dbio-old until it is removed).
SWITCH_SCRIPT = r'''trap '' INT TERM
set -e
new=$1; link=$2
if [ "$new" = "$link.dbio-new" ]; then
  rm -- "$link"; mv -- "$new" "$link"
elif [ -L "$link" ]; then
  ln -s -- "$new" "$link.dbio-link"; mv -T -- "$link.dbio-link" "$link"
else
  mv -- "$link" "$link.dbio-old"; ln -s -- "$new" "$link"
fi'''
STALE = (".dbio-new", ".dbio-link", ".dbio-old")  # what a move cut short by a power loss could leave


def wanted_subdir(current: str | None, wal_dir: Path | None) -> bool:
    """Whether the WAL must move: its recorded place (dbio's subdirectory, None: the data directory)
    is not the one wal_dir asks for (pure)."""
    if wal_dir is None:
        return current is not None
    return current is None or Path(current).parent != wal_dir


def check(layout: Layout, meta: Meta, wal_dir: Path | None) -> None:
    """Refuse, before anything moves, a wal_dir the WAL could not be moved to."""
    if wal_dir is None or not wanted_subdir(meta.wal_dir, wal_dir):
        return
    old = Path(meta.wal_dir) if meta.wal_dir else layout.pgdata / "pg_wal"
    placement.check(wal_dir, data_dir=layout.root, option="wal_dir", subdir=placement.WAL_SUBDIR,
                    needed_bytes=tree_bytes(old) + settings.DISK_RESERVE)


def move_wal(layout: Layout, meta: Meta, user: ServerUser, wal_dir: Path | None,
             stop: Callable[[], object]) -> bool:
    """Put the instance's WAL in wal_dir (None: back in the data directory); False when it is already
    there. The new place is checked before the server is stopped (stop) or anything is moved; a signal during
    the copy leaves the WAL where it was, and the switch to the copy is not interrupted."""
    if not wanted_subdir(meta.wal_dir, wal_dir):
        return False
    link = layout.pgdata / "pg_wal"
    old = Path(meta.wal_dir) if meta.wal_dir else link
    check(layout, meta, wal_dir)
    stop()

    def _server(user: ServerUser, cmd: list[str], what: str) -> None:
        as_server.run(user, cmd, cwd=layout.root, log_file=layout.log_file, what=what)

    _server(user, ["rm", "-rf", "--", *(f"{link}{suffix}" for suffix in STALE)],
            "removing an unfinished move")
    if wal_dir is not None:
        new_place = placement.make(wal_dir, placement.WAL_SUBDIR, user)
        target = new_place.path
    else:
        new_place, target = None, f"{link}.dbio-new"
        _server(user, ["mkdir", "-m", "700", "--", target], "making the WAL's directory")
    try:
        _server(user, ["/bin/sh", "-c", COPY_SCRIPT, "sh", str(old), target],
                f"copying the WAL from {old} to {target}")
    except BaseException:
        with signals.held():  # the old WAL is whole: only the copy goes
            if new_place is not None:
                placement.remove(new_place.to_dict())
            else:
                _server(user, ["rm", "-rf", "--", target], "removing the WAL's partial copy")
        raise
    with signals.held():
        _server(user, ["/bin/sh", "-c", SWITCH_SCRIPT, "sh", target, str(link)],
                f"switching pg_wal to {target}")
        old_place = next((p for p in meta.places if p["path"] == meta.wal_dir), None)
        meta.places = [p for p in meta.places if p is not old_place] + ([new_place.to_dict()] if new_place else [])
        meta.wal_dir = new_place.path if new_place else None
        meta.write(layout.meta_file)
        if old_place is not None:
            placement.remove(old_place)  # the old copy; its parent too when dbio made it
        else:
            _server(user, ["rm", "-rf", "--", f"{link}.dbio-old"], "removing the WAL's old copy")
    return True
