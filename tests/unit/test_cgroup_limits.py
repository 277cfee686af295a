"""The limits a server runs under, read from recorded cgroup files of both versions (collect/cgroup.py),
and the verdict's two rules on them (report/limit_findings.py)."""

import os
from pathlib import Path

import pytest

from dbio.collect import cgroup
from dbio.report import limit_findings
from dbio.result_records import of
from dbio.stats import figures

# A hybrid host (this machine kind): v1 controllers apart, an empty v2 hierarchy beside them.
HYBRID_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_MEMBERSHIP = "9:name=systemd:/\n7:blkio:/dbiotest\n4:memory:/process_api/5b56\n1:cpu:/dbiotest\n0::/\n"
# A v2-only host (systemd's unified layout), the server in a slice under a quota set on its parent.
V2_MOUNTS = "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
V2_MEMBERSHIP = "0::/system.slice/db.slice/postgres.service\n"


def files(tree: dict[str, str]):
    def read(path: Path) -> str:
        if str(path) not in tree:
            raise FileNotFoundError(path)
        return tree[str(path)]
    return read


def test_membership_and_mounts_of_a_hybrid_host():
    assert cgroup.parse_membership(HYBRID_MEMBERSHIP) == {
        "name=systemd": "/", "blkio": "/dbiotest", "memory": "/process_api/5b56", "cpu": "/dbiotest", "": "/"}
    assert cgroup.parse_mounts(HYBRID_MOUNTS) == {"cpu": ("/sys/fs/cgroup/cpu", "/"),
                                                  "blkio": ("/sys/fs/cgroup/blkio", "/"),
                                                  "": ("/sys/fs/cgroup/unified", "/")}


def test_v1_quota_and_read_limit():
    read = files({"/sys/fs/cgroup/cpu/dbiotest/cpu.cfs_quota_us": "50000\n",
                  "/sys/fs/cgroup/cpu/dbiotest/cpu.cfs_period_us": "100000\n",
                  "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
                  "/sys/fs/cgroup/blkio/dbiotest/blkio.throttle.read_iops_device": "254:0 1500\n",
                  "/sys/fs/cgroup/blkio/dbiotest/blkio.throttle.read_bps_device": "",
                  "/sys/fs/cgroup/blkio/dbiotest/blkio.throttle.write_bps_device": "254:0 10485760\n"})
    mounts, membership = cgroup.parse_mounts(HYBRID_MOUNTS), cgroup.parse_membership(HYBRID_MEMBERSHIP)
    assert cgroup.cpu_limit(mounts, membership, read) == {
        "cpus": 0.5, "cgroup": "v1 /dbiotest", "stat": "/sys/fs/cgroup/cpu/dbiotest/cpu.stat"}
    assert cgroup.io_limits(mounts, membership, read) == [
        {"device": "254:0", "cgroup": "v1 /dbiotest", "read_iops": 1500, "write_bps": 10485760}]


def test_v2_the_smallest_quota_of_the_ancestors_binds():
    base = "/sys/fs/cgroup/system.slice"
    read = files({f"{base}/db.slice/postgres.service/cpu.max": "max 100000\n",
                  f"{base}/db.slice/cpu.max": "150000 100000\n", f"{base}/cpu.max": "300000 100000\n",
                  f"{base}/db.slice/io.max": "8:0 rbps=max wbps=max riops=2000 wiops=max\n8:16 rbps=max\n"})
    mounts, membership = cgroup.parse_mounts(V2_MOUNTS), cgroup.parse_membership(V2_MEMBERSHIP)
    assert cgroup.cpu_limit(mounts, membership, read) == {
        "cpus": 1.5, "cgroup": "v2 /system.slice/db.slice", "stat": f"{base}/db.slice/cpu.stat"}
    assert cgroup.io_limits(mounts, membership, read) == [
        {"device": "8:0", "cgroup": "v2 /system.slice/db.slice", "read_iops": 2000}]


def test_no_quota_is_no_limit():
    read = files({"/sys/fs/cgroup/system.slice/db.slice/postgres.service/cpu.max": "max 100000\n"})
    assert cgroup.cpu_limit(cgroup.parse_mounts(V2_MOUNTS), cgroup.parse_membership(V2_MEMBERSHIP), read) is None
    assert cgroup.parse_cpu_max("max") is None and cgroup.parse_cpu_max("20000 100000") == 0.2


