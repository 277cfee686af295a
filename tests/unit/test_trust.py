"""Which files dbio may rely on when it runs with more privilege than the server (pure checks)."""

import os
import stat
from pathlib import Path

import pytest

from dbio import trust
from dbio.instance.lock import describe_holder

ME = os.geteuid()
OTHER = 4242 if ME != 4242 else 4343


def _st(uid: int, mode: int, gid: int = 0) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, gid, 0, 0, 0, 0))


@pytest.mark.parametrize("uid, mode, gid, problem", [
    (ME, stat.S_IFREG | 0o644, 0, None),
    (0, stat.S_IFDIR | 0o755, 0, None),
    (OTHER, stat.S_IFREG | 0o644, 0, "is owned by"),
    (ME, stat.S_IFREG | 0o646, 0, "is writable by every user"),
    (ME, stat.S_IFDIR | 0o775, 1000, "is writable by its group"),
    (ME, stat.S_IFDIR | 0o775, 0, None),  # root's group
])
def test_entry_problem(uid, mode, gid, problem):
    found = trust.entry_problem(_st(uid, mode, gid), frozenset({0, ME}))
    assert (found is None) if problem is None else (problem in found)


def test_a_path_through_a_sticky_world_writable_directory_is_trusted_only_below_a_trusted_entry(tmp_path):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    mine = sticky / "mine"
    mine.mkdir()
    assert trust.path_problem(mine / "file-to-be") is None
    assert "is writable by every user" in trust.path_problem(sticky)  # the sticky directory itself as the target
    plain = tmp_path / "open"
    plain.mkdir()
    plain.chmod(0o777)
    (plain / "x").mkdir()
    assert trust.path_problem(plain / "x") == f"{plain} is writable by every user"


@pytest.mark.skipif(ME != 0, reason="needs root to give a file to another user")
def test_a_tree_with_a_file_another_user_owns_is_refused_naming_it(tmp_path):
    tmp_path.chmod(0o755)
    tree = tmp_path / "install" / "bin"
    tree.mkdir(parents=True)
    program = tree / "pg_ctl"
    program.write_text("#!/bin/sh\n")
    assert trust.tree_problem(tmp_path / "install") is None
    os.chown(program, OTHER, OTHER)
    assert trust.tree_problem(tmp_path / "install") == f"{program} is owned by uid {OTHER}"
    os.chown(program, 0, 0)
    (tree / "link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text("")
    os.chown(tmp_path / "elsewhere", OTHER, OTHER)
    assert "(through the link" in trust.tree_problem(tmp_path / "install")


def test_write_for_replaces_a_planted_link_instead_of_writing_through_it(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep")
    planted = tmp_path / "dbio.conf"
    planted.symlink_to(target)
    trust.write_for(planted, "new settings\n", ME, os.getegid())
    assert target.read_text() == "keep"
    assert not planted.is_symlink() and planted.read_text() == "new settings\n"
    assert stat.S_IMODE(planted.stat().st_mode) == 0o600


def test_read_no_follow_refuses_a_link(tmp_path):
    (tmp_path / "secret").write_text("s")
    (tmp_path / "log").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError):
        trust.read_no_follow(tmp_path / "log")


@pytest.mark.parametrize("text, shown", [
    ('{"command": "run", "pid": 123, "since": 0}', "dbio run (pid 123, since 1970-01-01 00:00:00 UTC)"),
    ("", "another dbio command"),
    ('{"command": "run"}', "another dbio command"),
    ('{"command": "run", "pid": "x", "since": 1e400}', "another dbio command"),
])
def test_describe_holder(text, shown):
    assert describe_holder(text) == shown
