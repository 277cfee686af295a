"""A report in its engine's words (pure): the report model is written in PostgreSQL's (WAL, blocks,
shared buffers); an engine whose capabilities name them otherwise (InnoDB: the redo log, pages,
its buffer pool) gets its own. Only the parts that speak of the engine are rewritten: never the
storage stack or devices, whose "blocks" are the kernel's, nor numbers, paths and settings."""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from dbio.result_records import Result

DEFAULT_REDO, DEFAULT_BLOCK, DEFAULT_CACHE = "WAL", "block", "shared_buffers"
ENGINE_SECTIONS = ("verdict", "load_profile", "io_profile", "latency", "layout", "baseline", "shape")
DESCRIBED = ("shape",)  # sections whose rows end with how a figure is made, in words (never a fact)


def translator(caps: Mapping[str, Any]) -> Callable[[str], str] | None:
    """The rewriting for an engine's capabilities; None when they are PostgreSQL's words."""
    redo = caps.get("redo_name") or DEFAULT_REDO
    block = caps.get("block_name") or DEFAULT_BLOCK
    cache = caps.get("cache_name") or DEFAULT_CACHE
    rules: list[tuple[re.Pattern[str], str]] = []
    if redo != DEFAULT_REDO:
        rules.append((re.compile(r"\bWAL\b"), redo))
    if block != DEFAULT_BLOCK:
        # "block device" is the kernel's word, whatever the engine
        # InnoDB pages hold two of dbio's rows, scattered: a row read is a page read, not a row per page
        rules += [(re.compile(r"\(one row per block\)"), f"(rows scattered, one {block} read each)"),
                  (re.compile(r"\bblocks\b(?! device)"), f"{block}s"), (re.compile(r"\bblock\b(?! device)"), block),
                  (re.compile(r"\bBlocks\b"), f"{block.capitalize()}s"), (re.compile(r"\bBlock\b"), block.capitalize())]
    if cache != DEFAULT_CACHE:
        rules.append((re.compile(r"\bshared buffers\b"), cache))
    if not rules:
        return None

    def say(text: str) -> str:
        for pattern, word in rules:
            text = pattern.sub(lambda m: _cased(m, word), text)
        return text

    return say


def cache_name(doc: Result) -> str:
    """What the engine's users call its buffer cache."""
    return doc.caps.cache_name or "the buffer cache"


def say(doc: Result, text: str) -> str:
    """One text of a result (a finding's message) in its engine's words."""
    rewrite = translator(dict(doc.capabilities))
    return rewrite(text) if rewrite else text


def _cased(match: re.Match[str], word: str) -> str:
    """A label that began with the word begins with a capital still."""
    return word[0].upper() + word[1:] if match.start() == 0 and word[:1].islower() else word


def in_engine_words(model: dict[str, Any], caps: dict[str, Any]) -> dict[str, Any]:
    """The report model with its engine's words in findings, headline and engine sections (in place)."""
    say = translator(caps if isinstance(caps, dict) else {})
    if say is None:
        return model
    for finding in model.get("findings") or []:
        finding["message"] = say(finding["message"])
    for section in model.get("sections") or []:
        section["pairs"] = [[say(k), v] for k, v in section.get("pairs") or []]  # labels only: values are facts
        if section.get("id") in ENGINE_SECTIONS:
            _section(section, say, described=section.get("id") in DESCRIBED)
    return model


def _section(section: dict[str, Any], say: Callable[[str], str], *, described: bool = False) -> None:
    section["title"] = say(section.get("title") or "")
    section["lines"] = [say(line) for line in section.get("lines") or []]
    for t in section.get("tables") or []:
        t["title"] = say(t.get("title") or "")
        t["notes"] = [say(n) for n in t.get("notes") or []]
        t["rows"] = [[say(row[0]) if isinstance(row[0], str) else row[0], *row[1:]] if row else row
                     for row in t.get("rows") or []]
        if described:
            t["rows"] = [[*row[:-1], say(row[-1])] if len(row) > 1 and isinstance(row[-1], str) else row
                         for row in t["rows"]]
