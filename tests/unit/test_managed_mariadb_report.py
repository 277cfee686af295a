"""The managed MariaDB's report: the data set the Run section gives is the one the verdict judges (a row a
16 KiB InnoDB page, not 8 KiB), and the server is called what it is, dbio's managed instance, not embedded."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dbio import report
from dbio import result as results
from dbio.result_records import of

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mysql" / "result_mariadb_10_11_pfs.json"


def _managed_run(tmp_path: Path) -> dict:
    """The recorded MariaDB run as dbio's managed instance with 16 KiB pages gives it today: its data set a
    16 KiB page a row (run/assemble), the capabilities as a result written before own_instance was declared."""
    doc = json.loads(FIXTURE.read_text())
    doc["config"]["connection"] = {"dsn": None, "dbname": "dbio", "embedded": True}
    w = doc["config"]["workload"]
    doc["figures"]["validity"]["data_bytes"] = w["scale"] * w["schemas"] * 16384
    assert doc["capabilities"]["page_bytes"] == 16384 and "own_instance" not in doc["capabilities"]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    return results.read(path)


def test_the_run_section_gives_the_data_set_the_verdict_judges(tmp_path):
    # "Data set 1 GiB per schema" above a verdict of "data set 2 GiB = ...x innodb_buffer_pool_size"
    text = report.render(of(_managed_run(tmp_path)), "text")
    judged = re.search(r"data set (\S+ \S+) = [\d.]+x innodb_buffer_pool_size", text).group(1)
    line = next(line for line in text.splitlines() if line.strip().startswith("Data set "))
    assert judged == "128 MiB" and f"128 MiB per schema x 1 = {judged}, 8,192 rows of a 16 KiB page each" in line


def test_the_managed_server_is_not_called_embedded(tmp_path):
    text = report.render(of(_managed_run(tmp_path)), "text")
    server = next(line for line in text.splitlines() if line.strip().startswith("Server "))
    assert server.endswith("(managed)") and "embedded" not in server
    pg = report.render(of(results.read(FIXTURE.parents[1] / "result_complete.json")), "text")
    assert next(line for line in pg.splitlines() if line.strip().startswith("Server ")).endswith("(embedded)")
