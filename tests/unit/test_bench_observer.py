"""bench_observer's in-round ratios: this checkout's total over the base's of the same round."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_observer  # noqa: E402


def _row(checkout, rnd, total, sessions=64):
    return {"engine": "postgres", "sessions": sessions, "checkout": checkout, "round": rnd,
            "outside": {"total_pct": total}}


def test_each_round_is_compared_with_its_own_base_run():
    rows = [_row("/a", 0, 2.0), _row("/b", 0, 4.0), _row("/b", 1, 1.0), _row("/a", 1, 1.5),
            _row("/a", 2, 3.0)]  # round 2 has no base run: no ratio
    lines = bench_observer.in_round_ratios(rows, "/b")
    assert len(lines) == 3
    cells = [c.strip() for c in lines[2].split("|")[1:-1]]
    assert cells[:2] == ["postgres", "64"]
    assert cells[4] == "0.50, 1.50" and cells[5] == "**1.00**"
    assert cells[2] == "2.50 (1.00-4.00)" and cells[3] == "2.00 (1.50-3.00)"


def test_a_session_count_without_a_pair_has_no_line():
    assert len(bench_observer.in_round_ratios([_row("/a", 0, 2.0, sessions=1)], "/b")) == 2
