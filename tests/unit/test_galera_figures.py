"""A Galera node's status as counters, its window's write-set figures, and what limits a cluster (pure)."""

from dbio.engines import counters
from dbio.engines.mysql import stats, wsrep
from dbio.stats import writesets

# SHOW GLOBAL STATUS of a Galera node, as stats.read keeps it (lower-cased, numbers as floats)
STATUS = {"wsrep_replicated": 2016.0, "wsrep_replicated_bytes": 251_000.0, "wsrep_received": 3061.0,
          "wsrep_received_bytes": 380_000.0, "wsrep_local_cert_failures": 13.0, "wsrep_local_bf_aborts": 13.0,
          "wsrep_local_replays": 1.0, "wsrep_flow_control_paused_ns": 1.5e9, "wsrep_flow_control_sent": 4.0,
          "wsrep_flow_control_recv": 9.0, "wsrep_local_send_queue": 0.0, "wsrep_local_recv_queue": 2.0,
          "wsrep_last_committed": 5077.0, "wsrep_cluster_size": 3.0, "wsrep_local_state_comment": "Synced",
          "innodb_data_reads": 10.0, "innodb_page_size": 16384.0}


def _raw(**changed):
    return {"t": 100.0, "status": {**STATUS, **changed}}


def test_a_galera_nodes_status_normalizes_to_writeset_counters_and_queue_gauges():
    out = stats.normalize(_raw())
    assert counters.problems(out) == []
    assert out["writesets"]["replicated"] == 2016.0 and out["writesets"]["cert_failures"] == 13.0
    assert out["writesets"]["nodes"] == 1.0
    assert out["gauges"]["recv_queue"] == 2.0 and out["gauges"]["cluster_size"] == 3.0


def test_a_server_without_wsrep_has_no_writesets():
    plain = {k: v for k, v in STATUS.items() if not k.startswith("wsrep")}
    assert "writesets" not in stats.normalize({"t": 1.0, "status": plain})


def _window(begin, end, seconds=10.0, retries=None):
    d = {"writesets": {k: end["writesets"][k] - begin["writesets"][k] for k in begin["writesets"]}}
    totals = {} if retries is None else {"retries": retries}
    return writesets.derive(end, d, seconds, totals)


def test_a_windows_write_sets_per_second_and_flow_controls_share():
    begin = stats.normalize(_raw())
    end = stats.normalize(_raw(wsrep_replicated=2516.0, wsrep_received=3561.0, wsrep_local_cert_failures=23.0,
                               wsrep_flow_control_paused_ns=2.5e9))
    f = _window(begin, end, retries=12)
    assert f["replicated_per_s"] == 50.0 and f["received_per_s"] == 50.0 and f["applied_per_s"] == 100.0
    assert f["cert_failures_per_s"] == 1.0 and f["bf_aborts_per_s"] == 0.0 and f["conflicts"] == 10.0
    assert f["flow_control_paused_s"] == 1.0 and f["flow_control_paused_pct"] == 10.0
    assert f["retries_per_s"] == 1.2 and f["cluster_size_end"] == 3.0


def test_a_clusters_total_pause_is_the_mean_of_its_nodes_and_its_size_is_no_sum():
    nodes = [stats.normalize(_raw()), stats.normalize(_raw())]
    ends = [stats.normalize(_raw(wsrep_flow_control_paused_ns=2.5e9)),
            stats.normalize(_raw(wsrep_flow_control_paused_ns=4.5e9))]
    f = _window(counters.combine(nodes), counters.combine(ends))
    assert f["flow_control_paused_pct"] == 20.0  # (1 s + 3 s) / 2 nodes / 10 s
    assert f["cluster_size_end"] is None and f["nodes"] == 2.0


def test_no_figures_for_a_node_without_wsrep():
    assert writesets.derive({"t": 1.0}, {}, 10.0) is None


def _state(cluster="u1", state="Synced", status="Primary"):
    return wsrep.NodeState("node1", state, cluster, 3, status)


def test_a_node_is_recognised_only_with_wsrep_on():
    status = {"wsrep_local_state_comment": "Synced", "wsrep_cluster_state_uuid": "u1", "wsrep_cluster_size": "3",
              "wsrep_cluster_status": "Primary"}
    assert wsrep.state_of({"wsrep_on": "OFF"}, status) is None
    assert wsrep.state_of({"wsrep_on": "ON", "wsrep_node_name": "node1"}, status) == _state()


def test_a_node_not_synced_or_without_quorum_is_refused_in_one_line():
    import pytest

    from dbio.errors import UsageError

    wsrep.check_ready(_state(), "n1")
    wsrep.check_ready(None, "n1")
    with pytest.raises(UsageError, match="Donor/Desynced, not Synced"):
        wsrep.check_ready(_state(state="Donor/Desynced"), "n1")
    with pytest.raises(UsageError, match="without quorum"):
        wsrep.check_ready(_state(status="non-Primary"), "n1")


def test_the_nodes_of_a_run_are_one_clusters_or_none_is():
    from types import SimpleNamespace

    import pytest

    from dbio.errors import UsageError
    from dbio.jobs.run import check_one_cluster

    def info(name, cluster):
        return SimpleNamespace(description=name, cluster=cluster)

    check_one_cluster([info("a", "u1"), info("b", "u1")])
    check_one_cluster([info("a", None), info("b", None)])
    with pytest.raises(UsageError, match="b and a are nodes of different clusters"):
        check_one_cluster([info("a", "u1"), info("b", "u2")])
    with pytest.raises(UsageError, match="b is not a node of the cluster a belongs to"):
        check_one_cluster([info("a", "u1"), info("b", None)])


# SHOW GLOBAL STATUS of Debian's MariaDB 10.11 without a provider (wsrep built in, not a node): its wsrep part
NOT_A_NODE = {"wsrep_cluster_size": "0", "wsrep_cluster_state_uuid": "", "wsrep_cluster_status": "Disconnected",
              "wsrep_local_bf_aborts": "0", "wsrep_local_index": "18446744073709551615", "wsrep_ready": "OFF",
              "wsrep_local_state_comment": "", "Innodb_data_reads": "120", "Innodb_page_size": "16384"}


def test_a_server_built_with_wsrep_but_no_node_gives_readings_a_run_takes():
    from dbio.run.readings import refused

    shown = {k: v for k, v in NOT_A_NODE.items() if k in stats.STATUS}  # what SHOW ... WHERE IN (STATUS) returns
    raw = {"t": 1.0, "status": {k.lower(): stats._number(v) for k, v in shown.items()}, "others": {"active": 0}}
    assert refused(raw, stats.normalize) is None
    assert "writesets" not in stats.normalize(raw)
