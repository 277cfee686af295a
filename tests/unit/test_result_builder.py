"""The tests' result builder sets what it is told and nothing else, on a fresh copy each time."""

from tests.result_builder import ABSENT, a_document, a_result


def test_an_override_sets_its_path_and_leaves_the_fixture_as_recorded():
    base = a_document()
    changed = a_document(figures__latency__avg_read_us=310.0, status="interrupted")
    assert changed["figures"]["latency"]["avg_read_us"] == 310.0 and changed["status"] == "interrupted"
    assert base["figures"]["latency"]["avg_read_us"] != 310.0 and a_document() == base
    changed["figures"]["latency"]["avg_read_us"] = 1.0
    assert a_document()["figures"]["latency"] == base["figures"]["latency"]  # each call a fresh copy
    assert {k: v for k, v in changed.items() if k not in ("figures", "status")} == \
        {k: v for k, v in base.items() if k not in ("figures", "status")}


def test_absent_removes_a_key_and_a_missing_mapping_is_made():
    assert "stalls" not in a_document(stalls=ABSENT)
    assert a_document(cluster__nodes=2)["cluster"]["nodes"] == 2


def test_the_result_is_typed_as_a_report_reads_it():
    r = a_result("format2", label="typed", config__workload__sessions=3)
    assert r.label == "typed" and r.config.sessions == 3 and r.nodes
