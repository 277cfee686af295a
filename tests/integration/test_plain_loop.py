"""The work loop's plain path (slice.sql: no rate, UPDATEs, scans, hot spot, hot schema or think time) against its
general path, on the embedded PostgreSQL: one slice of each, run as a standby's session runs it (the control
passed in), counts the same way: every iteration a SELECT of work_unit rows, each timed once as kind 1."""

from __future__ import annotations

import json

import pytest

from dbio.engines.postgres import sqlfiles, workload
from dbio.run.plan import NEVER
from dbio.stats.histogram import bounds_us

pytestmark = pytest.mark.integration

ITERATIONS = 300


def _slice(instance, db: str, **control_changes) -> dict:
    with instance.connect(db) as conn:
        conn.execute(sqlfiles.text("session_init.sql"), workload.session_settings(1, "index"))
        scale = conn.execute("SELECT rows FROM dbio.setup_tables WHERE kind = 'data'").fetchone()[0]
        control = {"run_id": 1, "started_at": conn.execute("SELECT now()::text").fetchone()[0], "window_open": None,
                   "deadline": None, "slice_seconds": 1e6, "scale": scale, "work_unit": 8, "update_work_unit": 8,
                   "update_pct": 0, "scan_pct": 0, "scan_workers": 0, "fill_bytes": 0, "hot_lo": 1, "hot_rows": 0,
                   "hot_every": NEVER, "hot_schema_every": NEVER, "think_every": NEVER, "think_min": 0,
                   "think_max": 0, "bounds_us": bounds_us(), **control_changes}
        cur = conn.execute(sqlfiles.text("slice_call.sql"), {
            "run_id": 1, "session": 1, "barrier": False, "iterations_before": 0, "selects_before": 5,
            "max_iterations": ITERATIONS, "think_left": 0, "due": None, "control": json.dumps(control)})
        names = [d.name for d in cur.description]
        return dict(zip(names, cur.fetchone()))


@pytest.mark.parametrize("changes", [{}, {"think_every": NEVER - 1}, {"hot_schema_every": NEVER - 1}],
                         ids=["plain", "general-think-off", "general-hot-schema-off"])
def test_the_plain_and_the_general_path_count_alike(instance, loaded_db, changes):
    out = _slice(instance, loaded_db, **changes)
    assert out["o_iterations"] == ITERATIONS
    assert out["o_selects"] == ITERATIONS  # this slice's, not the selects_before carried in
    assert out["o_updates"] == out["o_scans"] == out["o_hot_rows"] == 0
    assert out["o_rows"] == 8 * ITERATIONS
    hist = out["o_hist"]
    assert sum(hist[0]) == ITERATIONS and sum(map(sum, hist[1:])) == 0
    assert out["o_sum_us"][0] > 0 and out["o_max_us"][0] > 0 and out["o_sum_us"][1:] == [0] * 5
    assert out["o_think_s"] == 0 and out["o_done"] is True


def test_a_hot_spot_still_takes_the_general_path(instance, loaded_db):
    out = _slice(instance, loaded_db, hot_every=3, hot_rows=64)
    assert out["o_iterations"] == out["o_selects"] == ITERATIONS
    hist = out["o_hist"]
    assert sum(hist[3]) == ITERATIONS // 3 and sum(hist[0]) == ITERATIONS - ITERATIONS // 3
    assert 0 < out["o_hot_rows"] == 8 * (ITERATIONS // 3)
