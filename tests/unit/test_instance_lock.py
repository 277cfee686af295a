"""The instance lock: one command at a time, refused at once, and no lock files left behind."""

import json
import os

import pytest

from dbio.errors import UsageError
from dbio.managed import lock


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    where = tmp_path / "locks"
    monkeypatch.setattr(lock, "lock_dir", lambda: where)
    return where


def test_the_holder_notes_itself_and_removes_the_file_when_done(lock_dir, tmp_path):
    data_dir = tmp_path / "instance"
    path = lock.lock_file_for(data_dir)
    with lock.exclusive(data_dir, "run"):
        note = json.loads(path.read_text())
        assert (note["command"], note["pid"], note["data_dir"]) == ("run", os.getpid(), str(data_dir))
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        with lock.exclusive(data_dir, "run"):  # a nested holder in the same process shares it
            pass
        assert path.exists()
    assert not path.exists() and list(lock_dir.iterdir()) == []


def test_a_second_holder_is_refused_at_once_naming_the_first(lock_dir, tmp_path):
    data_dir = tmp_path / "instance"
    with lock.exclusive(data_dir, "sweep"):
        with pytest.raises(UsageError, match=rf"is in use by dbio sweep \(pid {os.getpid()}, since "):
            lock._open_and_lock(lock.lock_file_for(data_dir), data_dir)  # another open file: a second command
    with lock.exclusive(data_dir, "run"):  # free again
        pass


def test_a_command_that_opened_the_file_as_its_holder_removed_it_locks_the_new_one(lock_dir, tmp_path, monkeypatch):
    data_dir = tmp_path / "instance"
    path = lock.lock_file_for(data_dir)
    with lock.exclusive(data_dir, "run"):
        stale = os.open(path, os.O_RDWR)  # opened while held; locked only after the holder has let go
    assert not path.exists()
    real_open = os.open
    handed = []

    def open_the_stale_one_first(p, flags, mode=0o777):
        if not handed:
            handed.append(stale)
            return stale
        return real_open(p, flags, mode)

    monkeypatch.setattr(lock.os, "open", open_the_stale_one_first)
    with lock.exclusive(data_dir, "setup"):
        assert handed == [stale]
        held = os.stat(path)  # the lock now lives in a file at the path, not in the removed one
        assert json.loads(path.read_text())["command"] == "setup"
        with pytest.raises(UsageError, match="in use by dbio setup"):
            lock._open_and_lock(path, data_dir)
    assert held.st_ino != 0 and not path.exists()
    with pytest.raises(OSError):
        os.fstat(stale)  # closed by the lock, not leaked


def test_a_lock_directory_others_may_write_is_refused(lock_dir, tmp_path):
    """Another user able to write there could plant the lock file (holding root's instance for ever,
    or naming a holder of their choosing) or swap it between dbio's open and its lock."""
    lock_dir.mkdir(mode=0o777)
    lock_dir.chmod(0o777)
    with pytest.raises(UsageError, match=r"refusing to use the lock directory .*writable by every user"):
        with lock.exclusive(tmp_path / "instance", "run"):
            pass
    assert list(lock_dir.iterdir()) == []


def test_the_parts_of_a_run_share_it_an_exclusive_command_is_refused_and_the_last_removes_the_file(lock_dir,
                                                                                                   tmp_path):
    data_dir = tmp_path / "instance"
    path = lock.lock_file_for(data_dir)
    first, second = lock.exclusive(data_dir, "run", shared=True), lock.exclusive(data_dir, "run", shared=True)
    first.__enter__()
    second.__enter__()  # a second part (its own open file, as another process's) shares it
    with pytest.raises(UsageError, match=r"is in use by dbio run \(in parts\)"):
        lock._open_and_lock(path, data_dir)  # an exclusive command
    first.__exit__(None, None, None)
    assert path.exists()  # a part still holds it
    with pytest.raises(UsageError, match="in use"):
        lock._open_and_lock(path, data_dir)
    second.__exit__(None, None, None)
    assert not path.exists()  # the last part removed it
    with lock.exclusive(data_dir, "run"):  # free again
        pass
