"""dbio compare: results (or sweeps) side by side, deltas against the first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbio import ops_result
from dbio import report as reports
from dbio import result as results
from dbio import ops_records, output, repeat_set
from dbio.sweep.document import load_steps
from dbio.errors import UsageError
from dbio.jobs.inputs import input_names
from dbio.report import compare_model, ops_model
from dbio.result_records import Result
from dbio.sweep import document as sweeps
from dbio.ui import UI


def compare(paths: list[Path], names: list[str] | None, form: str, out: Path | None, ui: UI) -> None:
    if len(paths) < 2:
        raise UsageError("compare needs two or more results or sweeps", "give their directories")
    operations = {ops_result.is_ops(p) for p in paths}
    if operations == {True}:  # maintenance operations (dbio ops) side by side
        named = [(label, ops_result.read_operation(path)) for label, path in zip(input_names(paths, names), paths)]
        output.deliver(reports.render_model(ops_model.build_compare(named), form), out, ui)
        return
    if len(operations) > 1:
        raise UsageError("compare takes runs or operations (dbio ops), not both", "compare like with like")
    kinds = {sweeps.is_sweep(p) for p in paths}
    if len(kinds) > 1:
        raise UsageError("compare takes results or sweeps, not both",
                         "compare results with results, sweeps with sweeps")
    labels = input_names(paths, names)
    if kinds == {True}:
        loaded = []
        for label, path in zip(labels, paths):
            directory = path if path.is_dir() else path.parent
            sweep = sweeps.read_sweep(directory)
            loaded.append((label, sweep, load_steps(directory, sweep)))
        ops_sweeps = {bool(sweep.operation) for _, sweep, _ in loaded}
        if len(ops_sweeps) > 1:
            raise UsageError("compare takes sweeps of runs or sweeps of an operation (--op), not both",
                             "compare like with like")
        if ops_sweeps == {True}:
            typed = [(label, sweep, {name: ops_records.of(d) for name, d in steps.items()})
                     for label, sweep, steps in loaded]
            model = ops_model.build_compare_sweeps(typed)
        else:
            model = compare_model.build_sweeps(loaded)
    else:
        model = _build_runs(labels, paths)
    output.deliver(reports.render_model(model, form), out, ui)


def _build_runs(labels: list[str], paths: list[Path]) -> dict[str, Any]:
    """Results side by side; an input that is a repeat set (run --repeat N) brings all its runs, and stands
    in the sections that show one run for its median run by reads/s."""
    named: list[tuple[str, Result]] = []
    runs: dict[str, list[Result]] = {}
    for label, path in zip(labels, paths):
        if repeat_set.is_repeat_set(path):
            found = [result for _, result in repeat_set.members(path)]
            complete = [result for result in found if result.status == "complete"] or found
            named.append((label, median_run(complete)))
            runs[label] = complete
        else:
            result = results.read_result(path)
            named.append((label, result))
            runs[label] = [result]
    return compare_model.build(named, runs)


def median_run(found: list[Result]) -> Result:
    """The run whose reads/s is the median (the lower middle one of an even number)."""
    ordered = sorted(found, key=lambda result: compare_model.READS.value(result.figures) or 0.0)
    return ordered[(len(ordered) - 1) // 2]


__all__: list[Any] = ["compare"]
