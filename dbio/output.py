"""A report's text, to the terminal or to the file --out names (made as trust.write_output makes files)."""

from __future__ import annotations

from pathlib import Path

from dbio import trust
from dbio.errors import UsageError
from dbio.ui import UI


def deliver(text: str, out: Path | None, ui: UI) -> None:
    if out is None:
        ui.console.print(text, markup=False, highlight=False, end="", soft_wrap=True)
        return
    if out.exists() and out.is_dir():
        raise UsageError(f"--out {out} is a directory", "give a file path")
    try:
        trust.write_output(out, text)
    except OSError as exc:
        raise UsageError(f"--out {out} cannot be written: {exc.strerror}", "choose a writable path") from None
    ui.say(f"wrote {out}")
