"""What typing a result costs: plain dataclasses (dbio/result_records.py) against msgspec and pydantic.

Run it in a venv that has msgspec and pydantic beside dbio (they are not dbio's dependencies):

    python3 -m venv /tmp/rl && /tmp/rl/bin/pip install -q -c constraints.txt -e . msgspec pydantic
    /tmp/rl/bin/python bench/bench_result_load.py

Inputs: the four step results of tests/fixtures/sweep_capacity (a sweep's, as `dbio report` of a
sweep loads them) and one long run made from tests/fixtures/result_format2.json with its series
repeated to an hour sampled each second. Each way types the same top level (status, timeline,
config, nodes, events, counting, parts); the figures stay mappings in all three. Figures: median
of --rounds, in ms; import: a fresh interpreter's `import X` minus a bare one's.
"""

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def _inputs() -> dict[str, list[str]]:
    sweep = [p.read_text() for p in sorted((FIXTURES / "sweep_capacity").glob("*/result.json"))]
    doc = json.loads((FIXTURES / "result_format2.json").read_text())
    rows = doc.get("series") or []
    doc["series"] = [dict(rows[i % len(rows)], k=i) for i in range(3600)]
    return {"sweep of 4 steps": sweep, "1-hour run, 1 s samples": [json.dumps(doc)]}


def _msgspec_way() -> Callable[[str], Any]:
    import msgspec

    class Timeline(msgspec.Struct):
        window_seconds: float | None = None
        warmup_seconds: float | None = None
        interval_seconds: float | None = None
        start_seconds: float | None = None
        window_start: str | None = None
        window_end: str | None = None

    class Node(msgspec.Struct):
        name: str
        role: str
        engine: str | None = None
        figures: dict[str, Any] | None = None
        capabilities: dict[str, Any] | None = None
        stopped: dict[str, Any] | None = None

    class Event(msgspec.Struct):
        kind: str | None = None
        message: str | None = None
        t: float | None = None

    class Result(msgspec.Struct):
        format: str
        format_version: int
        status: str
        config: dict[str, Any]
        figures: dict[str, Any]
        status_reason: str | None = None
        label: str | None = None
        run_id: str | int | None = None
        timeline: Timeline | None = None
        nodes: list[Node] | None = None
        events: list[Event] | None = None
        counting: list[dict[str, Any]] | None = None
        parts: dict[str, Any] | None = None

    decoder = msgspec.json.Decoder(Result)
    return decoder.decode


def _pydantic_way() -> Callable[[str], Any]:
    import pydantic

    class Timeline(pydantic.BaseModel):
        window_seconds: float | None = None
        warmup_seconds: float | None = None
        interval_seconds: float | None = None
        start_seconds: float | None = None
        window_start: str | None = None
        window_end: str | None = None

    class Node(pydantic.BaseModel):
        name: str
        role: str
        engine: str | None = None
        figures: dict[str, Any] | None = None
        capabilities: dict[str, Any] | None = None
        stopped: dict[str, Any] | None = None

    class Event(pydantic.BaseModel):
        kind: str | None = None
        message: str | None = None
        t: float | None = None

    class Result(pydantic.BaseModel):
        format: str
        format_version: int
        status: str
        config: dict[str, Any]
        figures: dict[str, Any]
        status_reason: str | None = None
        label: str | None = None
        run_id: str | int | None = None
        timeline: Timeline | None = None
        nodes: list[Node] | None = None
        events: list[Event] | None = None
        counting: list[dict[str, Any]] | None = None
        parts: dict[str, Any] | None = None

    return Result.model_validate_json


def _dataclass_ways() -> dict[str, Callable[[str], Any]]:
    from dbio import jsondoc, result_records

    return {"dataclasses: strict parse + shapes check + migration (dbio's load)":
            lambda text: result_records.load(jsondoc.loads(text)),
            "dataclasses: typing alone (result_records.of)": lambda text: result_records.of(json.loads(text))}


def _timed(way: Callable[[str], Any], texts: list[str], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            way(text)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def _import_ms(module: str, rounds: int) -> float:
    def once(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        return time.perf_counter() - start
    bare = statistics.median(once("pass") for _ in range(rounds))
    return 1000 * (statistics.median(once(f"import {module}") for _ in range(rounds)) - bare)


def _installed_kib(*dists: str) -> int:
    from importlib import metadata

    total = 0
    for dist in dists:
        files = metadata.distribution(dist).files or []
        total += sum(f.size or 0 for f in files)
    return total // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    ways = _dataclass_ways()
    ways["json.loads alone (what any way that keeps the whole document must parse)"] = json.loads
    ways["msgspec: decode into Structs"] = _msgspec_way()
    import msgspec

    ways["msgspec: decode the whole document, untyped"] = msgspec.json.decode
    ways["pydantic: model_validate_json"] = _pydantic_way()
    out: dict[str, Any] = {"load_ms": {}, "import_ms": {}, "installed_kib": {}}
    for name, texts in _inputs().items():
        mib = sum(len(t) for t in texts) / 2 ** 20
        for way_name, way in ways.items():
            ms = _timed(way, texts, args.rounds)
            out["load_ms"][f"{name} ({mib:.1f} MiB) / {way_name}"] = round(ms, 1)
            print(f"{name:26} {mib:5.1f} MiB  {way_name:70} {ms:8.1f} ms")
    for module in ("dbio.result_records", "msgspec", "pydantic"):
        if importlib.util.find_spec(module.split(".")[0]) is not None:
            out["import_ms"][module] = round(_import_ms(module, args.rounds), 1)
            print(f"import {module:30} {out['import_ms'][module]:8.1f} ms")
    for label, dists in (("msgspec", ("msgspec",)),
                         ("pydantic", ("pydantic", "pydantic_core", "annotated-types", "typing-inspection"))):
        out["installed_kib"][label] = _installed_kib(*dists)
        print(f"installed {label:27} {out['installed_kib'][label]:8} KiB")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
