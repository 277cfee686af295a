"""Charts for the HTML report: inline SVG from matplotlib, text drawn as paths (no fonts needed)."""

from __future__ import annotations

import io
import re
from datetime import datetime, timezone
from typing import Any, Sequence

import matplotlib

matplotlib.use("svg")
import matplotlib.dates  # noqa: E402
import matplotlib.ticker  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

matplotlib.rcParams.update({
    "svg.fonttype": "path",  # self-contained: no font files, same look everywhere
    "svg.hashsalt": "dbio",  # stable element ids: the same result gives the same file
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    # matplotlib re-exports cycler at run time; its stubs do not declare it
    "axes.prop_cycle": matplotlib.cycler(color=["#1f5fa8", "#d9822b", "#2e8b57", "#b03a48", "#6b4c9a", "#777777"]),  # type: ignore[attr-defined]
})

WIDTH, HEIGHT = 7.2, 2.6  # inches: fits a laptop screen and an A4 page


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": "dbio"})
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # inline: drop the XML prolog and doctype
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    # Scale with the page: keep the viewBox, let CSS set the size.
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 class="chart"', text, count=1)


SERIES_X = "seconds after the end of warm-up (each point: the interval ending there)"


def _whole_intervals(series: dict[str, list[Any]] | None) -> dict[str, list[Any]]:
    """The series without partial intervals (left out of the charts, as of the statistics)."""
    series = series or {}
    keep = [i for i, to in enumerate(series.get("to_s") or []) if to is not None and not series["partial"][i]]
    out = {key: [values[i] for i in keep] for key, values in series.items() if key != "bands"}
    if series.get("bands"):  # each --event's [from_s, to_s, name]: not an interval's
        out["bands"] = list(series["bands"])
    return out


def _window_shade(ax: Any, series: dict[str, list[Any]]) -> None:
    measured = [i for i, p in enumerate(series["phase"]) if p == "measured"]
    if measured:
        ax.axvspan(min(series["from_s"][i] for i in measured), max(series["to_s"][i] for i in measured),
                   color="#1f5fa8", alpha=0.06, lw=0, label="measured window")
    for n, (start, end, _) in enumerate(series.get("bands") or []):  # each --event, from its start to its end
        ax.axvspan(start, max(end, start + 0.2), color="#d62728", alpha=0.15, lw=0, label=None if n else "event")


def series_iops(series: dict[str, list[Any]] | None) -> str | None:
    fig = iops_figure(series)
    return None if fig is None else _svg(fig)


DEVICE_APART = 5.0  # device reads this many times the engine's (another process used it): on an axis of their own


def iops_figure(series: dict[str, list[Any]] | None) -> Figure | None:
    series = _whole_intervals(series)
    t = series.get("to_s") or []
    if len(t) < 2:
        return None
    # constrained: the legend gets its own room under the plot (and the right axis its labels)
    fig = Figure(figsize=(WIDTH, HEIGHT + 0.3), layout="constrained")
    ax = fig.add_subplot()
    _window_shade(ax, series)
    ax.plot(t, _none_nan(series["reads_per_s"]), label="physical reads/s", lw=1.4)
    if any(v for v in series["writes_per_s"] if v):
        ax.plot(t, _none_nan(series["writes_per_s"]), label="physical writes/s", lw=1.2)
    device = series.get("device_reads_per_s") or []
    handles = []
    if any(v for v in device if v):
        engine_top = max((v for v in series["reads_per_s"] if v is not None), default=0.0)
        if max(v for v in device if v is not None) > DEVICE_APART * max(engine_top, 1.0):
            # the engine's own rate would be a flat line under the device's: the device gets its own scale
            other = ax.twinx()
            handles = other.plot(t, _none_nan(device), label="device reads/s (right axis)", lw=0.8, ls="--",
                                 color="#7f7f7f")
            other.set_ylabel("device reads/s")
            other.set_ylim(bottom=0)
        else:
            ax.plot(t, _none_nan(device), label="device reads/s", lw=0.8, ls="--")
    ax.set_xlabel(SERIES_X)
    ax.set_ylabel("requests/s")
    ax.set_ylim(bottom=0)
    lines, labels = ax.get_legend_handles_labels()
    # under the plot, never over its lines (inside, at any corner, it covered a rate that reached it)
    # "outside ..." is a figure legend's loc since matplotlib 3.7; the stubs' overloads do not list it
    fig.legend(lines + handles, labels + [h.get_label() for h in handles],  # type: ignore[call-overload]
               loc="outside lower center", ncols=len(lines + handles), fontsize=8, frameon=False)
    ax.set_title("I/O requests per second", loc="left", fontsize=10)
    return fig


