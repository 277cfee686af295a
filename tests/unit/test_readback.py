"""Files a user may have planted where dbio reads (dbio/readback.py): a sparse file just over its kind's limit, a
FIFO, a link to a device, a small file of millions of values, an over-long line. Each is refused unread (or, a
line, passed over) in one line naming it, without blocking and without taking memory: run as programs with their
address space bounded, their peak memory read back (getrusage), so that today's reading whole fails instead of
taking the machine's memory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dbio import readback
from dbio import result as results
from dbio.readback import Kind
from tests.bounded_program import CLI, PEAK_MIB, run_program

FIXTURES = Path(__file__).parent.parent / "fixtures"
COMPLETE = (FIXTURES / "result_complete.json").read_text()
# what a reader raises, as one line on stdout (the CLI's commands print their own)
CALLS = {
    "samples": "from dbio import result\nlist(result.iter_samples(Path(sys.argv[1])))",
    "manifest": "from dbio.run.manifest import read_manifest\nread_manifest(Path(sys.argv[1]).parent)",
    "abandoned": "from dbio.run import abandoned\n"
                 "print('abandoned:', abandoned.abandoned(Path(sys.argv[1]).parent.parent))",
    "instance record": "from dbio.engines.postgres.instance.record import Meta\nMeta.read(Path(sys.argv[1]))",
    "option file": "from dbio.engines.mysql.dsn import password\nprint('password:', password(Path(sys.argv[1])))",
}


def _caught(code: str) -> str:
    return f"try:\n{_indent(code)}\nexcept Exception as exc:\n    print(type(exc).__name__ + ':', exc)"


def _indent(code: str) -> str:
    return "\n".join("    " + line for line in code.splitlines())


def sparse(path: Path, size: int) -> Path:
    """A file of size bytes that takes no room on disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        fh.truncate(size)
    return path


def _run_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "results" / "20261201-120000-planted"
    directory.mkdir(parents=True)
    return directory


# kind -> (the file planted, relative to a run directory; how it is read: a command's argv or a call)
OVER_LIMIT = {
    "result": ("result.json", ["report", "{dir}"]),
    "sweep": ("sweep.json", ["report", "{dir}"]),
    "repeat set": ("repeat.json", ["compare", "{dir}", "{other}"]),
    "run manifest": ("run.json", "manifest"),
    "sample file": ("samples.jsonl", "samples"),
    "instance record": ("dbio-instance.json", "instance record"),
    "configuration file": ("dbio.toml", ["instance", "status", "--config", "{file}", "--data-dir", "{dir}/none"]),
}
KINDS = {kind.name: kind for kind in (readback.RESULT, readback.SWEEP, readback.REPEAT, readback.MANIFEST,
                                      readback.SAMPLES, readback.INSTANCE_RECORD, readback.CONFIGURATION)}


@pytest.mark.parametrize("kind", sorted(OVER_LIMIT))
def test_a_sparse_file_just_over_its_kind_s_limit_is_refused_in_one_line_naming_it(tmp_path, kind):
    """Today a result, sweep or repeat set of up to 1 GiB is read whole (1.28 GB of memory for 600 MiB), the
    other kinds have no limit at all: each is read, then found not to be JSON."""
    name, how = OVER_LIMIT[kind]
    directory = _run_dir(tmp_path)
    planted = sparse(directory / name, KINDS[kind].max_bytes + 1)
    other = tmp_path / "other"
    other.mkdir()
    (other / "result.json").write_text(COMPLETE)
    if isinstance(how, list):
        argv = [part.format(dir=directory, other=other, file=planted) for part in how]
        code, out, err, peak = run_program(CLI, *argv)
        lines = err.strip().splitlines()
        assert code == 2, err
    else:
        code, out, err, peak = run_program(_caught(CALLS[how]), str(planted))
        lines = out.strip().splitlines()
        assert code == 0, err
    assert len(lines) == 1, lines
    assert str(planted) in lines[0] and f"is larger than any {kind}" in lines[0], lines[0]
    assert f"{KINDS[kind].max_bytes + 1:,} bytes" in lines[0] and "internal error" not in lines[0]
    assert peak < PEAK_MIB, f"{peak:.0f} MiB to refuse {planted}"


