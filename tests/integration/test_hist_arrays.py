"""A slice's histogram read straight into a numpy array (engines/postgres/hist_arrays.py), on the embedded
PostgreSQL: the same values, shape and type as numpy's copy of psycopg's lists, for every array a server sends."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from dbio.engines.postgres.hist_arrays import INT4_ARRAY, Int4ArrayLoader

pytestmark = pytest.mark.integration

ARRAYS = ["array_fill(123456, ARRAY[7, 260])", "ARRAY[]::int[]", "ARRAY[-5, 0, 2147483647, -2147483648]",
          "'[0:2]={1,2,3}'::int[]", "ARRAY[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]",
          "(SELECT array_agg(r ORDER BY h) FROM (SELECT h, array_agg((h * 1000 + g) % 997 ORDER BY g) r "
          "FROM generate_series(1, 3) h, generate_series(1, 7) g GROUP BY h) x)"]


@pytest.mark.parametrize("array", ARRAYS)
def test_an_array_reads_as_numpy_reads_the_lists(instance, array):
    with psycopg.connect(instance.conninfo("postgres"), autocommit=True) as lists, \
            psycopg.connect(instance.conninfo("postgres"), autocommit=True) as arrays:
        arrays.adapters.register_loader(INT4_ARRAY, Int4ArrayLoader)
        query = f"SELECT ({array})::int[]"
        want = np.asarray(lists.execute(query, binary=True).fetchone()[0], dtype=np.int64)
        got = arrays.execute(query, binary=True).fetchone()[0]
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
        assert (got == want).all()


def test_an_array_with_a_null_is_refused_as_before(instance):
    with psycopg.connect(instance.conninfo("postgres"), autocommit=True) as conn:
        conn.adapters.register_loader(INT4_ARRAY, Int4ArrayLoader)
        with pytest.raises(TypeError):
            conn.execute("SELECT ARRAY[1, NULL, 3]::int[]", binary=True).fetchone()
