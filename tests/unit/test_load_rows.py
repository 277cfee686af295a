import zlib

import numpy as np

from dbio.engines.base import TableJob
from dbio.engines.postgres.loader import FILLER_BYTES, encode
from dbio.load import plan_jobs, row_batches
from dbio.engines.base import SetupSpec


def rows(kind="data", n=5000, order="random"):
    batches = list(row_batches(TableJob(1, kind, n), key_order=order, seed=7, filler_bytes=FILLER_BYTES,
                               chunk_rows=1024))
    return np.concatenate([b.keys for b in batches]), np.concatenate([b.filler for b in batches])


def test_every_key_once_in_scattered_order():
    keys, _ = rows()
    assert sorted(keys.tolist()) == list(range(1, 5001))
    neighbours = np.abs(np.diff(np.argsort(keys)))  # where key k and k+1 land in the load order
    assert np.median(neighbours) > 500  # keys next to each other land far apart


def test_contiguous_order_and_scan_table_are_in_key_order():
    keys, _ = rows(order="contiguous")
    assert keys.tolist() == list(range(1, 5001))
    keys, _ = rows(kind="scan")
    assert keys.tolist() == list(range(1, 5001))


def test_fillers_are_unique_and_incompressible():
    keys, filler = rows(n=3000)
    assert len({bytes(f) for f in filler}) == 3000
    sample = filler[:200].tobytes()
    assert len(zlib.compress(sample, 6)) > 0.99 * len(sample)


def test_binary_copy_rows_have_the_key_and_filler():
    keys, filler = rows(n=3)
    from dbio.engines.base import RowBatch

    data = encode(RowBatch(keys, filler))
    row = 2 + 4 + 8 + 4 + 8 + 4 + FILLER_BYTES
    assert len(data) == 3 * row
    first = data[:row]
    assert int.from_bytes(first[0:2], "big") == 3
    assert int.from_bytes(first[6:14], "big") == keys[0]
    assert first[-FILLER_BYTES:] == filler[0].tobytes()


def test_jobs_cover_schemas_and_scan_table():
    jobs = plan_jobs(SetupSpec(scale=100, schemas=3, scan_table_blocks=10, key_order="random"))
    assert [(j.kind, j.schema_index, j.rows) for j in jobs] == [("data", 1, 100), ("data", 2, 100), ("data", 3, 100),
                                                              ("scan", 1, 10)]


def test_single_schema_over_places_is_split_into_key_ranges_one_per_place():
    spec = SetupSpec(scale=100, schemas=1, scan_table_blocks=10, key_order="random", places=("/a", "/b", "/c"))
    jobs = plan_jobs(spec)
    assert [(j.part, j.first_key, j.rows) for j in jobs if j.kind == "data"] == [(1, 1, 33), (2, 34, 33), (3, 67, 34)]
    assert [j.kind for j in jobs][-1] == "scan"
    part = jobs[1]
    batches = list(row_batches(part, key_order="random", seed=3, filler_bytes=FILLER_BYTES, chunk_rows=16))
    keys = np.concatenate([b.keys for b in batches])
    assert sorted(keys.tolist()) == list(range(34, 67)) and keys.tolist() != sorted(keys.tolist())


def test_one_place_or_several_schemas_split_nothing():
    assert SetupSpec(scale=100, schemas=1, scan_table_blocks=0, key_order="random", places=("/a",)).partitions == 0
    assert SetupSpec(scale=100, schemas=2, scan_table_blocks=0, key_order="random", places=("/a", "/b")).partitions == 0


def test_each_table_goes_to_its_place():
    from dbio.engines.postgres.tablespaces import for_job

    split = SetupSpec(scale=100, schemas=1, scan_table_blocks=10, key_order="random", places=("/a", "/b"))
    assert [for_job(split, job) for job in plan_jobs(split)] == ["/a", "/b", "/a"]  # parts, then the scan table
    spread = SetupSpec(scale=100, schemas=3, scan_table_blocks=0, key_order="random", places=("/a", "/b"))
    assert [for_job(spread, job) for job in plan_jobs(spread)] == ["/a", "/b", "/a"]  # schemas in turn
    assert for_job(SetupSpec(scale=100, schemas=1, scan_table_blocks=0, key_order="random"),
                   plan_jobs(split)[0]) is None
