"""A managed Galera cluster's nodes as data: places, ports, option files, saved states (pure)."""

from pathlib import Path

import pytest

from dbio.engines.mysql.instance import galera_config as g


def _members(count=3):
    ports = g.assign_ports(count, list(range(40000, 40000 + 3 * count)))
    return [g.Member(name, Path(f"/i/{name}"), *p) for name, p in zip(g.names(count), ports)]


def test_nodes_are_placed_in_the_directories_given_then_inside_the_instance():
    planned = g.planned(Path("/i"), 3, (Path("/mnt/a"), Path("/mnt/b")))
    assert planned == [("node1", Path("/mnt/a/dbio-node1"), "/mnt/a"), ("node2", Path("/mnt/b/dbio-node2"), "/mnt/b"),
                       ("node3", Path("/i/node3"), None)]


def test_each_node_gets_three_distinct_ports_and_too_few_are_refused():
    ports = g.assign_ports(2, [5, 6, 6, 7, 8, 9, 10])
    assert ports == [(5, 6, 7), (8, 9, 10)]
    with pytest.raises(ValueError, match="6 free loopback ports"):
        g.assign_ports(2, [1, 2, 3, 3, 4])


def test_every_address_of_a_node_is_on_loopback_and_ist_has_its_own_port():
    members = _members()
    options = g.node_settings(members[1], members, "dbio-x", g.tls_files(Path("/i")))
    assert options["wsrep_cluster_address"] == "gcomm://127.0.0.1:40000,127.0.0.1:40003,127.0.0.1:40006"
    provider = dict(part.split("=", 1) for part in options["wsrep_provider_options"].split(";"))
    assert provider == {"base_host": "127.0.0.1", "base_port": "40003", "gmcast.listen_addr": "tcp://127.0.0.1:40003",
                        "ist.recv_addr": "127.0.0.1:40004", "socket.ssl": "yes",
                        "socket.ssl_ca": "/i/galera-tls/ca.pem", "socket.ssl_cert": "/i/galera-tls/node.pem",
                        "socket.ssl_key": "/i/galera-tls/node-key.pem"}
    assert options["wsrep_sst_receive_address"] == "127.0.0.1:40005"
    assert options["wsrep_node_address"] == "127.0.0.1:40003"


def test_galera_traffic_is_tls_by_the_clusters_own_ca_and_a_path_it_cannot_name_is_refused():
    tls = g.tls_files(Path("/i"))
    commands = g.tls_commands("/usr/bin/openssl", tls, "dbio-x")
    made = [c[c.index("-out") + 1] for c in commands]
    assert made == ["/i/galera-tls/ca.pem", "/i/galera-tls/node.csr", "/i/galera-tls/node.pem"]
    assert commands[2][commands[2].index("-CA") + 1] == str(tls.ca)  # the node's certificate signed by this CA
    assert all("-nodes" in c for c in commands[:2]) and all(c[0] == "/usr/bin/openssl" for c in commands)
    members = _members()
    with pytest.raises(ValueError, match="wsrep_provider_options"):
        g.node_settings(members[0], members, "dbio-x", g.tls_files(Path("/i;socket.ssl=no")))


def test_the_option_file_holds_the_command_line_options_and_refuses_anything_else():
    text = g.option_file(["--no-defaults", "--datadir=/i/node1/data", "--wsrep-on=ON"])
    assert text.splitlines()[1:] == ["[mysqld]", "datadir=/i/node1/data", "wsrep-on=ON"]
    with pytest.raises(ValueError):
        g.option_file(["--datadir=/x\n[client]"])
    with pytest.raises(ValueError):
        g.option_file(["datadir=/x"])


def test_a_member_from_the_record_round_trips_and_a_strange_one_is_refused():
    member = _members()[0]
    assert g.Member.from_dict(member.to_dict()) == member
    for bad in ({**member.to_dict(), "name": "../x"}, {**member.to_dict(), "galera_port": 0},
                {**member.to_dict(), "root": "relative"}, {"name": "node1"}, "node1"):
        with pytest.raises(ValueError):
            g.Member.from_dict(bad)