@pytest.mark.parametrize("text, seconds", [
    ("nr_periods 225\nnr_throttled 104\nthrottled_time 8499785729\nnr_bursts 0\nburst_time 0\n", 8.499785729),
    ("usage_usec 10\nuser_usec 5\nsystem_usec 5\nnr_periods 225\nnr_throttled 104\nthrottled_usec 8499785\n",
     8.499785)])
def test_cpu_stat_of_either_version(text, seconds):
    assert cgroup.parse_cpu_stat(text) == pytest.approx(
        {"periods": 225, "throttled_periods": 104, "throttled_seconds": seconds})


def test_cpu_stat_without_bandwidth_fields_is_refused():
    with pytest.raises(ValueError):
        cgroup.parse_cpu_stat("usage_usec 10\nuser_usec 5\nsystem_usec 5\n")


def test_throttling_in_the_window_is_a_share_of_the_quota_s_periods():
    begin = {"periods": 100, "throttled_periods": 10, "throttled_seconds": 1.0}
    end = {"periods": 180, "throttled_periods": 70, "throttled_seconds": 7.0}
    assert figures._throttling(begin, end) == {"server_cpu_throttled_seconds": 6.0,
                                               "server_cpu_throttled_periods_pct": 75.0}
    assert figures._throttling(None, end) == {"server_cpu_throttled_seconds": None,
                                              "server_cpu_throttled_periods_pct": None}


def doc(limits, throttled_pct=None, devices=("vda",)):
    return {"environment": {"host": {"cpus": 2}, "limits": limits,
                            "storage": {"data_directory": {"path": "/d", "diskstats_devices": list(devices)}}},
            "figures": {"cpu": {"server_cpu_throttled_periods_pct": throttled_pct}}}


QUOTA = {"cpu_limit": {"cpus": 0.5, "cgroup": "v1 /dbiotest"}, "io_limits": [], "cpus_allowed": 2, "cpus": 2}


def _judged(rule, document):
    """One of the verdict's rules on a document, typed as the verdict types it."""
    return rule(of(document))


def test_a_quota_that_bound_is_a_warning_and_one_that_did_not_is_noted():
    bound = _judged(limit_findings.cpu_limit, doc([QUOTA], 83.0))
    assert bound.level == "warning" and "at most 0.5 CPUs of this host's 2" in bound.message
    assert "83% of the quota's periods" in bound.message
    assert _judged(limit_findings.cpu_limit, doc([QUOTA], 0.0)).level == "info"


def test_an_affinity_to_fewer_cpus_than_the_host_has():
    pinned = {"cpu_limit": None, "io_limits": [], "cpus_allowed": 1, "cpus": 2}
    assert "may run on only 1 of this host's 2 CPUs" in _judged(limit_findings.cpu_limit, doc([pinned])).message
    assert _judged(limit_findings.cpu_limit, doc([{**pinned, "cpus_allowed": 2}])) is None


def test_an_io_limit_on_a_device_the_run_used():
    limited = {"cpu_limit": None, "cpus_allowed": 2, "cpus": 2, "io_limits": [
        {"device": "254:0", "name": "vda", "cgroup": "v1 /dbiotest", "read_iops": 1500, "read_bps": 50 << 20}]}
    found = _judged(limit_findings.io_limit, doc([limited]))
    assert found.level == "warning"
    assert "vda (254:0): 1,500 reads/s, 50 MiB/s read (cgroup v1 /dbiotest)" in found.message
    assert _judged(limit_findings.io_limit, doc([limited], devices=("sdb",))) is None  # another device's limit


def test_limits_of_real_processes_here():
    # whatever this host's cgroups are, reading this process's limits works and says nothing false
    import os
    for entry in cgroup.limits_of([os.getpid()]):
        assert entry["pids"] == 1 and entry["cpus"] == os.cpu_count()
        assert entry["cpu_limit"] is None or entry["cpu_limit"]["cpus"] > 0


def test_a_comparison_says_when_the_limits_differ():
    from dbio import result_records
    from dbio.report import compare_model

    limited = {"cpu_limit": {"cpus": 0.5, "cgroup": "v1 /db"}, "cpus_allowed": 2, "cpus": 2,
               "io_limits": [{"device": "254:0", "name": "vda", "read_iops": 1500}]}
    assert limit_findings.summary(of(doc([limited]))) == "CPU quota 0.5 (v1 /db); vda: 1,500 reads/s"
    assert limit_findings.summary(of(doc([]))) == "none"
    context = compare_model._context([("a", result_records.of(doc([limited]))), ("b", result_records.of(doc([])))])
    rows = context["tables"][0]["rows"]
    assert ["limits (cgroup, CPU affinity)", "CPU quota 0.5 (v1 /db); vda: 1,500 reads/s", "none"] in rows


