"""A maintenance operation's result (dbio ops, format dbio-ops) as its reports read it: typed records.

ops_result.read checks a file's format, version and shape (file_formats.ops); `of` types a document as
it is, for one this dbio has just written (dbio ops's closing lines, a sweep --op step) or a report given
a plain dict. Typed leniently, as the reports read it: what is not of its shape reads as absent. The
figures stay a mapping read through stats/catalogue.py's `ops_figure`; each device's figures and the
host's CPU are mappings by nature, reached through a named property.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from dbio.result_context import Environment, mapping as _mapping, number as _number, words


@dataclass(frozen=True)
class Detail:
    """The operation's own record, as far as its report reads it."""
    format: Any  # a backup's ("cold copy": the server stopped)
    command: tuple[str, ...]  # the program it ran (a backup's), as run
    log_lines: tuple[Any, ...]  # the server log's lines of a recovery, as written
    changes_per_block: int | None  # a recovery's: how often each block was to be changed after the checkpoint
    changes_per_block_done: float | None  # ... and how often it was
    span_blocks: float | None  # ... over how many blocks

    @classmethod
    def of(cls, value: Any) -> Detail:
        d = _mapping(value)
        asked = d.get("changes_per_block")
        return cls(d.get("format"), words(d.get("command")), _lines(_mapping(d.get("log")).get("lines")),
                   asked if isinstance(asked, int) and not isinstance(asked, bool) else None,
                   _number(d.get("changes_per_block_done")), _number(d.get("span_blocks")))


def _lines(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, list) else ()


@dataclass(frozen=True)
class Operation:
    """One operation's result: what was timed, how it ended, where, and its figures."""
    operation: str  # load, index, backup, recovery, checkpoint
    status: str | None
    status_reason: str | None
    label: str | None
    created_at: str | None
    dbio_version: str | None
    asked: Mapping[str, Any]  # the operation's own options as given (config.ops)
    environment: Environment
    places: Mapping[str, tuple[str, ...]]  # each role's paths (data, wal, target)
    detail: Detail
    figures: Mapping[str, Any]
    document: Mapping[str, Any]

    @property
    def devices(self) -> Mapping[str, Any]:
        """Each device's figures over the timed part, by its name."""
        return _mapping(self.figures.get("devices"))

    @property
    def devices_unread(self) -> Mapping[str, Any]:
        """The devices watched whose figures are absent, by name, and why (a /proc/diskstats line not read)."""
        return _mapping(self.figures.get("devices_unread"))

    @property
    def host_cpu(self) -> Mapping[str, Any]:
        """The host's CPU over the timed part (busy, user, system, iowait, busy CPUs)."""
        return _mapping(_mapping(self.figures.get("cpu")).get("host"))


def of(document: Mapping[str, Any]) -> Operation:
    """A document typed as it is (no check): one this dbio has just built."""
    d = document
    operation = d.get("operation")
    return Operation(
        operation=operation if isinstance(operation, str) else "", status=d.get("status"),
        status_reason=d.get("status_reason"), label=d.get("label"), created_at=d.get("created_at"),
        dbio_version=d.get("dbio_version"), asked=_mapping(_mapping(d.get("config")).get("ops")),
        environment=Environment.of(d.get("environment")),
        places={role: words(paths) for role, paths in _mapping(d.get("places")).items()},
        detail=Detail.of(d.get("detail")), figures=_mapping(d.get("figures")), document=d)
