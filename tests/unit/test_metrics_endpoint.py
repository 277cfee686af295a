"""--metrics-port: the exposition of a run's latest sample (the engine's counters at their readings' times, the
statements' histogram cumulative), served over HTTP for the command's life and refused in one line when the
port is taken. The scrape by a real Prometheus server is tests/integration/test_metrics.py."""

from __future__ import annotations

import socket
import urllib.request
from types import SimpleNamespace

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dbio import metrics
from dbio.errors import UsageError
from dbio.run.phase import Phase
from dbio.ui import UI

BOUNDS = [64.0, 100.0, 1000.0]  # us: four buckets, the last open; 100 us is no edge a scrape carries


def _sample(t: float, reads: float, hist: dict[str, int], late: dict | None = None, k: int = 1) -> dict:
    """A sample as samples.jsonl holds it, its counters already neutral (the test's normalize keeps them)."""
    counters = {"t": t, "data": {"reads": reads, "read_bytes": reads * 8192, "read_time_ms": reads * 0.2},
                "wal": {"bytes": 1000.0, "syncs": None}, "database": {"commits": 7.0}}
    sample = {"k": k, "t": t, "nodes": {"node1": counters, "node2": {"t": t}},  # node2: none of these counters
              "os": {"t": t + 0.01, "stat": {"user": 10.0, "steal": 0.5}, "disks": {"vda": {"reads": 99.0,
                                                                                              "sectors_read": 8.0}}},
              "statements": {"select": {"count": sum(hist.values()), "sum_us": 500.0, "max_us": 900.0, "hist": hist}}}
    if late:
        sample["late_statements"] = late
    return sample


def _view(begin: dict | None = None, rate_per_s: float | None = None) -> SimpleNamespace:
    """What the listener reads of the run (run/listeners.RunView): the window's first reading, its plan's rate."""
    return SimpleNamespace(window=SimpleNamespace(begin=begin),
                           plan=SimpleNamespace(control=SimpleNamespace(rate_per_s=rate_per_s), sessions=4))


def _listener(endpoint: metrics.Endpoint) -> metrics.MetricsListener:
    return metrics.MetricsListener(endpoint, lambda node, raw: raw)


def _families(endpoint: metrics.Endpoint) -> dict:
    body = urllib.request.urlopen(f"http://127.0.0.1:{endpoint.port}/metrics", timeout=5).read().decode()
    return {f.name: f for f in text_string_to_metric_families(body)}


@pytest.fixture
def endpoint():
    served = metrics.Endpoint("127.0.0.1", 0)
    served.begin(42, "nightly", "", BOUNDS)
    yield served
    served.close()


def test_counters_are_the_engine_s_at_the_reading_s_time_and_statements_add_up(endpoint):
    listener = _listener(endpoint)
    listener.phase(Phase.WARMUP, _view())
    phases = {s.labels["phase"]: s.value for s in _families(endpoint)["dbio_phase"].samples}
    assert phases["warm-up"] == 1.0 and sum(phases.values()) == 1.0
    listener.sample(_sample(999.0, 4000.0, {"0": 9}, k=0))  # the reading before the start: not shown
    listener.phase(Phase.WINDOW, _view(_sample(1000.0, 5000.0, {"0": 3, "1": 1})))
    listener.sample(_sample(1001.0, 6200.0, {"1": 2, "2": 1}, late={"3": {"select": {"count": 1, "sum_us": 50.0,
                                                                                      "max_us": 50.0,
                                                                                      "hist": {"0": 1}}}}))
    listener.sample({"k": 2, "t": 1002.0, "missing": True, "waits": {}})  # a gap: neither counted nor shown
    listener.told("node2 lost")
    families = _families(endpoint)
    (reads,) = families["dbio_physical_reads"].samples
    assert reads.value == 6200.0 and reads.timestamp == 1001.0  # the latest reading, as the engine counted
    assert reads.labels == {"run_id": "42", "label": "nightly", "step": "", "node": "node1"}  # node2 gave none
    assert families["dbio_read_wait_seconds"].samples[0].value == pytest.approx(6200 * 0.2 / 1000)
    assert [s.value for s in families["dbio_wal_syncs"].samples] == []  # not measured: absent, never 0
    assert families["dbio_device_read_bytes"].samples[0].value == 8.0 * 512
    buckets = {s.labels["le"]: s.value for s in families["dbio_statement_latency_seconds"].samples
               if s.name.endswith("_bucket")}
    # 3+1+2+1+1 statements over two samples and a late slice: cumulative buckets in seconds, at the edges a
    # scrape carries (powers of two and AWR's edges: the 100 us one is left out, its count in the next)
    assert buckets == {"6.4e-05": 4.0, "0.001": 8.0, "+Inf": 8.0}
    assert families["dbio_statements"].samples[0].value == 8.0
    assert families["dbio_samples"].samples[0].value == 2.0  # the window's first reading and one on time
    phases = {s.labels["phase"]: s.value for s in families["dbio_phase"].samples}
    assert phases["measuring"] == 1.0 and sum(phases.values()) == 1.0
    assert families["dbio_events"].samples[0].value == 1.0
    listener.phase(Phase.DRAIN, _view())  # measured until the end reading
    assert {s.labels["phase"]: s.value for s in _families(endpoint)["dbio_phase"].samples}["measuring"] == 1.0
    listener.phase(Phase.CLEAN_UP, _view())  # the window is over: shown while the result is written
    phases = {s.labels["phase"]: s.value for s in _families(endpoint)["dbio_phase"].samples}
    assert phases["finishing"] == 1.0 and phases["measuring"] == 0.0


