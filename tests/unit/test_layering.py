"""The layers of ARCHITECTURE.md, checked on the source: every import of every module under dbio/
(at module level and inside functions), read with ast, never executed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dbio"

# Modules below the commands and the run: they describe, read or compute, and never reach a server.
FOUNDATION = ("dbio/config.py", "dbio/config_files.py", "dbio/config_checks.py", "dbio/option.py",
              "dbio/option_table.py", "dbio/command_options.py", "dbio/disruption.py", "dbio/errors.py",
              "dbio/controls.py", "dbio/trust.py",
              "dbio/filesystem.py",
              "dbio/readback.py", "dbio/results_dir.py", "dbio/units.py",
              "dbio/jsondoc.py", "dbio/file_formats.py", "dbio/merge.py", "dbio/merge_inputs.py",
              "dbio/merge_readings.py", "dbio/merge_disruptions.py", "dbio/repeat_set.py",
              "dbio/kubernetes.py",
              "dbio/managed/", "dbio/collect/", "dbio/stats/", "dbio/report/")
ABOVE_FOUNDATION = ("dbio.run", "dbio.commands", "dbio.jobs", "dbio.target", "dbio.cli", "dbio.engines.postgres")
# What opens (or can reach what opens) a connection to a server.
CONNECTING = ("psycopg", "dbio.engines.postgres", "dbio.engines.registry", "dbio.target", "dbio.load",
              "dbio.run", "dbio.commands", "dbio.jobs", "dbio.cli")


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
            elif _lazy(node):  # an engine spec's factory, imported at its first call: an import all the same
                found.append((rel, node.lineno, _lazy(node).partition(":")[0]))
    return found


def _lazy(node: ast.AST) -> str:
    """The 'module:name' of a call lazy("module:name") (engines/spec.py), else ''."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "lazy" and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return ""


IMPORTS = _imports()


def _type_only() -> set[tuple[str, int]]:
    """(file, line) of the imports under `if TYPE_CHECKING:`: names for the type checker, never run."""
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                found |= {(rel, inner.lineno) for statement in node.body for inner in ast.walk(statement)
                          if isinstance(inner, (ast.Import, ast.ImportFrom))}
    return found


TYPE_ONLY = _type_only()


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


@pytest.mark.parametrize("rule", ["cli", "cli_group", "cli_config", "cli_run_commands", "cli_offline_commands",
                                  "cli_admin_commands", "config"])
def test_the_command_line_and_the_configuration_name_no_engine(rule):
    rel = f"dbio/{rule}.py"
    _check(_offences(lambda r: r == rel, ("dbio.engines.postgres", "psycopg")),
           f"{rel} imports an engine package directly")


def test_the_target_imports_no_command_nor_the_run():
    """target sits below the commands and the run (ARCHITECTURE.md: it depends on the engines' registry)."""
    _check(_offences(lambda rel: rel == "dbio/target.py", ("dbio.commands", "dbio.jobs", "dbio.run", "dbio.cli",
                                                           "dbio.load")),
           "dbio/target.py imports a layer above it")


def _module_name(rel: str) -> str:
    parts = Path(rel).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {path.relative_to(ROOT).as_posix(): _module_name(path.relative_to(ROOT).as_posix())
           for path in sorted(PACKAGE.rglob("*.py"))}


def _graph(imports=IMPORTS) -> dict[str, set[str]]:
    """dbio's module import graph, of the imports that run (a type-only one never does): an import
    statement points at the submodules it names (from a import b, b a module) or else at the module
    it names, when that module is one of dbio's."""
    names = set(MODULES.values())
    statements: dict[tuple[str, int], list[str]] = {}
    for rel, line, module in imports:
        if (rel, line) not in TYPE_ONLY:
            statements.setdefault((rel, line), []).append(module)
    graph: dict[str, set[str]] = {name: set() for name in names}
    for (rel, _), modules in statements.items():
        source = MODULES[rel] if rel in MODULES else _module_name(rel)
        targets = [m for m in modules[1:] if m in names] or [m for m in modules[:1] if m in names]
        graph.setdefault(source, set()).update(t for t in targets if t != source)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """One chain a -> b -> a for each strongly connected part of the graph with more than one module
    (Tarjan's algorithm, iterative; then the shortest cycle through the part's first module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    parts.append(sorted(part))
    chains = []
    for part in parts:
        start, inside = part[0], set(part)
        came_from: dict[str, str] = {}
        frontier = [start]
        while frontier and start not in came_from:
            following = []
            for node in frontier:
                for child in sorted(graph[node] & inside):
                    if child not in came_from:
                        came_from[child] = node
                        following.append(child)
            frontier = following
        chain = [start]
        while chain[-1] != start or len(chain) == 1:
            chain.append(came_from[chain[-1]])
        chains.append(" -> ".join(reversed(chain)) + f"  ({len(part)} modules: {', '.join(part)})")
    return chains


def test_the_cycle_check_can_fail():
    """A made-up import of dbio.cli from dbio.errors closes a cycle the check names as a chain."""
    made_up = IMPORTS + [("dbio/errors.py", 1, "dbio.cli")]
    found = _cycles(_graph(made_up))
    assert any(chain.startswith("dbio.cli -> ") and " -> dbio.errors -> dbio.cli " in chain for chain in found), found


def test_type_only_imports_are_seen():
    """the engine spec names Config for its factories' signatures only; config imports the registry to run."""
    assert any(rel == "dbio/engines/spec.py" and m == "dbio.config" and (rel, line) in TYPE_ONLY
               for rel, line, m in IMPORTS)
    assert "dbio.config" not in _graph()["dbio.engines.spec"]


