"""Sweeps over layouts (pure parts): the values' syntax, their order and the report's x axis."""

from dbio.report import sweep_model
from dbio.sweep import plan
from dbio.sweep_records import of as typed_sweep


def test_a_layout_value_is_places_joined_with_colons_and_none_is_the_data_directory():
    assert plan.option_value("data_dirs", "/d1:/d2") == ["/d1", "/d2"]
    assert plan.option_value("data_dirs", "/d1") == ["/d1"]
    assert plan.option_value("data_dirs", "none") is None
    assert plan.option_value("wal_dir", "none") is None and plan.option_value("wal_dir", "/w") == "/w"
    assert plan.option_value("update_pct", "20") == "20"  # other knobs as typed
    assert [plan.places_count(v) for v in ("none", "/a", "/a:/b:/c")] == [1, 1, 3]


def test_layouts_vary_outermost_then_restarts_then_run_knobs():
    varies = [plan.parse_vary("update_pct=0,20"), plan.parse_vary("shared_buffers=16MiB,32MiB"),
              plan.parse_vary("data_dirs=/d1,/d1:/d2")]
    assert [v.key for v in plan.combine(varies)] == ["data_dirs", "shared_buffers", "update_pct"]
    assert plan.steps(varies)[:2] == [{"data_dirs": "/d1", "shared_buffers": "16MiB", "update_pct": "0"},
                                      {"data_dirs": "/d1", "shared_buffers": "16MiB", "update_pct": "20"}]
    assert plan.counted(varies) == ["data_dirs"]
    assert plan.step_name(3, {"data_dirs": "/mnt/a:/mnt/b", "wal_dir": "none"}) == "03-dirs2-b-waldnone"


def _row(name, dirs, wal):
    return {"name": name, "status": "complete", "values": {"data_dirs": dirs, "wal_dir": wal}}


def test_the_devices_study_puts_the_directory_count_on_the_x_axis():
    doc = {"vary": [["wal_dir", ["none", "/w"]], ["data_dirs", ["/d1", "/d1:/d2"]], ["threads_per_schema", ["1"]]],
           "counted": ["data_dirs"], "steps": [_row("01", "/d1", "none"), _row("02", "/d1:/d2", "none")]}
    figures = {"load_profile": {"physical_reads_per_s": 100.0}, "latency": {"avg_read_us": 50.0}}
    step_docs = {"01": {"config": {"workload": {"sessions": 1}, "instance": {"data_dirs": ["/d1"], "wal_dir": None}},
                        "figures": figures},
                 "02": {"config": {"workload": {"sessions": 1}, "instance": {"data_dirs": ["/d1", "/d2"],
                                                                             "wal_dir": None}}, "figures": figures}}
    assert sweep_model.axes(typed_sweep(doc)) == ("data_dirs", ["wal_dir"])
    model = sweep_model.build(typed_sweep(doc), step_docs)
    assert model["curves"]["x"] == "data_dirs (directories)"
    assert [p["x"] for p in model["curves"]["lines"][0]["points"]] == [1, 2]
