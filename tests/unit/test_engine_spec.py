"""An engine registered from the tests (tests/fake_engine.SPEC), not from dbio/engines/: through dbio's real
registration path (registry.register) and commands (setup with load.py, run, teardown), every member of
the engine protocol and of the optional groups its Features declare is called. What the pipeline does not
reach with this engine is called here, each with what it must answer."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any, Protocol

import pytest

from dbio import engines
from dbio import target as targets
from dbio.commands import admin
from dbio.jobs import run as run_job
from dbio.jobs import setup as setup_job
from dbio.config import Sources, load_config
from dbio.engines import base, registry
from dbio.engines.base import ProbeRead, SetupSpec, Teardown
from dbio.engines.spec import PROTOCOL_VERSION, Features
from dbio.errors import UsageError
from dbio.ui import UI
from tests import fake_engine

DSN = "fake://one"


def members(protocol: type) -> set[str]:
    """A protocol's members, its groups' included: methods, properties and declared attributes."""
    out: set[str] = set()
    for cls in protocol.__mro__:
        if cls is Protocol or not getattr(cls, "_is_protocol", False):
            continue
        out |= {name for name in [*vars(cls), *getattr(cls, "__annotations__", {})] if not name.startswith("_")}
    return out


REQUIRED = members(base.Engine)
OPTIONAL = {"read_probe": members(base.ReadProbing), "operations": members(base.TimedOperations)}
# members the pipeline below does not call with this engine: a server in recovery, a connection given up,
# a cancelled load or statement, a read-only node's barrier, host CPU of a server elsewhere, a raw-device baseline
DRIVEN_HERE = {"wait_while_recovering", "abandon", "describe_target", "cancel", "load_error",
               "keep_default_schema_out", "has_workload", "server_clock", "release_barrier", "init_session",
               "cancel_statement", "flush_stats", "is_cancelled", "backend_pid", "background_pids",
               "read_helper_pids", "data_files", "redo_sync_rate", "settle", "verify"}


class Recorder:
    """An engine as the pipeline sees it, noting each member asked for."""

    def __init__(self, engine: fake_engine.FakeEngine, called: set[str]):
        self._engine, self._called = engine, called

    def __getattr__(self, name: str) -> Any:
        self._called.add(name)
        return getattr(self._engine, name)


@pytest.fixture
def called(tmp_path):
    """The fake engine registered (its resolve recording every member asked for), then forgotten."""
    seen: set[str] = set()

    def resolve(config: Any, **how: Any) -> tuple[Any, str, None]:
        engine, conninfo, instance = fake_engine.SPEC.resolve(config, **how)
        return Recorder(engine, seen), conninfo, instance

    registry.register(dataclasses.replace(fake_engine.SPEC, resolve=resolve))
    try:
        yield seen
    finally:
        registry.unregister(fake_engine.SPEC.name)
        fake_engine.SERVERS.clear()


def _config(tmp_path: Path, dsns: tuple[str, ...] = (DSN,), **cli: Any):
    options = {"schemas": 1, "threads_per_schema": 2, "scale": 2000, "run_time": 2, "warmup": 1,
               "results_dir": str(tmp_path / "results"), "allow_cached": True, "work_unit": 8, **cli}
    config = load_config(Sources(env={}, cli=options, cwd=tmp_path, discover=False))
    # the option table offers the engines of engine_table.py; a registered one is chosen as a config would name it
    return dataclasses.replace(config, connection=dataclasses.replace(config.connection, engine="fake", dsns=dsns),
                               spec=registry.entry("fake"))


def test_the_protocol_is_its_groups_and_the_test_engine_has_every_member():
    groups = (base.Connecting, base.Loading, base.WorkloadControl, base.Sessions, base.Monitoring, base.Maintenance)
    assert REQUIRED == set().union(*(members(g) for g in groups))
    assert {"connect", "call_slice", "snapshot", "normalize", "teardown", "features", "filler_bytes"} <= REQUIRED
    assert OPTIONAL["read_probe"] == {"read_probe_method", "read_probe_connect", "read_probe"}
    assert not REQUIRED & OPTIONAL["read_probe"] and not REQUIRED & OPTIONAL["operations"]
    missing = [name for name in REQUIRED | OPTIONAL["read_probe"] if not hasattr(fake_engine.FakeEngine, name)]
    assert missing == []
    assert fake_engine.FakeEngine.features == fake_engine.SPEC.features == Features(read_probe=True)


def test_a_registered_engine_is_known_by_its_name_and_forgotten(called):
    spec = registry.entry("fake")
    assert registry.names()[-1] == "fake" and spec.protocol == PROTOCOL_VERSION
    assert registry.find("fake") is spec and registry.owner_of_dsn("fake://two") == "fake"
    assert engines.complete_result({"capabilities": {"engine": "fake"}, "x": 1}) == {"capabilities": {"engine": "fake"},
                                                                                      "x": 1}
    with pytest.raises(ValueError, match="registered already"):
        registry.register(fake_engine.SPEC)
    with pytest.raises(ValueError, match="registered already"):
        registry.register(dataclasses.replace(fake_engine.SPEC, name="postgresql"))
    with pytest.raises(ValueError, match=f"implements engine protocol {PROTOCOL_VERSION + 1}; this dbio implements "
                                         f"{PROTOCOL_VERSION}"):
        registry.register(dataclasses.replace(fake_engine.SPEC, name="later", protocol=PROTOCOL_VERSION + 1))
    assert "later" not in registry.names()
    registry.unregister("fake")
    with pytest.raises(UsageError, match="unknown engine 'fake'"):
        registry.entry("fake")
    assert registry.find("fake") is None and registry.names() == ("postgresql", "mysql")


def test_an_engine_without_a_managed_instance_says_so_in_one_line(called, tmp_path):
    config = _config(tmp_path, dsns=())
    with pytest.raises(UsageError) as refused:
        targets.resolve(config, purpose="run", sessions=1, notify=lambda _: None)
    assert str(refused.value) == "the fake engine has no managed instance; name its server with --dsn fake://NAME"
    assert [str(e) for e in registry.entry("fake").check(config)] == [
        "dsn = : the fake engine has no managed instance; give --dsn fake://NAME"]
    found = targets.resolve(_config(tmp_path), purpose="run", sessions=1, notify=lambda _: None)
    assert found.instance is None and not found.embedded and targets.with_standbys(config, found.instance) is None


def test_the_pipeline_through_the_registry_calls_every_member(called, tmp_path):
    ui = UI(quiet=True)
    config = _config(tmp_path, update_pct=25)
    record = setup_job.setup(config, ui)
    assert record.status == "ready" and record.spec.scale == 2000
    outcome = run_job.run(config, ui)
    assert outcome.status == "complete", outcome.document["status_reason"]
    assert outcome.document["capabilities"]["engine"] == "fake"
    assert outcome.document["figures"]["load_profile"]["updates_per_s"] > 0
    admin.teardown(config, ui, yes=True)
    assert fake_engine.SERVERS[DSN].setup is None and not fake_engine.SERVERS[DSN].connections
    left = (REQUIRED | OPTIONAL["read_probe"]) - called
    assert left <= DRIVEN_HERE, f"the pipeline no longer calls {sorted(left - DRIVEN_HERE)}"

    # what the pipeline did not call with this engine, called as dbio calls it, with what it must answer
    engine: Any = Recorder(fake_engine.FakeEngine(fake_engine.SERVERS[DSN]), called)
    engine.wait_while_recovering(DSN, ui.note)
    assert engine.describe_target(DSN) == "Fake 1.0 (in process)"
    conn = engine.connect(DSN, application_name="dbio:test")
    info = engine.probe(conn)
    assert engine.keep_default_schema_out(conn) in (True, False)
    spec = SetupSpec(2000, 1, 0, config.workload.key_order)
    record = engine.begin_setup(conn, spec, setup_id="again", server_version=info.caps.server_version)
    engine.cancel(conn)
    failure = RuntimeError("a stream failed")
    assert engine.load_error(failure, 0, 1) is failure
    assert [c.ok for c in engine.verify(conn, engine.finish_setup(conn, record))] == [True]
    assert engine.settle(conn) is None  # the data set at rest
    engine.install_workload(conn)
    assert engine.has_workload(conn) is True
    assert abs(engine.server_clock(conn) - time.time()) < 60
    engine.prepare_run(conn, 7, {"slice_seconds": 1.0})
    engine.hold_barrier(conn, 7)
    engine.release_barrier(conn, 7)
    assert 7 not in fake_engine.SERVERS[DSN].runs
    assert engine.data_files(conn, info) == [] and "syncs_per_s" in engine.redo_sync_rate(info, str(tmp_path), 1)
    assert isinstance(engine.teardown(conn), Teardown)
    engine.abandon(conn)
    assert conn.closed and conn not in fake_engine.SERVERS[DSN].connections

    async def sessions() -> None:
        session = await engine.aconnect(DSN, application_name="dbio:1:1")
        assert await engine.init_session(session, 1, "index") == session.pid == await engine.backend_pid(session)
        assert await engine.cancel_statement(session, 1.0) is True
        assert engine.is_cancelled(RuntimeError("another error")) is False
        await engine.flush_stats(session)
        assert await engine.background_pids(session, [session.pid]) == []
        assert await engine.read_helper_pids(session) == []
        probe, pid = await engine.read_probe_connect(DSN, "index")
        assert await engine.read_probe(probe, [1, 2]) == [ProbeRead(blocks_read=1, read_us=fake_engine.READ_US)] * 2
        await engine.aclose(probe)
        await engine.aclose(session)

    asyncio.run(sessions())
    assert not fake_engine.SERVERS[DSN].connections
    assert REQUIRED | OPTIONAL["read_probe"] <= called
