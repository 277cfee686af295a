"""dbio.toml and slob.conf are read once per command (issue 35, item 2): every layer made of them, the
request's and the final one, and dbio.toml's [cost] table come from that one read. Counted on the real
reader (trust.read_trusted), each file a real one in a temporary directory."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dbio import config_resolver, trust
from dbio.config import Sources
from dbio.errors import ConfigErrors


@pytest.fixture
def reads(monkeypatch) -> Counter[Path]:
    """How many times each file was read by the one reader of configuration files, which still reads it."""
    counted: Counter[Path] = Counter()
    real = trust.read_trusted

    def counting(path: Path, *args, **kwargs):
        counted[Path(path)] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(trust, "read_trusted", counting)
    return counted


def _files(tmp_path: Path, toml: str = "") -> tuple[Path, Path]:
    config = tmp_path / "dbio.toml"
    config.write_text(toml or '[workload]\nupdate_pct = 20\n[cost]\ninstance = "300/month"\n')
    slob = tmp_path / "slob.conf"
    slob.write_text("RUN_TIME=120\nWORK_UNIT=16\n")
    for path in (config, slob):
        path.chmod(0o600)
    return config, slob


def test_a_run_reads_each_configuration_file_once(tmp_path, reads):
    config_file, slob = _files(tmp_path)
    sources = Sources(config_file=config_file, slob_conf=slob, env={}, cwd=tmp_path,
                      cli={"data_dir": str(tmp_path / "no-instance"), "results_dir": str(tmp_path / "results")})
    config = config_resolver.resolve_config(sources, command="run", shape=config_resolver.LOADED,
                                            writes_results=True, request_check=lambda located: None)
    assert reads == {config_file: 1, slob: 1}
    # ... and every layer of that one read is in the Config: the toml's, slob.conf's and the [cost] table
    assert (config.workload.update_pct, config.workload.run_time, config.workload.work_unit) == (20, 120.0, 16)
    assert config.cost == {"instance": "300/month"} and config.files == (config_file, slob)


def test_a_discovered_dbio_toml_is_read_once_too(tmp_path, reads):
    config_file, _ = _files(tmp_path)
    sources = Sources(env={}, cwd=tmp_path, cli={"data_dir": str(tmp_path / "no-instance")})
    config = config_resolver.resolve_config(sources, command="setup")
    assert reads == {config_file: 1} and config.workload.update_pct == 20


def test_a_file_that_does_not_read_is_refused_once(tmp_path, reads):
    config_file, _ = _files(tmp_path, toml="[workload]\nupdate_pct = 200\n")
    sources = Sources(config_file=config_file, env={}, cwd=tmp_path, cli={"data_dir": str(tmp_path / "x")})
    with pytest.raises(ConfigErrors) as refused:
        config_resolver.resolve_config(sources, command="run", shape=config_resolver.LOADED)
    assert reads == {config_file: 1}
    assert [e for e in refused.value.errors if "update_pct" in str(e)], refused.value.errors
