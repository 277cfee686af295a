"""sweep --rate: the rates of a latency-throughput curve, as a list or a range with a step count (pure).

`--rate 2000,4000,8000` runs one step per rate; `--rate 1000..8000:8` runs 8 steps from 1000 to 8000 statements/s,
evenly spaced, both ends included (each a whole number: the run's --rate is one). Either is `--vary rate=...`
with the same text: the range is read the same way there, and the two together are refused (one knob, one list).
"""

from __future__ import annotations

import re

from dbio.errors import UsageError

RANGE = re.compile(r"^\s*([0-9]+)\s*\.\.\s*([0-9]+)\s*:\s*([0-9]+)\s*$")
MAX_STEPS = 64  # a curve of more steps than this is a typo more often than a plan
EXAMPLE = "e.g. --rate 2000,4000,8000 or --rate 1000..8000:8 (8 steps from 1000 to 8000/s)"


def expand(text: str, said: str | None = None) -> tuple[str, ...]:
    """LOW..HIGH:N as its N rates (evenly spaced, rounded to whole statements/s, LOW and HIGH included); one line
    saying what is wrong otherwise (pure); said: the flag as typed, which that line names."""
    said = said or f"--rate {text}"
    found = RANGE.match(text)
    if found is None:
        raise UsageError(f"{said}: a range is LOW..HIGH:STEPS", EXAMPLE)
    low, high, count = (int(g) for g in found.groups())
    if low < 1 or high <= low:
        raise UsageError(f"{said}: the range must rise from at least 1/s", EXAMPLE)
    if not 2 <= count <= MAX_STEPS:
        raise UsageError(f"{said}: {count} steps; a range takes 2 to {MAX_STEPS}", EXAMPLE)
    values = [round(low + (high - low) * i / (count - 1)) for i in range(count)]
    if len(set(values)) != len(values):
        raise UsageError(f"{said}: {count} steps between {low} and {high} repeat a whole rate",
                         "give fewer steps or a wider range")
    return tuple(str(v) for v in values)

