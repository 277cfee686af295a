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
