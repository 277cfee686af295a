"""Every file dbio reads back that a user may have made, read one checked way: bounded by its kind.

As root, `dbio history`, `report` or `compare` over another user's directory read what that user left
there: a FIFO (the read blocks for ever), a link to a device (it never ends), a sparse file of gigabytes
(read whole, it fills memory), a small file of millions of tiny values (parsed, it takes twenty times
its size). So each reader names its kind (a result, a sample file, a sweep, ...) and the file is opened
without blocking (and without following a link where dbio found it in a directory), checked on the open
descriptor (a plain file, no larger than its kind's limit), then read at most limit + 1 bytes; a JSON
document's values are counted before it is parsed, a file of lines is read a bounded line at a time.
Each refusal is one line naming the file (Refused).

The limits are the largest file of each kind measured (bench/bench_reader_limits.py, bench/RESULTS.md
"What dbio reads back"), times a margin; docs/trust.md lists them.
"""

from __future__ import annotations

import errno
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from dbio import jsondoc

KiB, MiB = 1024, 1024 ** 2


@dataclass(frozen=True)
class Kind:
    """What a file is, and the most of it dbio reads."""

    name: str  # what the one line calls it: "result", "sample file"
    files: str  # which files are of the kind (docs/trust.md lists them)
    max_bytes: int
    max_values: int | None = None  # a JSON document: the values it may hold (value_bound)
    max_line: int | None = None  # a file of lines (samples.jsonl): the bytes of one, its newline included
    made_by: str = "dbio writes"  # whose files of the kind the limit is above: "any result dbio writes"


# The largest of each kind, measured (bench/bench_reader_limits.py --hours 8 --nodes 4 --sessions 32, 2026-12-02;
# bench/RESULTS.md "What dbio reads back"): a run of 8 hours sampled each second over 4 nodes, each reading as
# large as a PostgreSQL 18 snapshot, each interval's latencies in 190 buckets, with 4,096 sessions: result.json
# 164,385,311 bytes and 7,845,643 values (reading it takes 760 MB, reporting it 2.4 GB), samples.jsonl
# 1,048,253,268 bytes, its longest line 319,090 (the window's end, each session's /proc figures); two such
# runs merged 100,797,019 bytes; run.json 13,466 bytes (a PostgreSQL node's settings add 4 KiB); sweep.json of
# 2,000 steps 773,532 bytes and 28,109 values; repeat.json of 1,000 runs 117,199 bytes.
# The margins: a document read whole, twice the largest (a run of 16 hours, or of 8 over 14 nodes), so that a
# planted one takes no more memory than the largest real one does; and never less than 4 MiB and 200,000 values,
# which cost little however they are made. samples.jsonl, read a line at a time, 4 times (its size costs time,
# not memory), a line 6 times.
RESULT = Kind("result", "result.json: a run's, a merged one, an operation's, a sweep step's, a repeat set member's",
              max_bytes=320 * MiB, max_values=16_000_000)
SAMPLES = Kind("sample file", "samples.jsonl (read a line at a time)", max_bytes=4 * 1024 * MiB, max_line=2 * MiB)
MANIFEST = Kind("run manifest", "run.json", max_bytes=4 * MiB, max_values=200_000)
SWEEP = Kind("sweep", "sweep.json", max_bytes=4 * MiB, max_values=200_000)
REPEAT = Kind("repeat set", "repeat.json", max_bytes=4 * MiB, max_values=200_000)
# Written by dbio or by hand, a few KiB each: far more is no such file.
INSTANCE_RECORD = Kind("instance record", "dbio-instance.json, dbio-mysql-instance.json", max_bytes=1 * MiB,
                       max_values=50_000)
CONFIGURATION = Kind("configuration file", "dbio.toml, slob.conf, pg_service.conf", max_bytes=4 * MiB,
                     made_by="dbio reads")
OPTION_FILE = Kind("MySQL option file", "~/.my.cnf", max_bytes=1 * MiB, made_by="dbio reads")
MARK = Kind("mark", "a rescued result's rescued-from (a path)", max_bytes=64 * KiB)
KINDS = (RESULT, SAMPLES, MANIFEST, SWEEP, REPEAT, INSTANCE_RECORD, CONFIGURATION, OPTION_FILE, MARK)


class Refused(ValueError):
    """Why a file is not read: one line naming it."""