def series_latency(series: dict[str, list[Any]] | None) -> str | None:
    fig = latency_figure(series)
    return None if fig is None else _svg(fig)


def latency_figure(series: dict[str, list[Any]] | None) -> Figure | None:
    """Two panels sharing time: the average physical read (hundreds of us) and the SELECT p99 (ms),
    each on its own scale, so neither flattens the other."""
    series = _whole_intervals(series)
    t = series.get("to_s") or []
    panels = [(key, label, *_time_unit(series[key])) for key, label in
              (("avg_read_us", "avg physical read"), ("select_p99_us", "SELECT p99")) if any(series.get(key) or [])]
    if len(t) < 2 or not panels:
        return None
    fig = Figure(figsize=(WIDTH, HEIGHT * (0.75 * len(panels) + 0.25)))
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for n, (ax, (key, label, unit, scale)) in enumerate(zip(axes, panels)):
        _window_shade(ax, series)
        ax.plot(t, [v / scale for v in _none_nan(series[key])], lw=1.4, color=f"C{n}")
        ax.set_ylabel(f"{label} ({unit})")
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel(SERIES_X)
    axes[0].set_title("Latency per interval: " + " and ".join(f"{label} ({unit})" for _, label, unit, _ in panels),
                      loc="left", fontsize=10)
    return fig


def _time_unit(values_us: Sequence[Any]) -> tuple[str, float]:
    """The unit a panel of microsecond values reads best in: ms from 1 ms up."""
    largest = max((v for v in values_us if v is not None), default=0.0)
    return ("ms", 1000.0) if largest >= 1000 else ("us", 1.0)


PERCENTILES = (50.0, 99.0, 99.9)  # marked on the histogram: the median and the tail


def latency_histogram(histograms: dict[str, list[dict[str, Any]]] | None) -> str | None:
    fig = histogram_figure(histograms)
    return None if fig is None else _svg(fig)


def single_read_histogram(histograms: dict[str, list[dict[str, Any]]] | None) -> str | None:
    """Single reads' latency as the engine timed each (the read probe), drawn as the statements' are."""
    fig = histogram_figure(histograms, title="Single read latency histogram (the engine's timer, read probe)",
                           ylabel="share of reads (log scale)")
    return None if fig is None else _svg(fig)


def histogram_figure(histograms: dict[str, list[dict[str, Any]]] | None, *,
                     title: str = "Statement latency histogram",
                     ylabel: str = "share of statements (log scale)") -> Figure | None:
    """Bars on a log scale, so the tail's few statements show beside the bulk, with where the first
    kind's (SELECT's) p50, p99 and p99.9 fall."""
    histograms = histograms or {}
    kinds = [k for k, buckets in histograms.items() if any(b["count"] for b in buckets)]
    if not kinds:
        return None
    labels = [b["bucket"] for b in histograms[kinds[0]]]
    used = [i for i in range(len(labels)) if any(histograms[k][i]["count"] for k in kinds)]
    lo, hi = min(used), max(used)
    labels = labels[lo:hi + 1]
    fig = Figure(figsize=(WIDTH, HEIGHT))
    ax = fig.add_subplot()
    width = 0.8 / len(kinds)
    names = {"select": "SELECT", "update": "UPDATE+COMMIT", "scan": "scan"}
    for n, kind in enumerate(kinds):
        pcts = [b["pct"] for b in histograms[kind][lo:hi + 1]]
        ax.bar([i + n * width - 0.4 + width / 2 for i in range(len(labels))], pcts, width=width,
               label=names.get(kind, kind))
    ax.set_yscale("log")
    smallest = min(b["pct"] for k in kinds for b in histograms[k] if b["count"])
    ax.set_ylim(smallest / 2, 150)
    styles = dict(zip(PERCENTILES, ("--", "-.", ":")))
    for q, x in _percentile_positions(histograms[kinds[0]][lo:hi + 1]):
        ax.axvline(x, color="#333333", lw=1.0, ls=styles[q], label=f"{names.get(kinds[0], kinds[0])} p{q:g}")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}%"))
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(title, loc="left", fontsize=10)
    return fig


