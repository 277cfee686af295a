"""A slice's histogram, integer[] in binary, read straight into a numpy array (64 sessions each return one
every second: psycopg's list of lists, then numpy's copy of it, were most of what reading a slice cost)."""

from __future__ import annotations

import struct
import weakref
from typing import Any

import numpy as np
import psycopg
from psycopg.adapt import Loader

INT4_ARRAY = 1007  # the oid of integer[]
_HEADER = struct.Struct("!iiI")  # dimensions, has nulls, element oid; then (size, lower bound) per dimension
_ITEM = np.dtype([("length", ">i4"), ("value", ">i4")])  # each element: its length (4), its value


class Int4ArrayLoader(Loader):
    """integer[] in binary as an int64 array of its shape: what np.asarray of psycopg's nested lists gives.
    An array with nulls or of no dimension is read psycopg's way, then made an array, as before."""

    format = psycopg.pq.Format.BINARY

    def __init__(self, oid: int, context: Any = None):
        super().__init__(oid, context)
        self._context = context  # psycopg's own loader made only for an array it is needed for: one is made per result

    def load(self, data: Any) -> np.ndarray:
        ndim, has_null, _ = _HEADER.unpack_from(data)
        if has_null or ndim == 0:
            lists = psycopg.adapters.get_loader(self.oid, self.format)(self.oid, self._context)  # type: ignore[misc]
            return np.asarray(lists.load(data), dtype=np.int64)
        shape = struct.unpack_from(f"!{2 * ndim}i", data, _HEADER.size)[0::2]
        items = np.frombuffer(data, dtype=_ITEM, offset=_HEADER.size + 8 * ndim)
        return items["value"].astype(np.int64).reshape(shape)


_GIVEN: weakref.WeakSet = weakref.WeakSet()  # the connections that read integer[] so


def arrays_of(conn: psycopg.AsyncConnection) -> None:
    """conn's binary integer[] results read as numpy arrays (a session's connection: its one binary statement
    is its slice call)."""
    if conn not in _GIVEN:
        conn.adapters.register_loader(INT4_ARRAY, Int4ArrayLoader)
        _GIVEN.add(conn)