@contextmanager
def opened(path: Path, kind: Kind, *, follow: bool = True) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """The file open for reading and its status, once it is known to be a plain file within kind's limit.
    Opened without blocking (a FIFO would wait for a writer for ever); follow=False: a link is refused
    (one planted in a directory dbio reads could lead anywhere root can read). FileNotFoundError,
    IsADirectoryError and other OSErrors pass up as they are."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise Refused(f"{path} is a link, not a plain file (a link found in a directory is never "
                          "followed)") from None
        raise exc
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{path} is not a plain file (a FIFO, a device or a socket)")
        if st.st_size > kind.max_bytes:
            raise too_large(path, kind, f"{st.st_size:,} bytes")
        yield fh, st


def read_bytes(path: Path, kind: Kind, *, follow: bool = True, head: int | None = None) -> bytes:
    """The file's bytes (its first head bytes), checked as opened() checks it: never more than kind's limit."""
    with opened(path, kind, follow=follow) as (fh, _):
        return bounded(fh, path, kind, head)


def bounded(fh: BinaryIO, path: Path, kind: Kind, head: int | None = None) -> bytes:
    """What an open file holds, at most kind's limit (it may have grown since it was checked)."""
    data = fh.read(kind.max_bytes + 1 if head is None else min(head, kind.max_bytes + 1))
    if len(data) > kind.max_bytes:
        raise too_large(path, kind, "more")
    return data


def load_json(path: Path, kind: Kind, data: bytes | None = None, *, follow: bool = True) -> Any:
    """A JSON file (or its bytes, already read) parsed strictly (jsondoc.loads), once its values are known
    to be within kind's. UnicodeDecodeError and jsondoc.Malformed pass up."""
    data = read_bytes(path, kind, follow=follow) if data is None else data
    if kind.max_values is not None and (found := value_bound(data)) > kind.max_values:
        raise Refused(f"{path} holds more values than any {kind.name} {kind.made_by} (up to {found:,}, at most "
                      f"{kind.max_values:,})")
    text = data.decode("utf-8")
    del data  # the caller passes its only reference: the bytes are not held while the text is parsed
    return jsondoc.loads(text)


def value_bound(data: bytes) -> int:
    """The most values a JSON text can hold (pure): one, plus one per comma and per opening bracket or brace
    (each element but a container's first follows a comma). Exact but for one more per empty container, and
    for those inside strings, which a real document is measured with too (bench/bench_reader_limits.py). A
    parsed value costs up to a hundred bytes whatever its text: `[{},{},...]` takes 30 times its size."""
    return 1 + data.count(b",") + data.count(b"[") + data.count(b"{")


def lines(path: Path, kind: Kind, skipped: list[str] | None = None, *,
          follow: bool = True) -> Iterator[tuple[int, bytes]]:
    """A file of lines, checked as opened() checks it, as (number, line): a line longer than kind.max_line is
    passed over unread (skipped gets one line saying so), and nothing beyond kind.max_bytes is read (a file
    that grows once opened: skipped says where the reading stopped)."""
    assert kind.max_line is not None
    with opened(path, kind, follow=follow) as (fh, _):
        total, number = 0, 0
        while True:
            room = kind.max_bytes - total
            raw = fh.readline(max(0, min(kind.max_line, room)) + 1)
            if not raw:
                return
            number += 1
            total += len(raw)
            if total > kind.max_bytes:
                if skipped is not None:
                    skipped.append(f"line {number} and what follows are beyond the most of a {kind.name} dbio reads "
                                   f"({kind.max_bytes:,} bytes)")
                return
            if len(raw) > kind.max_line:
                if not raw.endswith(b"\n"):
                    total += _rest_of_line(fh, kind.max_bytes - total + 1)
                if skipped is not None:
                    skipped.append(f"line {number} is longer than any line of a {kind.name} {kind.made_by} (more "
                                   f"than {kind.max_line:,} bytes)")
                continue
            yield number, raw


def _rest_of_line(fh: BinaryIO, at_most: int) -> int:
    """Read past the end of an over-long line, a bounded piece at a time: the bytes passed over."""
    passed = 0
    while passed < at_most:
        piece = fh.readline(min(MiB, at_most - passed))
        passed += len(piece)
        if not piece or piece.endswith(b"\n"):
            break
    return passed


def too_large(path: Path, kind: Kind, size: str) -> Refused:
    return Refused(f"{path} is larger than any {kind.name} {kind.made_by} ({size}, at most {kind.max_bytes:,} bytes)")
