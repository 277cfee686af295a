"""The report of a maintenance operation (dbio ops), and a comparison of several, as report
models every renderer shows (pure; figures read through the catalogue's OPS_FIGURES)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dbio.ops_records import Operation
from dbio.sweep_records import Sweep
from dbio.report import fmt
from dbio.report.tables import table
from dbio.stats import catalogue, compare

DEVICE_COLUMNS = ("reads_per_s", "read_mib_per_s", "avg_read_us", "writes_per_s", "write_mib_per_s", "avg_write_us",
                  "utilization_pct", "avg_queue")
TITLES = {"load": "load", "index": "index creation", "backup": "base backup", "recovery": "crash recovery",
          "checkpoint": "checkpoint"}
SECONDS, BYTES, MB_PER_S = (catalogue.ops_figure(n) for n in ("ops_seconds", "ops_bytes", "ops_mb_per_s"))
PER_GB, SHARE, CHECKPOINTS, REPLAYED = (catalogue.ops_figure(n) for n in (
    "recovery_seconds_per_gb", "backup_share_of_sequential", "checkpoints_during", "wal_replayed_bytes"))


def build(op: Operation) -> dict[str, Any]:
    f, operation = op.figures, op.operation
    shown = catalogue.ops_figures(operation)
    sections = [_operation(op), {"id": "figures", "title": "Figures", "tables": [table(
        "figures", "", ["Figure", "Value", "Unit", "How"], ["text", "mixed", "text", "text"],
        [[x.label, _mixed(x, f), x.unit, x.how] for x in shown])]}, _devices(op), _cpu(op), _log(op)]
    return {
        "format": "dbio-report", "format_version": 1, "kind": "ops",
        "title": f"dbio ops {operation}: {op.label or TITLES.get(operation, operation)}",
        "run": {"label": op.label, "status": op.status, "status_reason": op.status_reason,
                "dbio_version": op.dbio_version},
        "findings": findings(op), "not_measured": [], "headline_text": headline(op),
        "headline": [{"label": x.label, "value": x.value(f), "kind": x.kind} for x in shown[:3]],
        "sections": [s for s in sections if s.get("tables") or s.get("pairs") or s.get("lines")],
        "series": {}, "histograms": {}, "events": [], "charts": [],
    }


def headline(op: Operation) -> str:
    """One line: what was done, how long it took, at what rate (and per GB of WAL for a recovery)."""
    f, operation = op.figures, op.operation
    title = "cold backup" if op.detail.format == "cold copy" else TITLES.get(operation, operation)
    text = (f"{title}: {fmt.smart(SECONDS.value(f))} s, "
            f"{_mb(BYTES.value(f))} at {fmt.smart(MB_PER_S.value(f))} MB/s")
    per_gb = PER_GB.value(f)
    if operation == "recovery":
        text += f", {fmt.smart(per_gb)} s per GB of WAL replayed" if per_gb is not None else \
            (", no redo in the log" if op.status == "complete" else "")
        text += f" ({recovery_kind(op)})"
    share = SHARE.value(f)
    if share is not None:
        text += f", {share:.2f} x the device's sequential read rate"
    if op.status != "complete":
        text += f" ({op.status}: figures cover the part that ran)"
    return text


def recovery_kind(op: Operation) -> str:
    """What a recovery measured: replaying first changes (full-page images, WAL reads only), or redo
    that reads back the blocks it changes again (random reads, as the white paper's test)."""
    detail = op.detail
    asked, done, span = detail.changes_per_block, detail.changes_per_block_done, detail.span_blocks
    if asked is None or asked <= 1 or done is None or not span:
        return ("each block changed once after the checkpoint: redo restored it from its full-page image and "
                "read only WAL")
    return (f"each of {span:,} blocks changed {done:.1f} times after the checkpoint, over four times the buffer "
            "cache or more: redo read back the blocks it had evicted, as random reads")


def findings(op: Operation) -> list[dict[str, Any]]:
    out = []
    if op.status != "complete":
        out.append({"level": "warning", "code": "status",
                    "message": f"the operation {op.status}: {op.status_reason or 'see the log'}"})
    if (CHECKPOINTS.value(op.figures) or 0) > 0:
        out.append({"level": "warning", "code": "checkpoint",
                    "message": "a checkpoint ran while WAL accumulated: recovery replayed only the WAL after it"})
    other = _other_reads(op)
    if other is not None:
        out.append({"level": "warning", "code": "other_io", "message": other})
    if op.operation == "recovery" and REPLAYED.value(op.figures) is None and op.status == "complete":
        out.append({"level": "warning", "code": "redo", "message": "the server log shows no redo for this start"})
    return out


def _other_reads(op: Operation) -> str | None:
    """A checkpoint only writes: a device that read more than a tenth of what it wrote served
    another process too, and its figures are not the checkpoint's alone."""
    if op.operation != "checkpoint":
        return None
    for name, device in sorted(op.devices.items()):
        read, written = device.get("read_bytes"), device.get("write_bytes")
        if read is not None and written is not None and read > max(0.1 * written, 1 << 20):
            return (f"{name} read {read / 1e6:,.1f} MB while the checkpoint wrote {written / 1e6:,.1f} MB: another "
                    "process used the device, and its figures include that work")
    return None


def _mixed(x: catalogue.Figure, f: Mapping[str, Any]) -> dict[str, Any]:
    return {"value": x.value(f), "kind": x.kind}


def _mb(nbytes: Any) -> str:
    return "-" if nbytes is None else f"{nbytes / 1e6:,.1f} MB"


def _operation(op: Operation) -> dict[str, Any]:
    pairs = [("Operation", op.operation), ("Status", op.status), ("Started", op.created_at),
             ("Server", op.environment.server.get("description") or "-")]
    for role, paths in op.places.items():
        pairs.append((f"Place ({role})", ", ".join(paths)))
    for key, value in op.asked.items():
        if value is not None:
            pairs.append((f"Asked: {key}", str(value)))
    command = op.detail.command
    if command:
        pairs.append(("Command", " ".join(command)))
    return {"id": "operation", "title": "Operation", "pairs": [(k, str(v)) for k, v in pairs]}


def _devices(op: Operation) -> dict[str, Any]:
    devices = op.devices
    members = [catalogue.member(catalogue.DEVICE_FIGURES, n) for n in DEVICE_COLUMNS]
    rows = [[name, ", ".join(d.get("roles") or []) or "-", *[m.value(d) for m in members]]
            for name, d in sorted(devices.items())]
    unread = op.devices_unread
    rows += [[name, "-", *[None for _ in members]] for name in sorted(unread)]  # named, its figures absent
    notes = ["each device's figures are the whole device's: another process's I/O on it counts too",
             *[f"{name}: no figures, {why}" for name, why in sorted(unread.items())]]
    return {"id": "devices", "title": "Devices (/proc/diskstats over the timed part)", "tables": [table(
        "devices", "", ["Device", "Holds", *[m.label for m in members]], ["text", "text", *[m.kind for m in members]],
        rows, notes)] if rows else []}


def _cpu(op: Operation) -> dict[str, Any]:
    host = op.host_cpu
    if not host:
        return {"id": "cpu", "title": "Host CPU"}
    return {"id": "cpu", "title": "Host CPU (over the timed part)", "pairs": [
        ("Busy", fmt.pct(host.get("busy_pct"))), ("User", fmt.pct(host.get("user_pct"))),
        ("System", fmt.pct(host.get("system_pct"))), ("I/O wait", fmt.pct(host.get("iowait_pct"))),
        ("Busy CPUs", fmt.smart(host.get("busy_cores")))]}


def _log(op: Operation) -> dict[str, Any]:
    return {"id": "log", "title": "Server log of the recovery", "lines": list(op.detail.log_lines)}


# -- several operations side by side ------------------------------------------------------------

def build_compare(named: Sequence[tuple[str, Operation]]) -> dict[str, Any]:
    """Operations' figures side by side with deltas against the first (one operation kind)."""
    operations = {op.operation for _, op in named}
    shown = catalogue.ops_figures(next(iter(operations)) if len(operations) == 1 else "")
    columns, kinds = ["Figure", named[0][0]], ["text", "mixed"]
    for name, _ in named[1:]:
        columns += [name, "delta %"]
        kinds += ["mixed", "delta_pct"]
    rows = []
    base = named[0][1].figures
    for x in shown:
        row: list[Any] = [x.label, _mixed(x, base)]
        for _, op in named[1:]:
            row += [_mixed(x, op.figures), compare.Delta(x.value(base), x.value(op.figures)).pct]
        rows.append(row)
    names = [n for n, _ in named]
    lines = [] if len(operations) == 1 else [f"different operations: {', '.join(sorted(operations))}"]
    return {
        "format": "dbio-compare", "format_version": 1, "kind": "compare",
        "title": "dbio compare (operations): " + " vs ".join(names),
        "run": {"status": "complete", "dbio_version": named[0][1].dbio_version},
        "headline_text": "; ".join(f"{n}: {headline(d)}" for n, d in named),
        "headline": [], "findings": [{**x, "message": f"{n}: {x['message']}"} for n, d in named for x in findings(d)],
        "not_measured": [],
        "sections": [{"id": "figures", "title": "Figures", "lines": lines,
                      "tables": [table("figures", "", columns, kinds, rows)]}],
        "charts": [],
    }


# -- a sweep whose steps are an operation (dbio sweep --op) ----------------------------------------

def build_sweep(sweep: Sweep, step_docs: Mapping[str, Operation]) -> dict[str, Any]:
    """One row per step: the knobs it varied, its status and the operation's figures."""
    operation = _operation_of(sweep)
    shown = catalogue.ops_figures(operation)
    keys = sorted({k for step in sweep.steps for k in step.values})
    rows = []
    for step in sweep.steps:
        f = _step_figures(step_docs, step.name)
        rows.append([step.name, *[step.values.get(k) for k in keys], step.status,
                     *[_mixed(x, f) for x in shown]])
    done = [d for d in step_docs.values() if d.status == "complete"]
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


def _step_figures(step_docs: Mapping[str, Operation], name: str) -> Mapping[str, Any]:
    """The figures of a step's operation; none when the step wrote no result."""
    found = step_docs.get(name)
    return found.figures if found else {}


def _operation_of(sweep: Sweep) -> str:
    """The operation a sweep --op timed (a sweep without one is not an operation's)."""
    if sweep.operation is None:
        raise ValueError("not a sweep of an operation (sweep --op)")
    return sweep.operation


def build_compare_sweeps(loaded: Sequence[tuple[str, Sweep, Mapping[str, Operation]]]) \
        -> dict[str, Any]:
    """Sweeps of one operation side by side: each step (matched by name) and figure, with the delta
    against the first sweep."""
    sweeps = [sweep for _, sweep, _ in loaded]
    operations = {_operation_of(sweep) for sweep in sweeps}
    shown = catalogue.ops_figures(next(iter(operations)) if len(operations) == 1 else "")
    names = [name for name, _, _ in loaded]
    columns, kinds = ["Step", "Figure", names[0]], ["text", "text", "mixed"]
    for name in names[1:]:
        columns += [name, "delta %"]
        kinds += ["mixed", "delta_pct"]
    rows = []
    for step in sweeps[0].steps:
        figures = [_step_figures(docs, step.name) for _, _, docs in loaded]
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
