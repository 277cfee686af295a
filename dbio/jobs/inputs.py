"""The results a command reads side by side (compare's, merge's): one name for each; and free text given
on the command line, refused when it holds a control character."""

from __future__ import annotations

import os
from pathlib import Path

from dbio import controls
from dbio.errors import UsageError


def input_names(paths: list[Path], names: list[str] | None) -> list[str]:
    """One name per input: the given ones, or each run's label (its directory name without the date)."""
    if names:
        if len(names) != len(paths):
            raise UsageError(f"--names gives {len(names)} names for {len(paths)} inputs", "give one name per input")
        for name in names:
            printable("--names", name)
        return names
    out: list[str] = []
    for path in paths:
        # as written, but whole: "result.json" or "." name the current directory, not ""
        directory = Path(os.path.abspath(path if path.is_dir() else path.parent))
        name = directory.name
        # a run directory is <date>-<time>-<label>: the label is the useful part
        parts = name.split("-", 2)
        label = parts[2] if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit() else name
        candidate, n = label, 2
        while candidate in out:
            candidate, n = f"{label}#{n}", n + 1
        out.append(candidate)
    return out


def printable(flag: str, text: str) -> str:
    """Free text given on the command line, refused when it holds a control character (controls.py)."""
    problem = controls.problem(text)
    if problem:
        raise UsageError(f"{flag} {text!r} {problem}", "use printable characters")
    return text
