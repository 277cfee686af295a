"""--metrics-port scraped by a real Prometheus server (Debian package `prometheus`): the engine's counters as
they are, at their readings' own times, so that PromQL's rate() over the window gives result.json's reads/s."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime

import pytest

from tests.integration.conftest import load_result, wait_for
from tests.integration.standby import free_port

PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="needs prometheus (Debian package `prometheus`)")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.read()


def _query(base: str, promql: str, at: float) -> list[dict]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql, "time": f"{at:.3f}"})
    answer = json.loads(_get(url))
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


@pytest.fixture
def prometheus(tmp_path):
    """A Prometheus server of the test's own, scraping a port chosen here every second."""
    target, web = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(f"global:\n  scrape_interval: 250ms\n  scrape_timeout: 200ms\nscrape_configs:\n"
                      f"  - job_name: dbio\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n")
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{web}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{web}"
    try:
        def ready() -> bool:
            try:
                return _get(f"{base}/-/ready").startswith(b"Prometheus")
            except OSError:
                return False
        wait_for(ready, timeout=60, what="prometheus to be ready")

        def scraping() -> bool:  # its first scrape comes seconds after it starts: the window must not open before
            targets = json.loads(_get(f"{base}/api/v1/targets"))["data"]["activeTargets"]
            return bool(targets) and not targets[0]["lastScrape"].startswith("0001")
        wait_for(scraping, timeout=60, what="prometheus to scrape")
        yield base, target
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_prometheus_rate_over_the_window_is_the_result_s_reads_per_s(instance, loaded_db, prometheus):
    base, port = prometheus
    proc = subprocess.Popen([sys.executable, "-m", "dbio", "run", *instance.args(loaded_db), "--scale", "32MiB",
                             "--warmup", "2s", "--run-time", "15s", "-t", "2", "--label", "scraped",
                             "--metrics-port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen_while_running = None
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:  # the endpoint answers while the run goes on
            try:
                seen_while_running = _get(f"http://127.0.0.1:{port}/metrics").decode()
                if "dbio_physical_reads_total{" in seen_while_running:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out + err
    assert f"metrics at http://127.0.0.1:{port}/metrics" in out + err
    assert seen_while_running and "dbio_phase{" in seen_while_running and 'label="scraped"' in seen_while_running
    with pytest.raises(OSError):  # stopped with the command
        _get(f"http://127.0.0.1:{port}/metrics")
    directory = next(instance.results.glob("*-scraped"))
    doc = load_result(directory)
    start = datetime.fromisoformat(doc["timeline"]["window_start"]).timestamp()
    end = datetime.fromisoformat(doc["timeline"]["window_end"]).timestamp()
    window = end - start
    expected = doc["figures"]["load_profile"]["physical_reads_per_s"]
    promql = f'sum(rate(dbio_physical_reads_total{{label="scraped"}}[{window * 1000:.0f}ms]))'
    (found,) = _query(base, promql, end)
    measured = float(found["value"][1])
    assert measured == pytest.approx(expected, rel=0.02), (measured, expected, window)
    # the statements' histogram is one: its count is the sessions' statements (slices that came back late added).
    # Read at its last scrape, not at the window's end: on a loaded host the last slices came back a second
    # after it (5% of the statements were missing at the end's instant); the count only grows.
    (count,) = _query(base, 'max_over_time(dbio_statement_latency_seconds_count{label="scraped",kind="select"}[5m])',
                      time.time())
    assert float(count["value"][1]) == pytest.approx(doc["totals"]["selects"], rel=0.05), count
