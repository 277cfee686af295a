"""The work loop's plain path is taken exactly when every option it skips is off: slice.sql names run/plan.NEVER,
the control row's "off", as a literal (PL/pgSQL has no access to Python's constant)."""

import re

from dbio.engines.postgres import sqlfiles
from dbio.run.plan import NEVER


def test_the_plain_path_tests_for_plan_never():
    text = sqlfiles.text("slice.sql")
    condition = text[text.index("v_plain :="):text.index(";", text.index("v_plain :="))]
    assert sorted(re.findall(r"c\.(\w+) >= (\d+)", condition)) == [
        ("hot_every", str(NEVER)), ("hot_schema_every", str(NEVER)), ("think_every", str(NEVER))]
    assert "v_rate IS NULL" in condition and "c.update_pct = 0" in condition and "c.scan_pct = 0" in condition