@pytest.mark.parametrize("plant", ["fifo", "device"])
@pytest.mark.parametrize("reader", [*sorted(CALLS), "report"])
def test_a_fifo_or_a_device_is_refused_without_blocking(tmp_path, reader, plant):
    """Today samples.jsonl, run.json where dbio looks for abandoned runs and where `dbio report` says a directory
    holds a run with no result yet, an instance record and ~/.my.cnf are opened blocking and read without limit:
    a FIFO there hangs dbio for ever, a link to /dev/zero reads until memory runs out. (The run.json a recovery
    reads was refused already, a link to a device followed to be found no plain file: kept, so that every reader
    of run.json is.)"""
    name = {"samples": "samples.jsonl", "manifest": "run.json", "abandoned": "run.json", "report": "run.json",
            "instance record": "dbio-instance.json", "option file": ".my.cnf"}[reader]
    planted = _run_dir(tmp_path) / name
    if plant == "fifo":
        os.mkfifo(planted)
    else:
        planted.symlink_to("/dev/zero")
    if reader == "report":
        code, out, err, peak = run_program(CLI, "report", str(planted.parent), timeout=30)
        assert code == 2 and peak < PEAK_MIB, (err, peak)
        (line,) = err.strip().splitlines()
        assert "is a run whose dbio process ended before writing its result" in line, line  # no client it can name
        return
    code, out, err, peak = run_program(_caught(CALLS[reader]), str(planted), timeout=30)
    assert code == 0 and peak < PEAK_MIB, (err, peak)
    (line,) = out.strip().splitlines()
    if reader == "abandoned":  # nothing to recover from: not a run it could rebuild, passed over
        assert line == "abandoned: []"
    elif reader == "option file":  # no password from it: the connection says what is missing
        assert line == "password: None"
    elif plant == "fifo" or reader == "instance record":  # a link dbio was given (its record's) is followed
        assert str(planted) in line and "not a plain file (a FIFO, a device or a socket)" in line, line
    else:  # a link in a run directory is not followed
        assert str(planted) in line and "is a link, not a plain file" in line, line


def test_a_small_result_of_millions_of_values_is_refused_before_it_is_parsed(tmp_path):
    """`[{},{},...]` takes 30 times its size once parsed: a file well within the limit of bytes would take
    gigabytes. Today it is parsed whole."""
    directory = _run_dir(tmp_path)
    limit = readback.RESULT.max_values
    text = b"[" + b"{}," * (limit // 2) + b"{}]"  # each {} counted twice (its brace, its comma): just over
    (directory / "result.json").write_bytes(text)
    assert len(text) < readback.RESULT.max_bytes and readback.value_bound(text) > limit
    code, _, err, peak = run_program(CLI, "report", str(directory))
    (line,) = err.strip().splitlines()
    assert code == 2 and str(directory / "result.json") in line, err
    assert f"holds more values than any result dbio writes (up to {readback.value_bound(text):,}, at most " \
           f"{limit:,})" in line
    assert peak < PEAK_MIB + (directory / "result.json").stat().st_size / 1024 ** 2, f"{peak:.0f} MiB"


def _sample(k: int, pad: int = 0) -> str:
    return json.dumps({"k": k, "t": 1000.0 + k, "phase": "measured", "engine": {"t": 1000.0 + k, "pad": "x" * pad}})


def test_a_sample_line_longer_than_any_dbio_writes_is_passed_over_unread_and_the_others_are_read(tmp_path,
                                                                                                monkeypatch):
    """Today every line is read whole, however long (a sparse samples.jsonl of terabytes is one line)."""
    monkeypatch.setattr(readback, "SAMPLES", Kind("sample file", "samples.jsonl", max_bytes=10_000, max_line=200))
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join([_sample(1), _sample(2, pad=500), _sample(3)]) + "\n")
    skipped: list[str] = []
    assert [s["k"] for s in results.iter_samples(path, skipped)] == [1, 3]
    assert skipped == ["line 2 is longer than any line of a sample file dbio writes (more than 200 bytes)"]


def test_what_a_sample_file_holds_beyond_its_limit_is_not_read(tmp_path):
    """A file that grows past its kind's limit once opened (its writer goes on) is read only to the limit."""
    kind = Kind("sample file", "samples.jsonl", max_bytes=100, max_line=80)
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(f"{i:039d}\n" for i in range(2)))  # lines of 40 bytes
    skipped: list[str] = []
    found = readback.lines(path, kind, skipped)
    assert next(found)[0] == 1
    with path.open("a") as fh:  # it grows meanwhile
        fh.write("".join(f"{i:039d}\n" for i in range(2, 10)))
    assert [n for n, _ in found] == [2]
    assert skipped == ["line 3 and what follows are beyond the most of a sample file dbio reads (100 bytes)"]


def _values(value) -> int:
    """The values a parsed JSON document holds (its keys are no values), counted."""
    if isinstance(value, dict):
        return 1 + sum(_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(v) for v in value)
    return 1


@pytest.mark.parametrize("text", [b'{"a": [1, 2, {"b": [3]}], "c": "x"}', b"[[0],[0],[[1,2]]]", b"17"])
def test_the_value_bound_counts_each_value_of_a_json_text(text):
    assert readback.value_bound(text) == _values(json.loads(text))


def test_the_value_bound_is_above_the_values_of_empty_containers_and_of_strings_holding_commas():
    assert readback.value_bound(b"[{},[]]") == 5 == _values([{}, []]) + 2
    assert readback.value_bound(b'"a,b[c{"') == 4


def test_a_file_within_its_kind_s_limit_reads_as_it_did(tmp_path):
    directory = _run_dir(tmp_path)
    (directory / "result.json").write_text(COMPLETE)
    assert results.read(directory)["status"] == json.loads(COMPLETE)["status"]
    (directory / "elsewhere.json").write_text(COMPLETE)
    (directory / "named.json").symlink_to(directory / "elsewhere.json")
    # a link the user names is followed
    assert results.read(directory / "named.json")["run_id"] == json.loads(COMPLETE)["run_id"]