def test_engine_option_declarations_import_no_code():
    """The option table (foundation) imports each engine's engine_options.py by name (engine_table): those
    modules declare only, so that reading them loads no engine code and closes no cycle."""
    from dbio import engine_table
    declared = {f"{engine_table.engine_options_module(name).replace('.', '/')}.py" for name in engine_table.names()}
    # the rule below reads these files: each engine's must be there, or a rename would leave it checking none
    assert declared and all((ROOT / rel).is_file() for rel in declared), declared
    allowed = ("dbio.option",)
    _check([f"{rel}:{line} -> {m}" for rel, line, m in IMPORTS
            if rel in declared and m.startswith("dbio") and not _under(m, allowed)],
           "an engine's engine_options.py imports more than dbio.option")


def test_no_import_cycle_among_dbio_modules():
    _check(_cycles(_graph()), "import cycles among dbio's modules (function-level imports included)")



VERBS = "dbio/commands/"  # one module per verb: what is its own, the rest composed of dbio/jobs/


def _verb_offences(imports=IMPORTS) -> list[str]:
    """file:line -> module for each import of a command's module by another (type-only ones too: a verb
    knows no other verb; what two verbs share lives in dbio/jobs/)."""
    worst: dict[tuple[str, int], str] = {}
    for rel, line, module in imports:
        if rel.startswith(VERBS) and _under(module, ("dbio.commands",)):
            worst[rel, line] = max(module, worst.get((rel, line), ""), key=len)
    return [f"{rel}:{line} -> {module}" for (rel, line), module in worst.items()]


def test_the_verb_check_can_fail():
    """A made-up import of the sweep verb by quickstart, as `from dbio.commands import sweep` records it."""
    made_up = IMPORTS + [("dbio/commands/quickstart.py", 1, "dbio.commands"),
                         ("dbio/commands/quickstart.py", 1, "dbio.commands.sweep")]
    assert _verb_offences(made_up) == ["dbio/commands/quickstart.py:1 -> dbio.commands.sweep"]


def test_no_verb_imports_another():
    _check(_verb_offences(), "a command's module imports another's (move what they share to dbio/jobs/)")

# ARCHITECTURE.md's layer table, checked: where each of its layers lives under dbio/ (each path is
# named, in backticks, in its row's modules), and what each imports against its "depends on" column.
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
LAYERS = {
    "command line": ("cli.py", "cli_group.py", "cli_config.py", "cli_run_commands.py", "cli_offline_commands.py",
                     "cli_admin_commands.py", "command_help.py", "__main__.py"),
    "commands": ("commands/", "command_flags.py", "config_resolver.py"),
    "jobs": ("jobs/", "sweep/", "ops_result.py"),
    "terminal": ("ui.py", "output.py", "metrics.py"),
    "target": ("target.py",),
    "run": ("run/",),
    "load": ("load.py",),
    "engines": ("engines/",),
    "pure computation": ("stats/", "report/", "file_formats.py", "result.py", "result_records.py",
                         "result_context.py", "sweep_records.py", "ops_records.py", "merge.py",
                         "merge_inputs.py", "merge_readings.py", "merge_disruptions.py",
                         "repeat_set.py",
                         "kubernetes.py"),
    "foundation": ("__init__.py", "config.py", "config_files.py", "slob_services.py", "slobconf.py",
                   "config_checks.py", "option.py", "option_table.py", "command_options.py", "engine_table.py",
                   "errors.py",
                   "controls.py",
                   "trust.py", "readback.py", "filesystem.py", "results_dir.py", "signals.py", "faults.py", "units.py",
                   "cluster_members.py", "jsondoc.py", "parts.py", "disruption.py",
                   "rate_schedule.py", "managed/", "collect/"),
}
STANDARD = "standard library"