def _percentile_positions(buckets: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Where each percentile falls on the bar axis: its bucket, and how far into it the cumulative
    share reaches it (linear within the bucket)."""
    out, below = [], 0.0
    total = sum(b["pct"] for b in buckets) or 1.0
    remaining = list(PERCENTILES)
    for i, b in enumerate(buckets):
        share = 100.0 * b["pct"] / total
        while remaining and share and below + share >= remaining[0]:
            q = remaining.pop(0)
            out.append((q, i - 0.5 + (q - below) / share))
        below += share
    return out


def events(shares: list[list[Any]] | None) -> str | None:
    top = (shares or [])[:10]
    if not top:
        return None
    fig = Figure(figsize=(WIDTH, 0.35 * len(top) + 0.8))
    ax = fig.add_subplot()
    names = [e for e, _, _ in top][::-1]
    pcts = [p for _, _, p in top][::-1]
    ax.barh(names, pcts, color="#1f5fa8")
    for y, p in enumerate(pcts):
        ax.text(p, y, f" {p:.1f}%", va="center", fontsize=8)
    ax.set_xlabel("% of session time")
    ax.grid(axis="y", visible=False)
    ax.set_title("Top events", loc="left", fontsize=10)
    return _svg(fig)


def cpu(series: dict[str, list[Any]] | None) -> str | None:
    fig = cpu_figure(series)
    return None if fig is None else _svg(fig)


def cpu_figure(series: dict[str, list[Any]] | None) -> Figure | None:
    series = _whole_intervals(series)
    t = series.get("to_s") or []
    if len(t) < 2 or not any(series.get("host_user_pct") or []):
        return None
    fig = Figure(figsize=(WIDTH, HEIGHT))
    ax = fig.add_subplot()
    parts = [("user", series["host_user_pct"]), ("system", series["host_system_pct"])]
    if any(series.get("host_unsampled_pct") or []):  # busy time no tick counted (results since it is kept)
        parts.append(("busy, unsampled", series["host_unsampled_pct"]))
    parts.append(("I/O wait", series["host_iowait_pct"]))
    if any(series.get("host_steal_pct") or []):  # time the hypervisor gave to others (results since it is kept)
        parts.append(("steal", series["host_steal_pct"]))
    ax.stackplot(t, *[[v or 0.0 for v in values] for _, values in parts], labels=[n for n, _ in parts], alpha=0.85)
    ax.set_ylim(0, 100)
    ax.set_xlabel(SERIES_X)
    ax.set_ylabel("% of host CPU")
    # beside the plot, never over the stacked areas (a busy host fills the whole height)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    ax.set_title("Host CPU", loc="left", fontsize=10)
    return fig


def _none_nan(values: Sequence[Any]) -> list[float]:
    return [float("nan") if v is None else v for v in values]


def _curve_axes(title: str, curves: dict[str, Any] | None) -> tuple[Figure, Any, list[dict[str, Any]]] | None:
    lines = [c for c in (curves or {}).get("lines", []) if c["points"]]
    if not lines:
        return None
    fig = Figure(figsize=(WIDTH, HEIGHT))
    ax = fig.add_subplot()
    ax.set_title(title, loc="left", fontsize=10)
    return fig, ax, lines


def sweep_iops(curves: dict[str, Any] | None) -> str | None:
    made = _curve_axes("Physical reads/s", curves)
    if made is None or curves is None:
        return None
    fig, ax, lines = made
    for line in lines:
        drawn = ax.plot([p["x"] for p in line["points"]], [p["iops"] for p in line["points"]], marker="o", ms=3,
                        label=line["label"])
        _raw_curve(ax, line, "raw_iops", drawn[0].get_color())
        _error_bars(ax, line, "iops", drawn[0].get_color())
    _not_storage(ax, lines, "x", "iops")
    _sweep_x(ax, curves)
    ax.set_ylabel("reads/s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig)


def _error_bars(ax: Any, line: dict[str, Any], key: str, color: str, value_key: str | None = None) -> None:
    """sweep --repeat: each point's min and max over its step's rounds, as a bar through its median."""
    points = [p for p in line["points"] if p.get(f"{key}_low") is not None and p.get(value_key or key) is not None]
    if not points:
        return
    ys = [p[value_key or key] for p in points]
    ax.errorbar([p["x"] for p in points], ys, yerr=[[y - p[f"{key}_low"] for y, p in zip(ys, points)],
                                                      [p[f"{key}_high"] - y for y, p in zip(ys, points)]],
                fmt="none", ecolor=color, elinewidth=1, capsize=3)


def sweep_latency(curves: dict[str, Any] | None) -> str | None:
    made = _curve_axes("Average physical read latency", curves)
    if made is None or curves is None:
        return None
    fig, ax, lines = made
    for line in lines:
        drawn = ax.plot([p["x"] for p in line["points"]], _none_nan([p["latency_us"] for p in line["points"]]),
                        marker="o", ms=3, label=line["label"])
        _raw_curve(ax, line, "raw_latency_us", drawn[0].get_color())
        _error_bars(ax, line, "latency", drawn[0].get_color(), "latency_us")
        # the part of each read the sessions spent queued for a CPU: how much of the rise is the host's (a per-read
        # figure: not under a curve of statement latency)
        if all(p["read_latency"] for p in line["points"]):
            _companion(ax, line, "cpu_wait_us", drawn[0].get_color(), "of which waiting for a CPU", ":", ".")
    _not_storage(ax, lines, "x", "latency_us")
    _sweep_x(ax, curves)
    ax.set_ylabel("microseconds")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig)


def sweep_latency_vs_iops(curves: dict[str, Any] | None) -> str | None:
    made = _curve_axes("Latency against throughput", curves)
    if made is None:
        return None
    fig, ax, lines = made
    for line in lines:
        ax.plot([p["iops"] for p in line["points"]], _none_nan([p["latency_us"] for p in line["points"]]),
                marker="o", ms=3, label=line["label"])
        for p in line["points"]:
            ax.annotate(str(p["x"]), (p["iops"], p["latency_us"] or 0), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
    _not_storage(ax, lines, "iops", "latency_us")
    ax.set_xlabel("reads/s (points labelled with the swept value)")
    ax.set_ylabel("avg read latency (us)")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig)


def _raw_curve(ax: Any, line: dict[str, Any], key: str, color: str) -> None:
    """fio's figure at each step's sessions (sweep --baseline), dashed in the database curve's colour."""
    _companion(ax, line, key, color, "raw (fio)", "--", "x")


def _companion(ax: Any, line: dict[str, Any], key: str, color: str, what: str, style: str, marker: str) -> None:
    """Another figure of the same steps, in the database curve's colour, where the steps have it."""
    points = [p for p in line["points"] if p.get(key) is not None]
    if points:
        ax.plot([p["x"] for p in points], [p[key] for p in points], linestyle=style, marker=marker, ms=3,
                color=color, label=f"{line['label']}: {what}")


def _not_storage(ax: Any, lines: list[dict[str, Any]], x: str, y: str) -> None:
    """Steps whose reads storage was not shown to serve (INVALID: a cache, memory) ringed in red and named in
    the legend: on a curve of storage figures they would otherwise read as storage's."""
    points = [p for line in lines for p in line["points"] if p.get("invalid") and p.get(y) is not None]
    if points:
        ax.scatter([p[x] for p in points], [p[y] for p in points], s=90, facecolors="none", edgecolors="#c0392b",
                   linewidths=1.5, zorder=5, label="not a storage result (INVALID)")


def _sweep_x(ax: Any, curves: dict[str, Any]) -> None:
    xs = sorted({p["x"] for line in curves["lines"] for p in line["points"] if isinstance(p["x"], (int, float))})
    if curves.get("x") == "sessions" and xs and xs[-1] / max(xs[0], 1) >= 8:
        ax.set_xscale("log", base=2)
    if xs and len(xs) <= 16:
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
    ax.set_xlabel(curves.get("x", ""))


def _overlay(overlay: dict[str, Any] | None, key: str, title: str, ylabel: str) -> str | None:
    lines = [line for line in (overlay or {}).get("lines", []) if any(v is not None for v in line[key])]
    if not lines:
        return None
    fig = Figure(figsize=(WIDTH, HEIGHT))
    ax = fig.add_subplot()
    for line in lines:
        ax.plot(line["t"], _none_nan(line[key]), lw=1.3, label=line["label"])
    ax.set_xlabel("seconds since the measured window opened")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, frameon=False)
    ax.set_title(title, loc="left", fontsize=10)
    return _svg(fig)


