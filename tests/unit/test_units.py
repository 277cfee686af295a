import pytest

from dbio import units


@pytest.mark.parametrize("text, expected", [
    ("4GiB", 4 << 30), ("4GB", 4 << 30), ("4G", 4 << 30), ("800M", 800 << 20), ("800MB", 800 << 20),
    ("512KiB", 512 << 10), ("1T", 1 << 40), ("0.5GiB", 512 << 20), (" 16 MiB ", 16 << 20), (8192, 8192),
    ("8192", 8192), ("1.5k", 1536),
])
def test_parse_size(text, expected):
    assert units.parse_size(text) == expected


@pytest.mark.parametrize("bad", ["4XB", "GiB", "", "-1G", True, 1.5, "1.5"])
def test_parse_size_rejects(bad):
    with pytest.raises(units.UnitError):
        units.parse_size(bad)


@pytest.mark.parametrize("value, blocks", [(10000, 10000), ("10000", 10000), ("80M", 10240), ("4GiB", 524288),
                                           ("1T", 134217728)])
def test_parse_blocks_bare_numbers_are_blocks_like_slob(value, blocks):
    assert units.parse_blocks(value) == blocks


@pytest.mark.parametrize("text, seconds", [
    ("300", 300.0), (300, 300.0), ("30s", 30.0), ("5m", 300.0), ("8h", 28800.0), ("1h30m", 5400.0),
    ("500ms", 0.5), ("1.5s", 1.5), (".1", 0.1), ("2d", 172800.0), ("1m 30s", 90.0),
])
def test_parse_duration(text, seconds):
    assert units.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["5 minutes", "h", "1x", "", "-3", True])
def test_parse_duration_rejects(bad):
    with pytest.raises(units.UnitError):
        units.parse_duration(bad)


@pytest.mark.parametrize("text, value", [("TRUE", True), ("false", False), ("on", True), ("0", False), (True, True)])
def test_parse_bool(text, value):
    assert units.parse_bool(text) is value


def test_parse_int_rejects_fractions_and_words():
    assert units.parse_int("1_000") == 1000
    for bad in ("1.5", "ten", 2.5, True):
        with pytest.raises(units.UnitError):
            units.parse_int(bad)


def test_format_bytes_and_duration():
    assert units.format_bytes(4 << 30) == "4 GiB"
    assert units.format_bytes(1536 << 20) == "1.5 GiB"
    assert units.format_bytes(100) == "100 B"
    assert units.format_duration(0.25) == "250 ms"
    assert units.format_duration(30) == "30 s"
    assert units.format_duration(28800) == "8h00m00s"


def test_direct_io_probe_reports_filesystems_without_o_direct(tmp_path, monkeypatch):
    import errno
    import os

    from dbio.collect import host

    assert host.supports_direct_io(tmp_path / "not" / "yet")  # probes the nearest existing parent
    assert list(tmp_path.iterdir()) == []  # and leaves nothing behind

    def refuse(*args, **kwargs):
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "open", refuse)
    assert not host.supports_direct_io(tmp_path)


def test_instants_carry_their_zone():
    from dbio.units import UnitError, parse_instant

    assert parse_instant("2026-11-22T19:00:00Z") == 1795374000.0
    assert parse_instant("2026-11-22T20:00:00+01:00") == 1795374000.0
    for bad, why in (("2026-11-22T19:00:00", "no zone"), ("tomorrow", "ISO 8601"), ("", "such as")):
        with pytest.raises(UnitError, match=why):
            parse_instant(bad)