GRASTATE_CLEAN = """# GALERA saved state
version: 2.1
uuid:    a3b79586-ede1-11f1-aca9-778a999b3ae0
seqno:   17
safe_to_bootstrap: 1
"""
GRASTATE_CRASHED = """# GALERA saved state
version: 2.1
uuid:    a3b79586-ede1-11f1-aca9-778a999b3ae0
seqno:   -1
safe_to_bootstrap: 0
"""


def test_grastate_read_as_the_server_writes_it():
    assert g.parse_grastate(GRASTATE_CLEAN) == g.SavedState("a3b79586-ede1-11f1-aca9-778a999b3ae0", 17, True)
    assert g.parse_grastate(GRASTATE_CRASHED).seqno == -1
    assert g.parse_grastate("garbage") == g.SavedState(None, -1, False)


def test_the_recovered_position_is_the_last_the_log_names():
    log = ("2026-12-01 23:48:34 0 [Note] WSREP: Recovered position: a3b79586-ede1-11f1-aca9-778a999b3ae0:5\n"
           "2026-12-01 23:49:34 0 [Note] WSREP: Recovered position: a3b79586-ede1-11f1-aca9-778a999b3ae0:9\n")
    assert g.parse_recovered(log) == ("a3b79586-ede1-11f1-aca9-778a999b3ae0", 9)
    assert g.parse_recovered("nothing here") is None


def test_who_bootstraps_the_last_out_else_the_most_recent_position():
    clean, crashed = g.parse_grastate(GRASTATE_CLEAN), g.parse_grastate(GRASTATE_CRASHED)
    assert g.bootstrap_choice([None, None, None], [None, None, None]) == 0  # a new cluster: node1
    assert g.bootstrap_choice([crashed, clean, crashed], [None, None, None]) == 1
    assert g.bootstrap_choice([crashed, crashed, crashed], [4, 9, 9]) == 1  # the most recent, the first of equals
    assert g.bootstrap_choice([crashed, crashed, crashed], [None, None, None]) == 0


def test_the_sst_goes_through_stunnel_with_the_clusters_ca_both_ends_verified():
    """Issue 41: the rsync SST was plain. The SST script reads [sst] from the node's option file: tca, tcert and
    tkey (the cluster's) with ssl-mode=VERIFY_CA run rsync through stunnel, each end checking the other's."""
    tls = g.tls_files(Path("/i"))
    text = g.option_file(["--datadir=/i/node1/data"], g.sst_settings(tls))
    assert text.splitlines()[3:] == ["[sst]", "tca=/i/galera-tls/ca.pem", "tcert=/i/galera-tls/node.pem",
                                     "tkey=/i/galera-tls/node-key.pem", "ssl-mode=VERIFY_CA"]
    with pytest.raises(ValueError):
        g.option_file([], {"tca": "/x\n[mysqld]"})
    assert g.SST_PROGRAMS["stunnel"] == "stunnel4" and "openssl" in g.SST_PROGRAMS


def test_the_node_certificate_names_no_space_the_sst_script_would_split_at():
    commands = g.tls_commands("/usr/bin/openssl", g.tls_files(Path("/i")), "dbio-x")
    subject = commands[1][commands[1].index("-subj") + 1]
    assert subject == "/CN=dbio-x-node" and " " not in subject


def test_a_missing_sst_program_is_refused_naming_its_debian_package(monkeypatch):
    from dbio.engines.mysql.instance import galera
    from dbio.errors import UsageError

    monkeypatch.setattr(galera, "SST_PROGRAMS", {**g.SST_PROGRAMS, "no-such-stunnel-here": "stunnel4"})
    if not g.PROVIDER.exists():
        pytest.skip(f"no {g.PROVIDER} here: refused before the programs")
    with pytest.raises(UsageError) as refused:
        galera.require_galera()
    message = str(refused.value)
    assert "runs no-such-stunnel-here" in message and "apt-get install stunnel4" in message and "\n" not in message
