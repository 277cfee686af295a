"""Moving an embedded instance's WAL to another directory (or back into its data directory), for a
sweep over wal_dir: the server is stopped, the WAL's files move, pg_wal points at the new place.

initdb --waldir fixed the WAL's place when the instance was made; PostgreSQL itself supports moving
it while the server is down (pg_wal is then a link to the new directory). The files are the server
user's and so are the directories they move between: the moves run as that user, so root never
follows a link that user could have planted."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dbio.engines.postgres.instance import placement, settings
from dbio.filesystem import tree_bytes

if TYPE_CHECKING:
    from dbio.engines.postgres.instance.embedded import EmbeddedInstance
    from dbio.engines.postgres.instance.server_user import ServerUser

# $1: the WAL's directory now, $2: the new one, $3: pg_wal in the data directory. Back into the data
# directory ($2 = $3): the link is replaced by a directory first; elsewhere: the files go, then the link.
MOVE_SCRIPT = r'''set -e
old=$1; new=$2; link=$3
if [ "$new" = "$link" ]; then rm -- "$link"; mkdir -m 700 -- "$link"; fi
for f in "$old"/* "$old"/.[!.]*; do if [ -e "$f" ] || [ -L "$f" ]; then mv -- "$f" "$new"/; fi; done
if [ "$new" != "$link" ]; then
  if [ -L "$link" ]; then rm -- "$link"; else rmdir -- "$link"; fi
  ln -s -- "$new" "$link"
fi'''


def wanted_subdir(current: str | None, wal_dir: Path | None) -> bool:
    """Whether the WAL must move: its recorded place (dbio's subdirectory, None: the data directory)
    is not the one wal_dir asks for (pure)."""
    if wal_dir is None:
        return current is not None
    return current is None or Path(current).parent != wal_dir


def check(instance: "EmbeddedInstance", wal_dir: Path | None) -> None:
    """Refuse, before anything moves, a wal_dir the WAL could not be moved to."""
    meta = instance.meta()
    if wal_dir is None or not wanted_subdir(meta.wal_dir, wal_dir):
        return
    old = Path(meta.wal_dir) if meta.wal_dir else instance.layout.pgdata / "pg_wal"
    placement.check(wal_dir, data_dir=instance.data_dir, option="wal_dir", subdir=placement.WAL_SUBDIR,
                    needed_bytes=tree_bytes(old) + settings.DISK_RESERVE)


def move_wal(instance: "EmbeddedInstance", user: "ServerUser", wal_dir: Path | None) -> bool:
    """Put the instance's WAL in wal_dir (None: back in the data directory); False when it is already
    there. The new place is checked before the server is stopped or anything is moved."""
    meta = instance.meta()
    if not wanted_subdir(meta.wal_dir, wal_dir):
        return False
    link = instance.layout.pgdata / "pg_wal"
    old = Path(meta.wal_dir) if meta.wal_dir else link
    check(instance, wal_dir)
    instance.stop(quiet=True)
    new_place = placement.make(wal_dir, placement.WAL_SUBDIR, user) if wal_dir is not None else None
    target = new_place.path if new_place else str(link)
    instance.run_as_server(user, ["/bin/sh", "-c", MOVE_SCRIPT, "sh", str(old), target, str(link)],
                           what=f"moving the WAL from {old} to {target}")
    old_place = next((p for p in meta.places if p["path"] == meta.wal_dir), None)
    meta.places = [p for p in meta.places if p is not old_place] + ([new_place.to_dict()] if new_place else [])
    meta.wal_dir = new_place.path if new_place else None
    meta.write(instance.layout.meta_file)
    if old_place is not None:
        placement.remove(old_place)  # now empty; its parent too when dbio made it
    return True