def overlay_iops(overlay: dict[str, Any] | None) -> str | None:
    return _overlay(overlay, "reads_per_s", "Physical reads/s, overlaid", "reads/s")


def overlay_latency(overlay: dict[str, Any] | None) -> str | None:
    return _overlay(overlay, "avg_read_us", "Average physical read latency, overlaid", "microseconds")


def overlay_histogram(histograms: dict[str, list[dict[str, Any]]] | None) -> str | None:
    per = {name: buckets for name, buckets in (histograms or {}).items() if buckets}
    if not per:
        return None
    labels = [b["bucket"] for b in next(iter(per.values()))]
    used = [i for i in range(len(labels)) if any(buckets[i]["count"] for buckets in per.values())]
    if not used:
        return None
    lo, hi = min(used), max(used)
    fig = Figure(figsize=(WIDTH, HEIGHT))
    ax = fig.add_subplot()
    width = 0.8 / len(per)
    for n, (name, buckets) in enumerate(per.items()):
        ax.bar([i + n * width - 0.4 + width / 2 for i in range(hi - lo + 1)], [b["pct"] for b in buckets[lo:hi + 1]],
               width=width, label=name)
    ax.set_xticks(range(hi - lo + 1), labels[lo:hi + 1], fontsize=8)
    ax.set_ylabel("% of SELECTs")
    ax.legend(fontsize=8, frameon=False)
    ax.set_title("SELECT latency histogram, side by side", loc="left", fontsize=10)
    return _svg(fig)


