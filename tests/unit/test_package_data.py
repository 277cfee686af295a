"""Every SQL file dbio reads at run time is shipped by a non-editable install (the README's quickstart):
the settle/ directory once was not, and every read-only run failed with 'No such file'."""

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_sql_file_is_in_the_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["dbio"]
    files = [p.relative_to(ROOT / "dbio").as_posix() for p in (ROOT / "dbio").rglob("*.sql")]
    missing = [f for f in files if not any(fnmatch.fnmatch(f, g) and f.count("/") == g.count("/") for g in globs)]
    assert files and not missing, f"not shipped by pyproject.toml's package-data: {missing}"
