import json
from pathlib import Path

import pytest

from dbio import result
from dbio.errors import UsageError


def test_reads_a_run_directory_or_its_file(tmp_path):
    doc = {"format": "dbio-result", "format_version": 2, "status": "complete", "config": {}, "figures": {},
           "nodes": [{"name": "node1", "role": "primary"}]}
    result.write(tmp_path, doc)
    assert result.read(tmp_path) == doc
    assert result.read(tmp_path / "result.json") == doc
    assert not (tmp_path / "result.json.tmp").exists()


def test_a_format_1_result_reads_as_its_one_node():
    doc = json.loads((Path(__file__).parent.parent / "fixtures" / "result_complete.json").read_text())
    assert doc["format_version"] == 1 and "nodes" not in doc
    read = result.with_nodes(doc)
    (node,) = read["nodes"]
    assert node["name"] == result.ONLY_NODE and node["role"] == "primary"
    completed = result.completed(doc)  # with the facts dbio 0.1 did not record (its engine fills them in)
    assert node["figures"] == completed["figures"] and node["capabilities"] == completed["capabilities"]
    assert node["capabilities"]["cache_name"] == "shared_buffers" and "shared_buffers_bytes" not in str(node["figures"])
    assert read["snapshots"]["begin"]["nodes"] == {result.ONLY_NODE: doc["snapshots"]["begin"]["engine"]}
    assert read["format_version"] == 1


@pytest.mark.parametrize("content, fragment", [
    ('{"format": "dbio-result", "format_version": 1, "status": "comp', "not valid JSON"),
    ('{"format": "something-else"}', "is not a dbio result"),
    ('{"format": "dbio-result", "format_version": 99, "status": "complete", "config": {}, "figures": {}}',
     "result format 99, from a newer dbio"),
    ('{"format": "dbio-result", "format_version": 1, "status": "complete"}', "lacks config, figures"),
    ("[1, 2]", "is not a dbio result"),
])
def test_bad_result_files_get_one_clear_line(tmp_path, content, fragment):
    path = tmp_path / "result.json"
    path.write_text(content)
    with pytest.raises(UsageError) as exc:
        result.read(path)
    assert fragment in str(exc.value) and exc.value.exit_code == 2 and "\n" not in str(exc.value)


def test_missing_result(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        result.read(tmp_path / "nope")


def test_samples_survive_a_torn_last_line(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps({"k": 1}) + "\n" + json.dumps({"k": 2}) + "\n" + '{"k": 3, "eng')
    assert [s["k"] for s in result.read_samples(path)] == [1, 2]