def history_trend(trend: dict[str, Any] | None) -> str | None:
    """Reads/s of each configuration's runs over time; a ring marks a change beyond the runs' noise, a cross a
    run that did not measure storage (its reads/s are not the storage's)."""
    groups = {name: g for name, g in (trend or {}).items() if g.get("t")}
    if not groups:
        return None
    fig = Figure(figsize=(WIDTH, HEIGHT + 0.6))
    ax = fig.add_subplot()
    for name, g in groups.items():
        when = [datetime.fromtimestamp(t, timezone.utc) for t in g["t"]]
        # datetimes plot through matplotlib's date converter, which its stubs do not know
        line, = ax.plot(when, _none_nan(g["reads_per_s"]),  # type: ignore[arg-type]
                        lw=1.2, marker="o", ms=3, label=name)
        for t, v, valid, beyond in zip(when, g["reads_per_s"], g["valid"], g["beyond"]):
            if v is None:
                continue
            if not valid:
                ax.plot([t], [v], marker="x", ms=7, color="#b03a48", ls="none")  # type: ignore[arg-type]
            if beyond:
                ax.plot([t], [v], marker="o", ms=10, mfc="none",  # type: ignore[arg-type]
                        mec=line.get_color(), mew=1.5, ls="none")
    ax.xaxis.set_major_formatter(matplotlib.dates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
    ax.set_ylabel("reads/s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title("Physical reads/s over time, by configuration (ring: change beyond the runs' noise; "
                 "x: not a storage result)", loc="left", fontsize=9)
    return _svg(fig)


def sweep_rate_latency(rate_curve: dict[str, Any] | None) -> str | None:
    """sweep --rate: p50 and p99 from the intended start, and the service p99, against the rate achieved; a step
    whose rate was not held is drawn apart (an open red marker at the rate it achieved, labelled with the rate
    asked), never joined to the curve of the held ones."""
    lines = [c for c in (rate_curve or {}).get("lines", []) if c["points"]]
    if not lines:
        return None
    every = [v for c in lines for p in c["points"] for v in (p["p50_us"], p["p99_us"], p["service_p99_us"])
             if v is not None]
    if not every:
        return None
    unit, scale = _time_unit(every)
    fig = Figure(figsize=(WIDTH, HEIGHT * 1.3))
    ax = fig.add_subplot()
    ax.set_title("Latency against the rate achieved", loc="left", fontsize=10)
    several = len(lines) > 1
    for line in lines:
        held = [p for p in line["points"] if p["held"] is True and p["achieved"]]
        name = f"{line['label']}: " if several else ""
        color = None
        for key, what, style, marker in (("p99_us", "p99 from intended start", "-", "s"),
                                         ("p50_us", "p50 from intended start", "-", "o"),
                                         ("service_p99_us", "service p99 (SELECT)", "--", "^")):
            shown = [p for p in held if p[key] is not None]
            if shown:
                drawn = ax.plot([p["achieved"] for p in shown], [p[key] / scale for p in shown], linestyle=style,
                                marker=marker, ms=4, color=color, label=f"{name}{what}")
                if several:  # each curve its colour, its figures told apart by line and marker
                    color = color or drawn[0].get_color()
    missed = [p for line in lines for p in line["points"] if p["held"] is not True and p["achieved"]]
    if missed:
        for key, marker in (("p99_us", "s"), ("p50_us", "o")):
            shown = [p for p in missed if p[key] is not None]
            ax.scatter([p["achieved"] for p in shown], [p[key] / scale for p in shown], s=40, marker=marker,
                       facecolors="none", edgecolors="#c0392b", linewidths=1.2, zorder=5,
                       label="rate not held (at the rate achieved): p99, p50" if key == "p99_us" else None)
        for p in missed:
            if p["p99_us"] is not None:
                ax.annotate(f"asked {p['asked']:,.0f}/s", (p["achieved"], p["p99_us"] / scale), fontsize=7,
                            xytext=(4, 4), textcoords="offset points", color="#c0392b")
    if max(every) / max(min(every), 1e-9) >= 50:  # a queue's seconds beside a held step's milliseconds
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    ax.set_xlabel("statements/s achieved")
    ax.set_ylabel(unit)
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig)