def _table(text: str) -> dict[str, tuple[str, str]]:
    """layer -> (its modules cell, its depends-on cell), from the table under "## Layers"."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): (cells[1], cells[2].strip()) for cells in rows[1:] if len(cells) == 3}


def _depends(cell: str) -> dict[str, tuple[str, ...]]:
    """layer -> the paths it is limited to (empty: all of it), from "a, b (`x.py`, `y/`), standard library"."""
    items, depth, current = [], 0, ""
    for char in cell:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    out = {}
    for item in (i.strip() for i in items):
        name, _, limit = item.partition(" (")
        out[name.strip()] = tuple(re.findall(r"`([^`]+)`", limit))
    return out


def _within(rel: str, paths: tuple[str, ...]) -> bool:
    inside = rel.removeprefix("dbio/")
    return any(inside == p or (p.endswith("/") and inside.startswith(p)) for p in paths)


def _layer_of(rel: str) -> str | None:
    return next((name for name, paths in LAYERS.items() if _within(rel, paths)), None)


TABLE = _table(ARCHITECTURE.read_text())


def _layer_edges() -> list[tuple[str, str, str, str]]:
    """(file, imported file, its layer, the imported one's layer) for each import across layers."""
    files = {module: rel for rel, module in MODULES.items()}
    return [(files[source], files[target], _layer_of(files[source]), _layer_of(files[target]))
            for source, targets in sorted(_graph().items()) for target in sorted(targets)
            if _layer_of(files[source]) != _layer_of(files[target])]


def test_the_layer_table_names_every_module_once():
    assert set(TABLE) == set(LAYERS), f"ARCHITECTURE.md's layers {sorted(TABLE)} are not {sorted(LAYERS)}"
    _check([f"{rel}: in {[n for n, p in LAYERS.items() if _within(rel, p)]}" for rel in MODULES
            if len([n for n, p in LAYERS.items() if _within(rel, p)]) != 1], "a module in no layer, or in several")
    _check([f"{name}: `{path}`" for name, paths in LAYERS.items() for path in paths
            if f"`{path}`" not in TABLE[name][0]], "a layer's path not named in its row of ARCHITECTURE.md")


def test_the_depends_on_column_parses():
    assert _depends("a, b (`x.py`, `y/`), standard library") == {"a": (), "b": ("x.py", "y/"), STANDARD: ()}
    _check([f"{name}: {dep}" for name, (_, cell) in TABLE.items() for dep in _depends(cell)
            if dep not in TABLE and dep != STANDARD], "a depends-on entry that is no layer")


def _layer_offences(edges) -> list[str]:
    offences = []
    for rel, target, layer, other in edges:
        allowed = _depends(TABLE[layer][1])
        if other not in allowed or (allowed[other] and not _within(target, allowed[other])):
            offences.append(f"{rel} ({layer}) -> {target} ({other})")
    return offences


def test_each_layer_imports_only_what_its_row_depends_on():
    _check(_layer_offences(_layer_edges()), "imports ARCHITECTURE.md's depends-on column does not allow")


def test_the_depends_on_column_claims_only_what_is_imported():
    used: dict[str, set[str]] = {}
    for _, target, layer, other in _layer_edges():
        used.setdefault(layer, set()).update({other, f"{other}:{target.removeprefix('dbio/')}"})
    offences = []
    for layer, (_, cell) in TABLE.items():
        for other, paths in _depends(cell).items():
            if other != STANDARD and other not in used.get(layer, ()):
                offences.append(f"{layer} -> {other}")
            offences += [f"{layer} -> {other} (`{p}`)" for p in paths
                         if not any(u.startswith(f"{other}:{p}") for u in used.get(layer, ()))]
    _check(offences, "ARCHITECTURE.md says a layer depends on what it never imports")


def test_the_layer_check_can_fail():
    """Made-up imports: the foundation of a command, a target of an engine module its row does not name."""
    made_up = [("dbio/config.py", "dbio/commands/sweep.py", "foundation", "commands"),
               ("dbio/target.py", "dbio/engines/postgres/entry.py", "target", "engines"),
               ("dbio/target.py", "dbio/engines/instance.py", "target", "engines")]
    assert _layer_offences(made_up) == ["dbio/config.py (foundation) -> dbio/commands/sweep.py (commands)",
                                        "dbio/target.py (target) -> dbio/engines/postgres/entry.py (engines)"]


def _without_docstring(base: Path) -> list[str]:
    """The modules under base (not empty ones) that have no docstring, relative to base."""
    return [path.relative_to(base).as_posix() for path in sorted(base.rglob("*.py"))
            if path.read_text().strip() and not ast.get_docstring(ast.parse(path.read_text()))]


def test_the_docstring_check_can_fail(tmp_path):
    (tmp_path / "bare.py").write_text("x = 1\n")
    (tmp_path / "said.py").write_text('"""What it does."""\n\nx = 1\n')
    (tmp_path / "empty.py").write_text("")
    assert _without_docstring(tmp_path) == ["bare.py"]


def test_every_module_says_its_job_in_its_docstring():
    """ARCHITECTURE.md's table names where a module lives; what it does is its docstring's first sentence."""
    _check(_without_docstring(PACKAGE), "a module under dbio/ without a docstring")
