"""The report of a maintenance operation (dbio ops), and a comparison of several, as report
models every renderer shows (pure; figures read through the catalogue's OPS_FIGURES)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dbio import sweep_records
from dbio.report import fmt
from dbio.report.tables import table
from dbio.stats import catalogue, compare
from dbio.stats.counters import get

DEVICE_COLUMNS = ("reads_per_s", "read_mib_per_s", "avg_read_us", "writes_per_s", "write_mib_per_s", "avg_write_us",
                  "utilization_pct", "avg_queue")
TITLES = {"load": "load", "index": "index creation", "backup": "base backup", "recovery": "crash recovery",
          "checkpoint": "checkpoint"}


def build(doc: dict[str, Any]) -> dict[str, Any]:
    f, operation = doc["figures"], doc["operation"]
    shown = catalogue.ops_figures(operation)
    sections = [_operation(doc), {"id": "figures", "title": "Figures", "tables": [table(
        "figures", "", ["Figure", "Value", "Unit", "How"], ["text", "mixed", "text", "text"],
        [[x.label, _mixed(x, f), x.unit, x.how] for x in shown])]}, _devices(f), _cpu(f), _log(doc)]
    return {
        "format": "dbio-report", "format_version": 1, "kind": "ops",
        "title": f"dbio ops {operation}: {doc.get('label') or TITLES.get(operation, operation)}",
        "run": {"label": doc.get("label"), "status": doc.get("status"), "status_reason": doc.get("status_reason"),
                "dbio_version": doc.get("dbio_version")},
        "findings": findings(doc), "not_measured": [], "headline_text": headline(doc),
        "headline": [{"label": x.label, "value": x.value(f), "kind": x.kind} for x in shown[:3]],
        "sections": [s for s in sections if s.get("tables") or s.get("pairs") or s.get("lines")],
        "series": {}, "histograms": {}, "events": [], "charts": [],
    }


def headline(doc: dict[str, Any]) -> str:
    """One line: what was done, how long it took, at what rate (and per GB of WAL for a recovery)."""
    f, operation = doc["figures"], doc["operation"]
    title = "cold backup" if get(doc, "detail", "format") == "cold copy" else TITLES.get(operation, operation)
    text = (f"{title}: {fmt.smart(f.get('seconds'))} s, "
            f"{_mb(f.get('bytes'))} at {fmt.smart(f.get('mb_per_s'))} MB/s")
    per_gb = get(f, "recovery", "seconds_per_gb")
    if operation == "recovery":
        text += f", {fmt.smart(per_gb)} s per GB of WAL replayed" if per_gb is not None else \
            (", no redo in the log" if doc.get("status") == "complete" else "")
        text += f" ({recovery_kind(doc)})"
    share = get(f, "backup", "share_of_sequential")
    if share is not None:
        text += f", {share:.2f} x the device's sequential read rate"
    if doc.get("status") != "complete":
        text += f" ({doc.get('status')}: figures cover the part that ran)"
    return text


def recovery_kind(doc: dict[str, Any]) -> str:
    """What a recovery measured: replaying first changes (full-page images, WAL reads only), or redo
    that reads back the blocks it changes again (random reads, as the white paper's test)."""
    detail = doc.get("detail") or {}
    asked, done, span = detail.get("changes_per_block"), detail.get("changes_per_block_done"), detail.get("span_blocks")
    if not isinstance(asked, int) or asked <= 1 or not isinstance(done, (int, float)) or not span:
        return ("each block changed once after the checkpoint: redo restored it from its full-page image and "
                "read only WAL")
    return (f"each of {span:,} blocks changed {done:.1f} times after the checkpoint, over four times the buffer "
            "cache or more: redo read back the blocks it had evicted, as random reads")


def findings(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    if doc.get("status") != "complete":
        out.append({"level": "warning", "code": "status",
                    "message": f"the operation {doc.get('status')}: {doc.get('status_reason') or 'see the log'}"})
    if (get(doc, "figures", "recovery", "checkpoints_during") or 0) > 0:
        out.append({"level": "warning", "code": "checkpoint",
                    "message": "a checkpoint ran while WAL accumulated: recovery replayed only the WAL after it"})
    other = _other_reads(doc)
    if other is not None:
        out.append({"level": "warning", "code": "other_io", "message": other})
    if doc.get("operation") == "recovery" and get(doc, "figures", "recovery", "wal_replayed_bytes") is None \
            and doc.get("status") == "complete":
        out.append({"level": "warning", "code": "redo", "message": "the server log shows no redo for this start"})
    return out


def _other_reads(doc: dict[str, Any]) -> str | None:
    """A checkpoint only writes: a device that read more than a tenth of what it wrote served
    another process too, and its figures are not the checkpoint's alone."""
    if doc.get("operation") != "checkpoint":
        return None
    for name, device in sorted((get(doc, "figures", "devices") or {}).items()):
        read, written = device.get("read_bytes"), device.get("write_bytes")
        if read is not None and written is not None and read > max(0.1 * written, 1 << 20):
            return (f"{name} read {read / 1e6:,.1f} MB while the checkpoint wrote {written / 1e6:,.1f} MB: another "
                    "process used the device, and its figures include that work")
    return None


def _mixed(x: catalogue.Figure, f: dict[str, Any]) -> dict[str, Any]:
    return {"value": x.value(f), "kind": x.kind}


def _mb(nbytes: Any) -> str:
    return "-" if nbytes is None else f"{nbytes / 1e6:,.1f} MB"


def _operation(doc: dict[str, Any]) -> dict[str, Any]:
    pairs = [("Operation", doc.get("operation")), ("Status", doc.get("status")), ("Started", doc.get("created_at")),
             ("Server", get(doc, "environment", "server", "description") or "-")]
    for role, paths in (doc.get("places") or {}).items():
        pairs.append((f"Place ({role})", ", ".join(paths)))
    for key, value in (get(doc, "config", "ops") or {}).items():
        if value is not None:
            pairs.append((f"Asked: {key}", str(value)))
    command = get(doc, "detail", "command")
    if command:
        pairs.append(("Command", " ".join(command)))
    return {"id": "operation", "title": "Operation", "pairs": [(k, str(v)) for k, v in pairs]}


def _devices(f: dict[str, Any]) -> dict[str, Any]:
    devices = f.get("devices") or {}
    members = [catalogue.member(catalogue.DEVICE_FIGURES, n) for n in DEVICE_COLUMNS]
    rows = [[name, ", ".join(d.get("roles") or []) or "-", *[m.value(d) for m in members]]
            for name, d in sorted(devices.items())]
    notes = ["each device's figures are the whole device's: another process's I/O on it counts too"]
    return {"id": "devices", "title": "Devices (/proc/diskstats over the timed part)", "tables": [table(
        "devices", "", ["Device", "Holds", *[m.label for m in members]], ["text", "text", *[m.kind for m in members]],
        rows, notes)] if rows else []}


def _cpu(f: dict[str, Any]) -> dict[str, Any]:
    host = get(f, "cpu", "host")
    if not host:
        return {"id": "cpu", "title": "Host CPU"}
    return {"id": "cpu", "title": "Host CPU (over the timed part)", "pairs": [
        ("Busy", fmt.pct(host.get("busy_pct"))), ("User", fmt.pct(host.get("user_pct"))),
        ("System", fmt.pct(host.get("system_pct"))), ("I/O wait", fmt.pct(host.get("iowait_pct"))),
        ("Busy CPUs", fmt.smart(host.get("busy_cores")))]}


def _log(doc: dict[str, Any]) -> dict[str, Any]:
    lines = get(doc, "detail", "log", "lines") or []
    return {"id": "log", "title": "Server log of the recovery", "lines": list(lines)}


# -- several operations side by side ------------------------------------------------------------

def build_compare(named: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Operations' figures side by side with deltas against the first (one operation kind)."""
    operations = {doc["operation"] for _, doc in named}
    shown = catalogue.ops_figures(next(iter(operations)) if len(operations) == 1 else "")
    columns, kinds = ["Figure", named[0][0]], ["text", "mixed"]
    for name, _ in named[1:]:
        columns += [name, "delta %"]
        kinds += ["mixed", "delta_pct"]
    rows = []
    base = named[0][1]["figures"]
    for x in shown:
        row: list[Any] = [x.label, _mixed(x, base)]
        for _, doc in named[1:]:
            row += [_mixed(x, doc["figures"]), compare.Delta(x.value(base), x.value(doc["figures"])).pct]
        rows.append(row)
    names = [n for n, _ in named]
    lines = [] if len(operations) == 1 else [f"different operations: {', '.join(sorted(operations))}"]
    return {
        "format": "dbio-compare", "format_version": 1, "kind": "compare",
        "title": "dbio compare (operations): " + " vs ".join(names),
        "run": {"status": "complete", "dbio_version": named[0][1].get("dbio_version")},
        "headline_text": "; ".join(f"{n}: {headline(d)}" for n, d in named),
        "headline": [], "findings": [{**x, "message": f"{n}: {x['message']}"} for n, d in named for x in findings(d)],
        "not_measured": [],
        "sections": [{"id": "figures", "title": "Figures", "lines": lines,
                      "tables": [table("figures", "", columns, kinds, rows)]}],
        "charts": [],
    }


# -- a sweep whose steps are an operation (dbio sweep --op) ----------------------------------------

def build_sweep(doc: sweep_records.Doc, step_docs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """One row per step: the knobs it varied, its status and the operation's figures."""
    sweep = sweep_records.of(doc)
    operation = _operation_of(sweep)
    shown = catalogue.ops_figures(operation)
    keys = sorted({k for step in sweep.steps for k in step.values})
    rows = []
    for step in sweep.steps:
        f = (step_docs.get(step.name) or {}).get("figures") or {}
        rows.append([step.name, *[step.values.get(k) for k in keys], step.status,
                     *[_mixed(x, f) for x in shown]])
    done = [d for d in step_docs.values() if d.get("status") == "complete"]
    return {
        "format": "dbio-report", "format_version": 1, "kind": "sweep",
        "title": f"dbio sweep of {TITLES.get(operation, operation)}: {sweep.label or sweep.created_at}",
        "run": {"status": sweep.status, "run_id": sweep.created_at, "dbio_version": sweep.dbio_version},
        "headline_text": f"{len(done)} of {len(sweep.steps)} steps complete",
        "headline": [], "findings": [], "not_measured": [], "charts": [], "knees": [],
        "sections": [{"id": "summary", "title": "Summary", "tables": [table(
            "summary", "", ["Step", *keys, "Status", *[x.label for x in shown]],
            ["text"] * (len(keys) + 2) + ["mixed"] * len(shown), rows)]}],
    }


def _operation_of(sweep: sweep_records.Sweep) -> str:
    """The operation a sweep --op timed (a sweep without one is not an operation's)."""
    if sweep.operation is None:
        raise ValueError("not a sweep of an operation (sweep --op)")
    return sweep.operation


def build_compare_sweeps(loaded: Sequence[tuple[str, sweep_records.Doc, dict[str, dict[str, Any]]]]) -> dict[str, Any]:
    """Sweeps of one operation side by side: each step (matched by name) and figure, with the delta
    against the first sweep."""
    sweeps = [sweep_records.of(doc) for _, doc, _ in loaded]
    operations = {_operation_of(sweep) for sweep in sweeps}
    shown = catalogue.ops_figures(next(iter(operations)) if len(operations) == 1 else "")
    names = [name for name, _, _ in loaded]
    columns, kinds = ["Step", "Figure", names[0]], ["text", "text", "mixed"]
    for name in names[1:]:
        columns += [name, "delta %"]
        kinds += ["mixed", "delta_pct"]
    rows = []
    for step in sweeps[0].steps:
        figures = [((docs.get(step.name) or {}).get("figures") or {}) for _, _, docs in loaded]
        for x in shown:
            row: list[Any] = [step.name, x.label, _mixed(x, figures[0])]
            for other in figures[1:]:
                row += [_mixed(x, other), compare.Delta(x.value(figures[0]), x.value(other)).pct]
            rows.append(row)
    return {"format": "dbio-compare", "format_version": 1, "kind": "compare",
            "title": "dbio compare (sweeps of an operation): " + " vs ".join(names),
            "run": {"status": "complete", "dbio_version": sweeps[0].dbio_version},
            "headline_text": f"{len(sweeps[0].steps)} steps of {', '.join(sorted(operations))}, matched by name",
            "headline": [], "findings": [], "not_measured": [], "charts": [],
            "sections": [{"id": "steps", "title": "Steps", "tables": [table("steps", "", columns, kinds, rows)]}]}