def test_a_baseline_run_under_other_limits_than_the_server_is_said():
    limited = {"cpu_limit": {"cpus": 0.5, "cgroup": "v1 /db"}, "cpus_allowed": 2, "cpus": 2, "io_limits": []}
    both = doc([limited])
    both["baseline"] = {"runs": {}}
    found = _judged(limit_findings.baseline_outside_limits, both)
    assert found.level == "warning" and "fio ran under dbio's limits (none), not the server's (CPU quota 0.5" in \
        found.message
    both["environment"]["client_limits"] = [limited]  # dbio in the server's cgroup: like for like
    assert _judged(limit_findings.baseline_outside_limits, both) is None
    assert _judged(limit_findings.baseline_outside_limits, doc([limited])) is None  # no baseline


def test_the_storage_stack_section_lists_the_limits():
    from dbio.report import run_section

    limited = {"cpu_limit": {"cpus": 0.5, "cgroup": "v1 /db"}, "cpus_allowed": 2, "cpus": 2, "io_limits": []}
    assert ["Limits",
            "database server: CPU quota 0.5 (v1 /db); dbio: none"] in run_section.storage(of(doc([limited])))["pairs"]
    assert not [p for p in run_section.storage(of(doc([])))["pairs"] if p[0] == "Limits"]


def test_an_io_limit_on_the_disk_under_a_partition_or_a_dm_device():
    # io.max and blkio.throttle take whole disks only: the data on vda1 (or on LVM over vda) is limited by vda's
    limited = {"cpu_limit": None, "cpus_allowed": 2, "cpus": 2, "io_limits": [
        {"device": "254:0", "name": "vda", "cgroup": "v2 /db", "read_iops": 300}]}
    on_partition = doc([limited], devices=("vda1",))
    on_partition["environment"]["storage"]["data_directory"].update(device="vda1", disk="vda")
    assert "vda (254:0): 300 reads/s" in _judged(limit_findings.io_limit, on_partition).message
    on_lvm = doc([limited], devices=("dm-0",))
    on_lvm["environment"]["storage"]["data_directory"].update(
        device="dm-0", disk="dm-0", stack=[{"device": "dm-0", "disk": "dm-0"}, {"device": "vda2", "disk": "vda"}])
    assert "vda (254:0): 300 reads/s" in _judged(limit_findings.io_limit, on_lvm).message
    assert _judged(limit_findings.io_limit, doc([limited], devices=("sdb1",))) is None  # another disk's limit


def test_throttling_of_other_cgroups_at_the_window_s_ends_is_no_figure():
    # a quota set on a second cgroup in the window (or a node's cgroup gone): the end's sum holds counters the
    # begin's did not, and the difference is no throttling in the window
    begin = {"periods": 100, "throttled_periods": 10, "throttled_seconds": 1.0, "cgroups": ["/a/cpu.stat"]}
    end = {"periods": 100180, "throttled_periods": 90070, "throttled_seconds": 907.0,
           "cgroups": ["/a/cpu.stat", "/b/cpu.stat"]}
    assert figures._throttling(begin, end) == {"server_cpu_throttled_seconds": None,
                                               "server_cpu_throttled_periods_pct": None}
    assert figures._throttling(begin, {**end, "cgroups": ["/a/cpu.stat"]})["server_cpu_throttled_periods_pct"] \
        == pytest.approx(90060 / 100080 * 100)


def test_throttling_names_the_cgroups_it_summed(tmp_path):
    stat = tmp_path / "cpu.stat"
    stat.write_text("nr_periods 225\nnr_throttled 104\nthrottled_time 8499785729\n")
    limits = [{"cpu_limit": {"cpus": 0.5, "cgroup": "v1 /x", "stat": str(stat)}}]
    assert cgroup.throttling(limits) == {"periods": 225, "throttled_periods": 104,
                                         "throttled_seconds": pytest.approx(8.499785729), "cgroups": [str(stat)]}