def test_a_new_step_replaces_the_last_one_s_series(endpoint):
    _listener(endpoint).sample(_sample(1000.0, 5000.0, {"0": 1}))
    endpoint.begin(43, "nightly", "02-t4", BOUNDS)
    families = _families(endpoint)
    assert families["dbio_physical_reads"].samples == [] and families["dbio_statements"].samples == []
    assert families["dbio_events"].samples[0].labels["step"] == "02-t4"


def test_the_endpoint_lives_as_long_as_the_command_and_a_taken_port_is_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UsageError) as refused:
            metrics.Endpoint("127.0.0.1", port)
        assert f"--metrics-port {port} on 127.0.0.1" in str(refused.value)
    ui = UI(quiet=True)
    with metrics.serving(0, "127.0.0.1", ui) as served:
        assert ui.metrics is served
        urllib.request.urlopen(f"http://127.0.0.1:{served.port}/metrics", timeout=5).read()
    assert ui.metrics is None
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{served.port}/metrics", timeout=2).read()
    with metrics.serving(None, "127.0.0.1", ui) as nothing:
        assert nothing is None and ui.metrics is None


def test_a_rate_s_asked_statements_and_its_schedule_s_histograms_are_their_own_families(endpoint):
    listener = _listener(endpoint)
    listener.phase(Phase.WARMUP, _view())
    assert "dbio_rate_asked_per_second" not in _families(endpoint)  # a closed loop has none
    listener.phase(Phase.WINDOW, _view(rate_per_s=250.0))
    sample = _sample(1001.0, 6200.0, {"1": 2})
    sample["statements"].update({"intended": {"count": 2, "sum_us": 300.0, "max_us": 200.0, "hist": {"2": 2}},
                                 "lag": {"count": 2, "sum_us": 100.0, "max_us": 60.0, "hist": {"0": 2}}})
    listener.sample(sample)
    families = _families(endpoint)
    assert families["dbio_rate_asked_per_second"].samples[0].value == 1000.0  # 250/s for each of 4 sessions
    lag = {s.labels["le"]: s.value for s in families["dbio_schedule_lag_seconds"].samples if s.name.endswith("_bucket")}
    assert lag == {"6.4e-05": 2.0, "0.001": 2.0, "+Inf": 2.0}
    intended = {s.name: s.value for s in families["dbio_intended_latency_seconds"].samples}
    assert intended["dbio_intended_latency_seconds_sum"] == pytest.approx(300e-6)
    # the schedule's kinds are no statements of their own
    assert [s.labels["kind"] for s in families["dbio_statements"].samples] == ["select"]


def test_an_event_in_progress_is_1_and_0_otherwise(endpoint):
    listener = _listener(endpoint)
    assert "dbio_event_active" not in _families(endpoint)  # a run without --event: no such series
    listener.disrupting(("checkpoint", "stall"), ())
    active = {s.labels["action"]: s.value for s in _families(endpoint)["dbio_event_active"].samples}
    assert active == {"checkpoint": 0.0, "stall": 0.0}
    listener.disrupting(("checkpoint", "stall"), ((2, "stall:3s@standby1"),))
    active = {s.labels["action"]: s.value for s in _families(endpoint)["dbio_event_active"].samples}
    assert active == {"checkpoint": 0.0, "stall": 1.0}
    listener.disrupting(("checkpoint", "stall"), ())
    assert {s.value for s in _families(endpoint)["dbio_event_active"].samples} == {0.0}
    endpoint.begin(43, "next", "", BOUNDS)  # the next run's series replace these
    assert "dbio_event_active" not in _families(endpoint)
