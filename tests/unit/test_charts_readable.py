"""HTML charts people can read: latencies of different magnitudes on their own scales, the CPU
legend beside the stacked areas, the latency histogram's tail visible and its percentiles marked."""

import json
from pathlib import Path

import numpy
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from dbio.report import charts
from dbio.report import model as report_model
from dbio import result as results
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture(scope="module")
def model():
    return json.loads(json.dumps(report_model.build(of(results.read(FIXTURES / "result_complete.json")))))


def test_read_latency_and_select_p99_do_not_share_one_linear_axis(model):
    fig = charts.latency_figure(model["series"])
    first, second = fig.axes  # two panels, one per magnitude
    assert "us" in first.get_ylabel() and "ms" in second.get_ylabel()
    # each panel's scale fits its own line: the read latency (about 200 us) is not a flat line near 0
    assert first.get_ylim()[1] < 1000 and numpy.nanmax(first.lines[0].get_ydata()) > 0.5 * first.get_ylim()[1]
    assert numpy.nanmax(second.lines[0].get_ydata()) > 0.5 * second.get_ylim()[1]


def _box(fig, artist):
    return artist.get_window_extent(FigureCanvasAgg(fig).get_renderer())


def test_the_cpu_legend_does_not_cover_the_stacked_areas(model):
    fig = charts.cpu_figure(model["series"])
    ax = fig.axes[0]
    assert not _box(fig, ax.get_legend()).overlaps(_box(fig, ax))


def test_steal_is_drawn_with_the_host_cpu_when_the_result_has_it(model):
    assert [t.get_text() for t in charts.cpu_figure(model["series"]).axes[0].get_legend().get_texts()] == \
        ["user", "system", "I/O wait"]  # a result recorded before steal was kept per interval
    series = {**model["series"], "host_steal_pct": [12.5 for _ in model["series"]["host_user_pct"]]}
    legend = charts.cpu_figure(series).axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["user", "system", "I/O wait", "steal"]


def test_device_reads_far_above_the_engine_s_get_their_own_axis(model):
    """Another process using the device must not flatten the engine's own rate to a line at zero."""
    alike = charts.iops_figure(model["series"])
    assert len(alike.axes) == 1  # the device did about the engine's reads: one scale
    busy = {**model["series"], "device_reads_per_s": [None if v is None else 100 * v
                                                      for v in model["series"]["reads_per_s"]]}
    fig = charts.iops_figure(busy)
    engine, device = fig.axes
    assert device.get_ylabel() == "device reads/s"
    top = max(v for v in model["series"]["reads_per_s"] if v is not None)
    assert engine.get_ylim()[1] < 2 * top  # the engine's reads fill their own axis


def test_the_latency_histogram_shows_its_tail_and_marks_percentiles(model):
    fig = charts.histogram_figure(model["histograms"])
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"  # 0.04% of SELECTs at <16ms shows beside the 52% at <2ms
    tail = min(b["pct"] for b in model["histograms"]["select"] if b["count"])
    assert ax.get_ylim()[0] < tail
    marked = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"SELECT p50", "SELECT p99", "SELECT p99.9"} <= set(marked)


def test_percentiles_fall_in_the_bucket_that_holds_them():
    buckets = [{"pct": 40.0}, {"pct": 58.0}, {"pct": 1.5}, {"pct": 0.5}]
    where = dict(charts._percentile_positions(buckets))
    assert 0.5 < where[50.0] < 1.5 and 1.5 < where[99.0] < 2.5 and 2.5 <= where[99.9] < 3.5


@pytest.mark.parametrize("fixture", ["result_complete.json", "mysql/result_mariadb_10_11_pfs.json"])
def test_the_io_legend_does_not_cover_the_lines(fixture):
    # the legend sat in the lower right of the plot, over the reads/s and device lines (PostgreSQL and MariaDB)
    series = report_model.build(of(results.read(FIXTURES / fixture)))["series"]
    alone = charts.iops_figure(series)
    busy = charts.iops_figure({**series, "device_reads_per_s": [None if v is None else 100 * v
                                                                  for v in series["reads_per_s"]]})
    for fig in (alone, busy):
        (legend,) = fig.legends
        canvas = FigureCanvasAgg(fig)
        canvas.draw()  # as saving it does: the layout places the legend then
        drawn = legend.get_window_extent(canvas.get_renderer())
        for ax in fig.axes:  # nor the right axis with its own scale, nor either axis's labels
            assert not drawn.overlaps(ax.get_tightbbox(canvas.get_renderer())), fixture
        assert "physical reads/s" in [t.get_text() for t in legend.get_texts()]
    assert "device reads/s (right axis)" in [t.get_text() for t in busy.legends[0].get_texts()]