def test_a_limit_set_during_the_window_is_the_result_s():
    from dbio.run import result_figures

    quota = {"pids": 9, "cpu_limit": {"cpus": 0.3, "cgroup": "v2 /db", "stat": "/sys/fs/cgroup/db/cpu.stat"},
             "io_limits": [], "cpus_allowed": 2, "cpus": 2}
    begin, end = {"os": {}}, {"os": {"server_limits": [quota]}}  # the quota was set after the window began
    assert result_figures.window_limits(begin, end, "server_limits") == [quota]
    fewer = {**quota, "pids": 7}  # two sessions ended: the same limit
    assert result_figures.window_limits({"os": {"server_limits": [quota]}}, {"os": {"server_limits": [fewer]}},
                                  "server_limits") == [quota]
    assert result_figures.window_limits(None, None, "server_limits") == []


def test_a_merge_of_hosts_keeps_each_host_s_limits():
    import copy

    from dbio import merge, result as results
    from dbio.report import verdict
    from tests.unit.test_merge_parts import OTHER_SERVER

    first = results.read(Path(__file__).parent.parent / "fixtures" / "result_format2.json")
    second = copy.deepcopy(OTHER_SERVER)  # another host's run on its own server, at the same start
    second["environment"]["limits"] = [{"pids": 3, "cpu_limit": {"cpus": 0.5, "cgroup": "v2 /db", "stat": "/x"},
                                        "cpus_allowed": 4, "cpus": 4, "io_limits": [
                                            {"device": "8:0", "name": "sda", "cgroup": "v2 /db", "read_iops": 300}]}]
    merged = merge.merge([("app1", first), ("app2", second)], "two hosts")
    found = {f.code: f.message for f in verdict.findings(of(merged))}
    assert "may use at most 0.5 CPUs of this host's 4 (the CPU quota of cgroup v2 /db, on app2)" in found["cpu_limit"]
    assert "sda (8:0): 300 reads/s (cgroup v2 /db, on app2)" in found["io_limit"]
    assert limit_findings.summary(of(merged)) == "app2: CPU quota 0.5 (v2 /db); app2: sda: 300 reads/s"


def test_a_cgroup_outside_the_mount_s_part_of_the_hierarchy_is_not_read_as_another():
    # a container's view (the mount's root /docker/abc): a process of /docker/abcdef is not in it, and one
    # outside the reader's cgroup namespace shows /../..; neither is read as a directory under the mount
    mounts = cgroup.parse_mounts("32 31 0:29 /docker/abc /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
                                 "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n")
    read = files({"/sys/fs/cgroup/cpu/def/x/cpu.cfs_quota_us": "10000\n",
                  "/sys/fs/cgroup/cpu/def/x/cpu.cfs_period_us": "100000\n",
                  "/sys/fs/cgroup/cpu/x/cpu.cfs_quota_us": "50000\n",
                  "/sys/fs/cgroup/cpu/x/cpu.cfs_period_us": "100000\n"})
    assert cgroup.cpu_limit(mounts, {"cpu": "/docker/abcdef/x"}, read) is None
    assert cgroup.cpu_limit(mounts, {"cpu": "/docker/abc/x"}, read)["cpus"] == 0.5
    assert cgroup.cpu_limit(mounts, {"": "/../../system.slice/pg.service"}, read) is None
    assert cgroup._directories(mounts, {"": "/../../system.slice/pg.service"}, "") == []


def test_the_throttled_seconds_are_named_as_summed_over_cpus():
    # cpu.stat's throttled time adds each CPU's run queue's: 2 CPUs held for a 10 s window read 20 s
    from dbio.stats import catalogue

    fig = catalogue.figure("server_cpu_throttled_seconds")
    assert "summed over CPUs" in fig.label and "exceed the window" in fig.how


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="an affinity narrower than the host needs two CPUs")
def test_a_real_process_pinned_to_one_cpu_is_read_with_its_affinity():
    # test_limits_of_real_processes_here checks nothing on a host without limits: this one makes one
    import subprocess

    child = subprocess.Popen(["sleep", "30"])
    try:
        os.sched_setaffinity(child.pid, {0})
        found = cgroup.limits_of([child.pid])
        assert [(e["pids"], e["cpus_allowed"], e["cpus"]) for e in found] == [(1, 1, os.cpu_count())]
        assert "1 CPUs allowed" in limit_findings.summary(of({"environment": {"limits": found}}))
    finally:
        child.kill()
        child.wait()
