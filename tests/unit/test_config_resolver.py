"""The one configuration resolver (dbio/config_resolver.py): its layers in their documented order, the
facts taken once, and the results directory judged as given, before a link on it is followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbio import cli_config, config_resolver
from dbio.config import LAYERS, LOADED_ORIGIN, Sources
from dbio.engines.base import SetupRecord, SetupSpec
from dbio.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
LOADED = SetupRecord(setup_id="s1", spec=SetupSpec(262144, 2, 0, "random"), status="ready", started_at="")


def _settle(tmp_path: Path, *, cli_values=None, env=None, preset=None, shape=config_resolver.LOADED):
    sources = Sources(cli={"data_dir": str(tmp_path / "i"), **(cli_values or {})}, env=env or {}, cwd=tmp_path,
                      preset=preset or {}, discover=False)
    facts = config_resolver.Facts(remembered={"shared_buffers": "64MiB"}, loaded=LOADED, shape=shape)
    return config_resolver.settle(sources, facts)


def test_each_layer_overrides_those_below_it(tmp_path):
    said: list[str] = []
    sources = Sources(cli={"data_dir": str(tmp_path / "i")}, env={}, cwd=tmp_path, discover=False,
                      preset={"shared_buffers": "32MiB", "scale": "1GiB"})
    facts = config_resolver.Facts(remembered={"shared_buffers": "64MiB"}, loaded=LOADED, shape=config_resolver.LOADED)
    located = config_resolver.load_config(sources, check=False)
    config = config_resolver.settle(sources, facts, located, said.append)
    # the instance's record over the command's preset, the loaded shape over both
    assert config.instance.shared_buffers == 64 << 20
    assert (config.workload.scale, config.workload.schemas) == (262144, 2)
    assert config.origins["scale"] == LOADED_ORIGIN
    assert said == ["using the instance's shared_buffers 64 MiB, as it was last configured; give --shared-buffers "
                    "to change it",
                    "using the loaded data set (setup s1): scale 262,144 rows (2 GiB) x 2 schemas; give --scale "
                    "or --schemas to use a part of it"]
    # the environment over the loaded shape, a flag over the environment and the instance's record
    config = _settle(tmp_path, env={"DBIO_SCALE": "1GiB"}, cli_values={"shared_buffers": "128MiB"})
    assert (config.workload.scale, config.workload.schemas) == (131072, 2)
    assert config.instance.shared_buffers == 128 << 20
    config = _settle(tmp_path, env={"DBIO_SCALE": "1GiB"}, cli_values={"scale": "512MiB"})
    assert config.workload.scale == 65536 and config.origins["scale"] == "--scale"


def test_a_command_with_its_own_shape_takes_none_of_the_load(tmp_path):
    config = _settle(tmp_path, shape=config_resolver.NO_SHAPE)
    assert (config.workload.scale, config.workload.schemas) == (131072, 1)
    interrupted = SetupRecord(setup_id="s1", spec=LOADED.spec, status="loading", started_at="")
    finished = config_resolver.Facts(loaded=LOADED, shape=config_resolver.INTERRUPTED)
    sources = Sources(cli={"data_dir": str(tmp_path / "i")}, env={}, cwd=tmp_path, discover=False)
    assert config_resolver.settle(sources, finished).workload.schemas == 1  # dbio setup: a finished load stays
    unfinished = config_resolver.Facts(loaded=interrupted, shape=config_resolver.INTERRUPTED)
    assert config_resolver.settle(sources, unfinished).workload.schemas == 2  # ... an interrupted one is finished


def test_the_layers_are_the_ones_the_data_flow_names():
    text = (ROOT / "docs" / "internals.md").read_text()
    step = text.split("## Data flow of a run", 1)[1].split("\n2. ", 1)[0]
    words = " ".join(step.split())
    named = [layer.replace("DBIO_* environment", "`DBIO_*`") for layer in LAYERS]
    assert " < ".join(named) in words.replace(" (quickstart's)", "").replace(
        " (the settings options its record keeps)", "").replace(
        " (scale, schemas, scan table, key order of its setup record)", ""), words


@pytest.mark.skipif(os.geteuid() != 0, reason="making a link another user owns needs root")
def test_a_results_directory_through_another_user_s_link_is_refused_before_it_is_followed(tmp_path):
    # the link was resolved first and the place it led to trusted: its owner could swap it for one to anywhere
    real = tmp_path / "results"
    real.mkdir(mode=0o700)
    link = tmp_path / "via"
    link.symlink_to(real)
    os.lchown(link, 65534, 65534)
    params = {"results_dir": str(link), "data_dir": str(tmp_path / "none")}
    with pytest.raises(UsageError, match=rf"^results_dir {link}: {link} is a link owned by "):
        cli_config.build_config(dict(params), None, None, "run")
    os.lchown(link, 0, 0)  # the same link, root's own: taken as given
    assert cli_config.build_config(dict(params), None, None, "run").run.results_dir == link
    assert not (tmp_path / "none").exists()


def test_what_the_instance_remembers_is_said_before_a_rule_refuses_it(tmp_path):
    # shared_buffers 2 GiB, kept from a setup with --allow-cached, makes a run of the default scale measure memory:
    # the refusal names scale, and the line before it says where the cache came from
    from dbio.errors import ConfigErrors

    said: list[str] = []
    sources = Sources(cli={"data_dir": str(tmp_path / "i")}, env={}, cwd=tmp_path, discover=False)
    with pytest.raises(ConfigErrors, match="fits in shared_buffers"):
        config_resolver.settle(sources, config_resolver.Facts(remembered={"shared_buffers": "2GiB"}),
                               notify=said.append)
    assert said and said[0].startswith("using the instance's shared_buffers 2 GiB, as it was last configured")
