"""RunPlan.control's fields against each engine's run_control table (control_tables.sql) and the statement that
fills its row (run_control.sql): a column added on one side and not the other fails here, not in a run."""

import re
from dataclasses import fields
from pathlib import Path

import pytest

import dbio
from dbio.run import plan as run_plan

ENGINES = Path(dbio.__file__).parent / "engines"
# The row's columns that are the run's, not the plan's: its id, the dbio process, the instants it starts at.
THE_RUNS = {"run_id", "client", "started_at", "window_open", "deadline"}
# The row's columns that are each node's: its sessions, which share its one --rate schedule (run/nodes.py).
THE_NODES = {"rate_sessions"}
# Per engine: columns the engine fills itself, and plan fields its table has no column for (and why).
OWN = {"postgres": set(), "mysql": {"created_at"}}  # when the row was made, for forget_abandoned_runs
NOT_STORED = {"postgres": set(),
              # no parallel scan on MySQL; its buckets are fixed in its histogram map (histmap.py)
              "mysql": {"scan_workers", "bounds_us"}}


def table_columns(sql: str, table: str) -> list[str]:
    """The column names of one CREATE TABLE of a control_tables.sql, in order."""
    found = re.search(rf"CREATE TABLE (?:IF NOT EXISTS )?dbio[._]{table} \((.*?)\n\)", sql, re.S)
    assert found, f"no CREATE TABLE of {table}"
    out = []
    for line in found.group(1).splitlines():
        line = line.strip()
        if not line or line.startswith("--") or line.upper().startswith(("PRIMARY KEY", "UNIQUE", "CHECK")):
            continue
        out.append(line.split()[0].strip("`"))
    return out


def bound_names(sql: str) -> set[str]:
    return set(re.findall(r"%\((\w+)\)s", sql))


def plan_fields() -> set[str]:
    return {f.name for f in fields(run_plan.Control)}


@pytest.mark.parametrize("engine", sorted(OWN))
def test_the_plan_s_control_is_the_run_control_table_s_columns(engine):
    sql = (ENGINES / engine / "sql" / "control_tables.sql").read_text()
    columns = table_columns(sql, "run_control")
    assert len(columns) == len(set(columns)), columns
    assert set(columns) == (plan_fields() - NOT_STORED[engine]) | THE_RUNS | THE_NODES | OWN[engine]


@pytest.mark.parametrize("engine", sorted(OWN))
def test_the_statement_that_fills_the_row_binds_only_what_the_plan_and_the_run_give(engine):
    given = set(run_plan.make_plan(_workload()).control.row()) | {"run_id", "client"} | THE_NODES
    bound = bound_names((ENGINES / engine / "sql" / "run_control.sql").read_text())
    assert bound <= given, bound - given
    assert bound == given - NOT_STORED[engine]


def test_the_parser_reads_a_table_as_written():
    sql = "CREATE TABLE IF NOT EXISTS dbio.run_control (\n    run_id bigint PRIMARY KEY,\n    -- a note\n" \
          "    `rows` BIGINT NOT NULL,\n    PRIMARY KEY (run_id)\n);\n"
    assert table_columns(sql, "run_control") == ["run_id", "rows"]


def test_every_engine_with_a_control_table_is_checked():
    assert {p.parent.parent.name for p in ENGINES.glob("*/sql/control_tables.sql")} == set(OWN)


def _workload():
    from dbio.config import Sources, load_config

    return load_config(Sources(cli={"allow_cached": True}, cwd=Path("/nonexistent-dbio-cwd"))).workload
