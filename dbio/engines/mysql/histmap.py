"""The work loop's latency histogram without a table statement per iteration (pure).

The stored procedure finds a latency's bucket by arithmetic and two substrings instead of an
indexed SELECT and an INSERT ... ON DUPLICATE KEY UPDATE on MEMORY tables (two statements per
iteration, each opening and locking a table). A latency v (us) first gets a fine key: below 8 us
its whole microseconds, above 64 sub-buckets per power of two (fine_key(); slice.sql computes the
same expression). Every bound of dbio's histogram but 1e6 us falls on a fine edge; a fine bucket
holds at most one bound inside it (checked here), so one comparison with that bound finishes:

    bucket = MAP[key]; IF v >= BOUND[bucket] THEN bucket = bucket + 1

MAP and BOUND go to the session once as fixed-width strings (session_init.sql); the counts of a
slice live in a fixed-width string of COUNT_WIDTH digits per (kind, bucket) that comes back with
the slice's counters (parse_counts()).
"""

from __future__ import annotations

import bisect
import math
from typing import Sequence

import numpy as np

SUB = 64           # fine sub-buckets per power of two, from 8 us
TOP_EXPONENT = 27  # fine keys end at 2^28 us (268 s); longer latencies take the last key
KEYS = 8 + (TOP_EXPONENT - 2) * SUB
MAP_WIDTH = 3      # digits of a bucket number in MAP
BOUND_WIDTH = 24   # characters of a bound in BOUND
COUNT_WIDTH = 8    # digits of a count per slice (a slice of about a second)
KINDS = 4          # select, update, scan, hot-spot select (run/tally.KINDS)
SCHEDULED_KINDS = 6  # with --rate, and each statement from its intended start, and its schedule lag (SCHEDULE)


def fine_key(v_us: float) -> int:
    """The fine key slice.sql computes (a LOG2 one off at an exact power of two still gives the same key)."""
    if v_us < 8:
        return max(int(math.floor(v_us)), 0)
    e = math.floor(math.log2(v_us))
    return min(8 + (e - 3) * SUB + math.floor((v_us / 2.0 ** e - 1) * SUB), KEYS - 1)


def key_low(key: int) -> float:
    """The lower edge of a fine key's interval."""
    if key < 8:
        return float(key)
    e, j = 3 + (key - 8) // SUB, (key - 8) % SUB
    return 2.0 ** e * (1 + j / SUB)


def key_high(key: int) -> float:
    return math.inf if key == KEYS - 1 else key_low(key + 1)


def bucket_of(bounds: Sequence[float], v_us: float) -> int:
    """The histogram's own rule (dbio/stats/histogram.py): counts[i] holds [bounds[i-1], bounds[i])."""
    return bisect.bisect_right(bounds, v_us)


def build_map(bounds: Sequence[float]) -> str:
    """For each fine key, the bucket of its lower edge; refuses bounds the one comparison cannot resolve."""
    if len(bounds) + 1 >= 10 ** MAP_WIDTH:
        raise ValueError("too many histogram buckets for the loop's bucket map")
    if any(b < 1 for b in bounds):
        raise ValueError("histogram bounds below 1 us are finer than the loop's fine keys")
    out = []
    for key in range(KEYS):
        lo, hi = key_low(key), key_high(key)
        inside = [b for b in bounds if lo < b < hi]
        if len(inside) > 1:
            raise ValueError(f"histogram bounds {inside} fall in one fine bucket [{lo}, {hi})")
        out.append(f"{bucket_of(bounds, lo):0{MAP_WIDTH}d}")
    return "".join(out)


def build_bounds(bounds: Sequence[float]) -> str:
    """BOUND[i] = bounds[i], the upper edge of bucket i; the last bucket's is beyond any latency."""
    cells = [repr(float(b)) for b in bounds] + ["1e300"]
    if any(len(c) > BOUND_WIDTH for c in cells):
        raise ValueError("a histogram bound does not fit the loop's bound width")
    return "".join(c.rjust(BOUND_WIDTH, "0") for c in cells)  # zeros: a number as it stands


def bucket_in_loop(map_text: str, bounds_text: str, v_us: float) -> int:
    """What slice.sql does with the two strings (for tests: it must equal bucket_of())."""
    key = fine_key(v_us)
    bucket = int(map_text[key * MAP_WIDTH:(key + 1) * MAP_WIDTH])
    if v_us >= float(bounds_text[bucket * BOUND_WIDTH:(bucket + 1) * BOUND_WIDTH]):
        bucket += 1
    return bucket


def parse_counts(text: bytes | str, buckets: int) -> np.ndarray:
    """The slice's count string -> a (kinds, buckets) array: the statement kinds, or with a rate six."""
    raw = text.decode("ascii") if isinstance(text, (bytes, bytearray)) else text
    kinds = next((k for k in (KINDS, SCHEDULED_KINDS) if len(raw) == k * buckets * COUNT_WIDTH), None)
    if kinds is None:
        raise ValueError(f"the loop's histogram has {len(raw)} digits, expected {KINDS * buckets * COUNT_WIDTH} "
                         f"or {SCHEDULED_KINDS * buckets * COUNT_WIDTH}")
    digits = np.frombuffer(raw.encode("ascii"), dtype=np.uint8).reshape(-1, COUNT_WIDTH) - ord("0")
    if (digits > 9).any():  # not the loop's zero-padded digits (a sign, a space): read cell by cell, as before
        cells = [int(raw[i:i + COUNT_WIDTH]) for i in range(0, len(raw), COUNT_WIDTH)]
        return np.array(cells, dtype=np.int64).reshape(kinds, buckets)
    # the digits' places at once: 64 sessions' slices each second, 400 cells each, were 0.7% of a core cell by cell
    return (digits.astype(np.int64) @ _PLACES).reshape(kinds, buckets)


_PLACES = 10 ** np.arange(COUNT_WIDTH - 1, -1, -1, dtype=np.int64)
