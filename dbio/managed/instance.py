"""What every engine's managed instance does alike: where it is, whether it exists, and its record,
read only when nobody less trusted could have written it. Each engine's instance class sets its
layout (with root and meta_file), its record class and the words of its refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from dbio.errors import UsageError
from dbio.managed.record import require_own_instance, require_trusted_record


def _silent(_: str) -> None:
    pass


class ManagedInstance:
    layout_class: Callable[[Path], Any]
    record_class: Any  # has read(path) and server_user
    missing: tuple[str, str] = ("no dbio instance in {data_dir}", "create it with dbio instance init")

    def __init__(self, data_dir: Path, notify: Callable[[str], None] = _silent):
        self.layout = type(self).layout_class(Path(data_dir))
        self.notify = notify

    @property
    def data_dir(self) -> Path:
        return self.layout.root

    def exists(self) -> bool:
        return self.layout.meta_file.exists()

    def meta(self) -> Any:
        """The instance record, refused unless only trusted users could have written it."""
        if not self.exists():
            message, fix = self.missing
            raise UsageError(message.format(data_dir=self.data_dir), fix)
        require_trusted_record(self.layout.meta_file, self.data_dir)
        meta = self.record_class.read(self.layout.meta_file)
        require_own_instance(meta.server_user, self.data_dir)
        return meta

    def remember(self, options: dict[str, Any]) -> None:
        """Keep the options of the command that configured it in its record (config_resolver.py)."""
        meta = self.meta()
        if meta.options != options:
            meta.options = options
            meta.write(self.layout.meta_file)

    def before_destroy(self, ours: list[Path]) -> tuple[Any, list[Path]]:
        """(the record, the entries of the directory dbio did not make) for destroy, checked before
        anything is touched: only a directory holding dbio's record is ever removed."""
        from dbio.managed.server_user import recorded_user

        if not self.exists():
            raise UsageError(f"{self.data_dir} holds no dbio instance (no {self.layout.meta_file.name})",
                             "give the --data-dir of a dbio instance (and its --engine); dbio never deletes other "
                             "directories")
        meta = self.meta()
        recorded_user(meta.server_user)
        ours = [*ours, self.layout.meta_file, self.layout.meta_file.with_suffix(".tmp")]
        return meta, sorted(p for p in self.data_dir.iterdir() if p not in ours)
