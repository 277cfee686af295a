"""What root copies or makes among files another user can change: the cold backup's copy and the
directories placed for WAL, tablespaces and standbys (found in an adversarial review)."""

import os
import stat
from pathlib import Path

import pytest

from dbio.engines.postgres import cold_copy
from dbio.engines.postgres.instance import placement
from dbio.errors import UsageError


def test_the_cold_copy_strips_setuid_keeps_links_unfollowed_and_follows_only_the_records_places(tmp_path):
    pgdata, wal, outside = tmp_path / "pgdata", tmp_path / "wal-place", tmp_path / "secret"
    for d in (pgdata, wal, outside, pgdata / "base"):
        d.mkdir()
    (pgdata / "base" / "1").write_bytes(b"block" * 100)
    planted = pgdata / "evil"
    planted.write_bytes(b"#!/bin/sh\n")
    os.chmod(planted, 0o4755)
    (outside / "shadow").write_text("root only")
    (pgdata / "to_secret").symlink_to(outside)
    (pgdata / "pg_wal").symlink_to(wal)
    (wal / "000000010000000000000001").write_bytes(b"w" * 64)
    (pgdata / "postmaster.pid").write_text("123")

    root = cold_copy.copy(pgdata, tmp_path / "backup", [str(wal)])

    assert (root / "base" / "1").read_bytes() == b"block" * 100
    assert stat.S_IMODE(os.lstat(root / "evil").st_mode) == 0o600  # no setuid bit, nobody else's
    assert (root / "to_secret").is_symlink() and not (root / "to_secret" / "shadow").resolve().is_relative_to(root)
    assert not (root / "pg_wal").is_symlink() and (root / "pg_wal" / "000000010000000000000001").stat().st_size == 64
    assert not (root / "postmaster.pid").exists()
    assert stat.S_IMODE(os.lstat(root).st_mode) == 0o700


def test_a_link_to_a_place_the_record_does_not_name_stays_a_link(tmp_path):
    pgdata, elsewhere = tmp_path / "pgdata", tmp_path / "elsewhere"
    pgdata.mkdir()
    elsewhere.mkdir()
    (elsewhere / "big").write_bytes(b"x" * 10)
    (pgdata / "pg_wal").symlink_to(elsewhere)
    root = cold_copy.copy(pgdata, tmp_path / "backup", [])
    assert (root / "pg_wal").is_symlink()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a directory owned by another user")
def test_a_chosen_directory_another_user_made_since_the_check_is_refused(tmp_path):
    os.chmod(tmp_path, 0o755)
    theirs = tmp_path / "wal"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)  # nobody made it first
    with pytest.raises(UsageError, match="changed while dbio was making it"):
        placement.prove_made(theirs)
    link = tmp_path / "link"
    link.symlink_to(Path("/etc"))
    with pytest.raises(UsageError, match="changed while dbio was making it"):
        placement.prove_made(link)
    ours = tmp_path / "ours"
    ours.mkdir()
    placement.prove_made(ours)  # root's own: accepted
