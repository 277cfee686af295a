"""Pure parts of a layout sweep's WAL move and of the baseline's sequential run."""

from pathlib import Path

from dbio.collect import fio
from dbio.engines.postgres.instance.relocate import wanted_subdir


def test_the_wal_moves_only_when_its_recorded_place_is_not_the_one_asked_for():
    assert not wanted_subdir(None, None)  # in the data directory, and asked there
    assert wanted_subdir("/w1/dbio-wal", None)  # back into the data directory
    assert wanted_subdir(None, Path("/w1"))
    assert not wanted_subdir("/w1/dbio-wal", Path("/w1"))
    assert wanted_subdir("/w1/dbio-wal", Path("/w2"))


def test_the_sequential_run_reads_large_blocks_in_order_with_a_queue():
    job = fio.sequential("dbio-sequential", ("/d/a", "/d/b"), 5)
    options = job.options()
    assert "--rw=read" in options and "--bs=1024k" in options and "--readonly" in options
    assert f"--iodepth={fio.SEQ_QUEUE}" in options and "--file_service_type=sequential" in options
    assert fio.mib_per_s({"reads_per_s": 250.0}) == 250.0  # 1 MiB reads: reads/s = MiB/s
    assert fio.mib_per_s({"reads_per_s": None}) is None
    random = fio.Job("dbio-sync", ("/d/a",), 1, 5).options()
    assert "--bs=8k" in random and "--file_service_type=random" in random  # the random runs as before


def _sh(script, *args):
    import subprocess
    subprocess.run(["/bin/sh", "-c", script, "sh", *map(str, args)], check=True)


def _wal(directory, names=("000000010000000000000001", "archive_status/x.ready")):
    for name in names:
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(name)


def test_the_wal_is_copied_then_switched_from_the_data_directory_out_and_back(tmp_path):
    from dbio.engines.postgres.instance.relocate import COPY_SCRIPT, SWITCH_SCRIPT

    pgdata, away = tmp_path / "pgdata", tmp_path / "w1" / "dbio-wal"
    link = pgdata / "pg_wal"
    link.mkdir(parents=True), away.mkdir(parents=True)
    _wal(link)
    _sh(COPY_SCRIPT, link, away)  # the copy: the old WAL is whole until the switch
    assert (link / "000000010000000000000001").read_text() == "000000010000000000000001"
    _sh(SWITCH_SCRIPT, away, link)  # a directory: kept aside, a link takes its place
    assert link.is_symlink() and link.resolve() == away.resolve() and (pgdata / "pg_wal.dbio-old").is_dir()
    assert (link / "archive_status" / "x.ready").read_text() == "archive_status/x.ready"
    other = tmp_path / "w2" / "dbio-wal"
    other.mkdir(parents=True)
    _sh(COPY_SCRIPT, link, other)
    _sh(SWITCH_SCRIPT, other, link)  # a link: replaced by a link, in one rename
    assert link.is_symlink() and link.resolve() == other.resolve() and not (pgdata / "pg_wal.dbio-link").exists()
    back = pgdata / "pg_wal.dbio-new"
    back.mkdir()
    _sh(COPY_SCRIPT, link, back)
    _sh(SWITCH_SCRIPT, back, link)  # back into the data directory: the copy takes the link's place
    assert link.is_dir() and not link.is_symlink() and not back.exists()
    assert sorted(p.name for p in link.iterdir()) == ["000000010000000000000001", "archive_status"]


def test_signals_held_act_when_the_step_is_over():
    import os
    import signal

    import pytest

    from dbio import signals

    with pytest.raises(KeyboardInterrupt):
        with signals.held():
            os.kill(os.getpid(), signal.SIGINT)
            reached = True  # the signal waited for the step's end
    assert reached
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # unblocked again


def test_signals_held_wait_though_another_thread_could_take_them():
    """A signal sent to the process goes to a thread that does not block it (an executor's, say), and Python
    runs its handler in the main thread at once: held() waits for the step's end all the same."""
    import os
    import signal
    import threading
    import time

    import pytest

    from dbio import signals

    done = threading.Event()
    other = threading.Thread(target=done.wait, args=(10,))
    other.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            with signals.held():
                os.kill(os.getpid(), signal.SIGINT)
                until = time.monotonic() + 0.3  # time for the other thread to take it and the main thread to see it
                while time.monotonic() < until:
                    pass
                reached = True
        assert reached
        with pytest.raises(KeyboardInterrupt):  # the handler before the block is the one in force again
            signal.raise_signal(signal.SIGINT)
    finally:
        done.set()
        other.join()
