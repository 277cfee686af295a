"""The devices' reads against the engine's (pure): whether a cache served some of the engine's reads (the
devices read less), or other work read from the devices too (they read more). One judgement, made by the
verdict over the window (report/storage_findings.py) and by the live view over the window so far
(stats/live.py).

Requests for single-block reads: with direct I/O each of the engine's reads is one device request (they
matched within 0.1% on this project's VM), and bytes would count the kernel's read-ahead. Bytes for
multi-block reads (the engine's average read beyond MULTI_BLOCK_READ of its pages: a scan's), which the block
layer splits or merges into requests of other sizes: a 128 KiB read crossing a file extent is two requests
(+6% requests, the same bytes), and another process's 1 MiB reads are a request each, so its bytes beyond the
engine's can be 8% while its requests are 1%."""

from __future__ import annotations

from dataclasses import dataclass

DEVICE_SHARE_LIMIT = 0.9  # the devices read less than this share of the engine's: a cache served the rest
# The devices read more than the engine: beyond this share, and beyond a floor that keeps noise out.
DEVICE_EXCESS_LIMIT = 0.02
DEVICE_EXCESS_MIN_READS = 100  # requests (of pages, judged by bytes): a shell or the kernel reads a handful
MULTI_BLOCK_READ = 1.5  # the engine's average read beyond this many pages: multi-block reads, judged by bytes


def multi_block(engine_reads: float | None, engine_bytes: float | None, page_bytes: int) -> bool:
    """Whether the engine's reads are multi-block (its average read beyond MULTI_BLOCK_READ pages)."""
    return bool(engine_reads) and bool(engine_bytes) and \
        engine_bytes / engine_reads > MULTI_BLOCK_READ * page_bytes  # type: ignore[operator]


@dataclass(frozen=True)
class Reads:
    """The devices' reads and the engine's in the unit they are judged in (bytes or requests)."""

    by_bytes: bool
    device: float
    engine: float
    page_bytes: int

    @property
    def share(self) -> float | None:
        """The devices' reads per engine read (None when the engine read nothing)."""
        return self.device / self.engine if self.engine else None

    def cache(self) -> bool:
        """The devices read less than the engine did: a cache served the rest."""
        return self.share is not None and self.share < DEVICE_SHARE_LIMIT

    def excess(self) -> float | None:
        """What the devices read beyond the engine's reads, when it is more than noise; None otherwise."""
        excess = self.device - self.engine
        floor = DEVICE_EXCESS_MIN_READS * (self.page_bytes if self.by_bytes else 1)
        if excess <= DEVICE_EXCESS_LIMIT * self.engine or excess < floor:
            return None
        return excess


def compared(device_reads: float | None, device_bytes: float | None, engine_reads: float | None,
             engine_bytes: float | None, page_bytes: int) -> Reads | None:
    """The devices' reads against the engine's: by bytes for multi-block reads (by requests when the devices' bytes
    were not read, in results of an older dbio), else by requests; None when either was not read."""
    if device_reads is None or engine_reads is None:
        return None
    if device_bytes is not None and multi_block(engine_reads, engine_bytes, page_bytes):
        return Reads(True, float(device_bytes), float(engine_bytes or 0.0), page_bytes)
    return Reads(False, float(device_reads), float(engine_reads), page_bytes)
