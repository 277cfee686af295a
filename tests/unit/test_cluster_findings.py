"""What limited a multi-writer cluster's writes, judged on its figures (pure)."""

from dbio.report import cluster_findings
from dbio.result_records import of


def _ws(paused_pct=0.0, cert=0.0, bf=0.0, size=3.0):
    return {"flow_control_paused_pct": paused_pct, "cert_failures_per_s": cert, "bf_aborts_per_s": bf,
            "retries_per_s": cert + bf, "cluster_size_end": size}


def _result(nodes, total, updates=100.0, stopped=()):
    doc = {"figures": {"writesets": total, "load_profile": {"updates_per_s": updates}},
           "nodes": [{"name": name, "role": "primary", "figures": {"writesets": ws},
                      **({"stopped": {"at": 5.0}} if name in stopped else {})} for name, ws in nodes]}
    return of(doc)


def test_flow_control_named_beyond_its_limit_with_the_node_paused_most():
    r = _result([("node1", _ws(4.0)), ("node2", _ws(12.0))], {**_ws(8.0), "cluster_size_end": None})
    found = cluster_findings.flow_control(r)
    assert found is not None and "8.0% of the window" in found.message and "node2: 12.0%" in found.message
    assert cluster_findings.flow_control(_result([("node1", _ws(1.0))], _ws(4.9))) is None


def test_conflicts_named_as_a_share_of_the_updates():
    r = _result([("node1", _ws(cert=1.0, bf=1.0))], _ws(cert=1.5, bf=1.0), updates=100.0)
    found = cluster_findings.conflicts(r)
    assert found is not None and found.message.startswith("2.5% of UPDATEs met a conflict")
    assert cluster_findings.conflicts(_result([("node1", _ws())], _ws(cert=0.5, bf=0.4))) is None


def test_a_lost_node_with_the_quorum_kept_and_a_component_without_quorum():
    kept = _result([("node1", _ws(size=2)), ("node2", _ws(size=2)), ("node3", _ws(size=3))], _ws(),
                   stopped=("node3",))
    assert "the others kept a quorum (2 of 3 nodes)" in cluster_findings.quorum(kept).message
    lost = _result([("node1", _ws(size=1)), ("node2", _ws(size=2)), ("node3", _ws(size=3))], _ws())
    found = cluster_findings.quorum(lost)
    assert found.level == "warning" and "node1 was in a component of 1 of the 3 nodes" in found.message
    assert cluster_findings.quorum(_result([("node1", _ws()), ("node2", _ws())], _ws())) is None
