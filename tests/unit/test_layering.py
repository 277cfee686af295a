"""The layers of ARCHITECTURE.md, checked on the source: every import of every module under dbio/
(at module level and inside functions), read with ast, never executed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dbio"

# Modules below the commands and the run: they describe, read or compute, and never reach a server.
FOUNDATION = ("dbio/config.py", "dbio/config_files.py", "dbio/config_checks.py", "dbio/option.py",
              "dbio/options.py", "dbio/errors.py", "dbio/controls.py", "dbio/trust.py", "dbio/filesystem.py",
              "dbio/results_dir.py", "dbio/units.py",
              "dbio/jsondoc.py", "dbio/shapes.py", "dbio/merge.py", "dbio/repeat_set.py", "dbio/kubernetes.py",
              "dbio/managed/", "dbio/collect/", "dbio/stats/", "dbio/report/")
ABOVE_FOUNDATION = ("dbio.run", "dbio.commands", "dbio.target", "dbio.cli", "dbio.engines.postgres")
# What opens (or can reach what opens) a connection to a server.
CONNECTING = ("psycopg", "dbio.engines.postgres", "dbio.engines.registry", "dbio.target", "dbio.load",
              "dbio.run", "dbio.commands", "dbio.cli")


def _imports() -> list[tuple[str, int, str]]:
    """(file relative to the repository, line, module) for every import under dbio/; a from-import
    counts as its module and as each name taken from it (which may be a submodule)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.Import):
                found += [(rel, node.lineno, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's own package upwards
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                found.append((rel, node.lineno, base))
                found += [(rel, node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*"]
    return found


IMPORTS = _imports()


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _offences(where, forbidden: tuple[str, ...]) -> list[str]:
    """file:line -> module for each offending import statement (its most specific module)."""
    worst: dict[tuple[str, int], str] = {}
    for rel, line, module in IMPORTS:
        if where(rel) and _under(module, forbidden) and len(module) > len(worst.get((rel, line), "")):
            worst[rel, line] = module
    return [f"{rel}:{line} -> {module}" for (rel, line), module in worst.items()]


def _check(offences: list[str], rule: str) -> None:
    assert not offences, f"{rule}:\n  " + "\n  ".join(offences)


def test_the_walk_sees_imports_at_every_level():
    """The checks below can fail: the walk finds function-level and relative imports too."""
    assert ("dbio/engines/postgres/entry.py" in {rel for rel, _, m in IMPORTS if m == "dbio.engines.postgres.target"})
    assert any(rel == "dbio/engines/postgres/dsn.py" and m == "psycopg" for rel, _, m in IMPORTS)
    assert _offences(lambda rel: rel == "dbio/engines/postgres/dsn.py", ("psycopg",))


def test_psycopg_only_under_engines_postgres():
    _check(_offences(lambda rel: not rel.startswith("dbio/engines/postgres/"), ("psycopg",)),
           "psycopg imported outside dbio/engines/postgres/")


def test_the_postgresql_engine_is_reached_only_through_the_registry():
    # the registry imports engines by name (importlib), which this walk does not count as an import
    _check(_offences(lambda rel: not rel.startswith("dbio/engines/"), ("dbio.engines.postgres",)),
           "dbio.engines.postgres imported outside dbio/engines/ (ask dbio.engines.registry)")


def test_the_foundation_imports_nothing_above_it():
    def foundation(rel: str) -> bool:
        return any(rel == f or (f.endswith("/") and rel.startswith(f)) for f in FOUNDATION)

    _check(_offences(foundation, ABOVE_FOUNDATION),
           "configuration, options, errors, pure computation and readers import run/, commands/, target, cli "
           "or engines.postgres")


def test_reports_and_statistics_open_no_connection():
    _check(_offences(lambda rel: rel.startswith(("dbio/report/", "dbio/stats/")), CONNECTING),
           "report/ or stats/ import something that opens a connection")


@pytest.mark.parametrize("rule", ["cli", "config"])
def test_the_command_line_and_the_configuration_name_no_engine(rule):
    rel = f"dbio/{rule}.py"
    _check(_offences(lambda r: r == rel, ("dbio.engines.postgres", "psycopg")),
           f"{rel} imports an engine package directly")


def test_the_target_imports_no_command_nor_the_run():
    """target sits below the commands and the run (ARCHITECTURE.md: it depends on the engines' registry)."""
    _check(_offences(lambda rel: rel == "dbio/target.py", ("dbio.commands", "dbio.run", "dbio.cli", "dbio.load")),
           "dbio/target.py imports a layer above it")
