"""SLOB's SQLNET_SERVICE_BASE/MAX: nodes when libpq knows the services, else ignored with the reason."""

from __future__ import annotations

from dbio import slob_services
from dbio.config import Sources, load_config

SERVICE_FILE = "[rac1]\nhost=db1\ndbname=bench\n\n[rac2]\nhost=db2\ndbname=bench\n"


def test_slob_s_service_names_and_a_service_file_s_sections():
    assert slob_services.service_names("rac", "3") == ["rac1", "rac2", "rac3"]
    assert slob_services.service_names("rac", "0") is None and slob_services.service_names("rac", "x") is None
    assert slob_services.sections(SERVICE_FILE) == {"rac1", "rac2"}
    files = slob_services.service_files({"PGSERVICEFILE": "/x/s.conf", "PGSYSCONFDIR": "/etc/pg"})
    assert [str(f) for f in files] == ["/x/s.conf", "/etc/pg/pg_service.conf"]


def test_services_libpq_defines_become_one_node_each(tmp_path):
    services = tmp_path / "pg_service.conf"
    services.write_text(SERVICE_FILE)
    dsns, why = slob_services.as_nodes("rac", "2", [services])
    assert dsns == ["service=rac1", "service=rac2"] and "dealt to in turn" in why
    dsns, why = slob_services.as_nodes("rac", "3", [services, tmp_path / "absent.conf"])
    assert dsns is None and "rac3 is not a libpq service" in why and "--dsn once per node" in why


def test_a_slob_conf_with_services_sets_the_nodes_or_says_why_not(tmp_path, monkeypatch):
    services = tmp_path / "pg_service.conf"
    services.write_text(SERVICE_FILE)
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    monkeypatch.setenv("PGSYSCONFDIR", str(tmp_path / "none"))
    conf = tmp_path / "slob.conf"
    conf.write_text("UPDATE_PCT=0\nSQLNET_SERVICE_BASE=rac\nSQLNET_SERVICE_MAX=2\n")
    config = load_config(Sources(env={}, cli={}, cwd=tmp_path, slob_conf=conf))
    assert config.connection.dsns == ("service=rac1", "service=rac2")
    assert any("one node per libpq service rac1, rac2" in n for n in config.notices)
    conf.write_text("UPDATE_PCT=0\nSQLNET_SERVICE_BASE=other\nSQLNET_SERVICE_MAX=2\n")
    config = load_config(Sources(env={}, cli={}, cwd=tmp_path, slob_conf=conf))
    assert config.connection.dsns == ()
    assert any("not used" in n and "other1, other2 are not libpq services" in n for n in config.notices)


def test_a_hostile_service_count_names_no_services_and_never_ends_in_an_internal_error(tmp_path):
    """SQLNET_SERVICE_MAX=99999999999 made dbio build a list of that many names (it ran until memory ran
    out); a superscript digit ('²' passes str.isdigit) or 5000 digits ended in "internal error"."""
    for count in ("²", "٣", "9" * 5000, "4097", "99999999999"):
        assert slob_services.service_names("rac", count) is None, count[:20]
        dsns, why = slob_services.as_nodes("rac", count, [tmp_path / "absent.conf"])
        assert dsns is None and "from 1 to 4,096" in why, why
    assert len(slob_services.service_names("rac", "4096")) == 4096
