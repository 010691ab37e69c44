"""The standard set of figures for a saved run directory (`tcplab plot RESULT_DIR`)."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

import polars as pl
from matplotlib.figure import Figure

from tcplab.analysis._frames import is_tcp
from tcplab.analysis.tcpevents import retransmissions
from tcplab.outdir import check_output, make_staging, move_into_place, output_path, write_manifest
from tcplab.plots._cwnd import cwnd
from tcplab.plots._events import event_raster
from tcplab.plots._queue import queue
from tcplab.plots._sequence import sequence
from tcplab.plots._throughput import throughput

CAPTURE_BIN_S = 0.1
"""Throughput bin (s) when the figure is drawn from a capture and no bin is given."""

ZOOM_BEFORE_RTTS = 2.0
ZOOM_AFTER_RTTS = 4.0
"""The zoomed time-sequence graph spans these many RTTs before and after a flow's first
retransmission (RTT: the flow's final srtt from the summary, else ZOOM_RTT_S)."""

ZOOM_RTT_S = 0.05


def load_traces(result_dir: str | os.PathLike[str]) -> tuple[dict, dict[str, pl.DataFrame]]:
    """The metadata and the traces (name -> DataFrame) of a saved run directory.

    ValueError when `result_dir` is not a tcplab output directory.
    """
    directory = Path(result_dir)
    try:
        metadata = json.loads((directory / "metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{directory}: not a tcplab result directory ({e})") from None
    if not isinstance(metadata, dict) or metadata.get("created_by") != "tcplab":
        raise ValueError(f"{directory}: not a tcplab result directory")
    traces = {}
    for path in sorted(directory.glob("*.parquet")):
        traces[path.stem] = pl.read_parquet(path)
    return metadata, traces


def standard_figures(
    result_dir: str | os.PathLike[str], *, bin_s: float | None = None
) -> dict[str, Figure]:
    """The standard figures for a saved run, by file stem, for the traces it has:
    `throughput` (from the throughput trace, else from a capture), `cwnd`, `queue`,
    `events` (from the events trace, else from a capture) and, with a capture,
    `sequence-<flow>` per TCP flow (`sequence-<flow>-tap<k>` when it has several taps) and,
    for a flow with retransmissions, `sequence-<flow>-first-loss`: the same graph zoomed to
    a few RTTs around its first retransmission, where the detail is.

    `bin_s` re-bins the throughput figure (a multiple of the trace interval; default: the
    trace's own bins, or 0.1 s from a capture).
    """
    metadata, traces = load_traces(result_dir)
    tag = f" — {metadata.get('scenario_name', '?')} (seed {metadata.get('seed', '?')})"
    capture = traces.get("capture")
    taps = capture["tap"].unique().sort().to_list() if capture is not None else []
    figures: dict[str, Figure] = {}

    if "throughput" in traces:
        figures["throughput"] = throughput(traces["throughput"], bin_s)
    elif capture is not None and not capture.is_empty():
        figures["throughput"] = throughput(
            capture, bin_s or CAPTURE_BIN_S, tap=taps[0] if taps else None
        )
    if "cwnd" in traces and not traces["cwnd"].is_empty():
        figures["cwnd"] = cwnd(traces["cwnd"])
    if "queue" in traces and not traces["queue"].is_empty():
        figures["queue"] = queue(traces["queue"])
    if "events" in traces:
        figures["events"] = event_raster(traces["events"])
    elif capture is not None and not capture.is_empty():
        figures["events"] = event_raster(capture, tap=taps[0] if taps else None)
    if capture is not None:
        tcp = capture.filter(is_tcp())
        flows = tcp.select("flow", *(["flow_name"] if "flow_name" in tcp.columns else []))
        flows = flows.unique(subset="flow").sort("flow")
        srtt = _srtts(result_dir)
        for tap in taps:
            resent = retransmissions(capture, tap=tap)
            for row in flows.iter_rows(named=True):
                flow = row["flow"]
                name = row.get("flow_name") or f"flow{flow}"
                stem = f"sequence-{_safe(name)}" + (f"-tap{tap}" if len(taps) > 1 else "")
                figures[stem] = sequence(capture, flow, tap=tap)
                first = resent.filter(pl.col("flow") == flow)["time_s"].min()
                if first is not None:
                    rtt = srtt.get(flow) or ZOOM_RTT_S
                    figures[f"{stem}-first-loss"] = sequence(
                        capture,
                        flow,
                        tap=tap,
                        start_s=max(first - ZOOM_BEFORE_RTTS * rtt, 0.0),
                        end_s=first + ZOOM_AFTER_RTTS * rtt,
                        title=f"Time-sequence graph: {name}, around its first retransmission",
                    )

    for fig in figures.values():
        _tag(fig, tag)
    return figures


def _srtts(result_dir: str | os.PathLike[str]) -> dict[int, float]:
    """Flow id -> final smoothed RTT (s) from the run's summary.json (empty if unreadable)."""
    try:
        summary = json.loads((Path(result_dir) / "summary.json").read_text(encoding="utf-8"))
        return {f["id"]: f["srtt_s"] for f in summary["flows"] if f.get("srtt_s")}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def save_figures(
    figures: dict[str, Figure],
    out_dir: str | os.PathLike[str],
    formats: Iterable[str] = ("png", "svg"),
    *,
    dpi: int = 150,
) -> list[Path]:
    """Write each figure as `<out_dir>/<stem>.<format>`; returns the paths written.

    The figures are written to a hidden staging directory beside `out_dir` with a manifest
    listing them (`tcplab.outdir.MANIFEST`) and renamed into place as a whole. An existing
    `out_dir` is replaced only if it is empty or holds nothing but figures tcplab wrote there
    (else FileExistsError naming the first other entry: tcplab never deletes what it did not
    write), and is left as it was if writing fails.
    """
    target = output_path(out_dir)
    check_output(target, kind="plot")
    staging = make_staging(target)
    names = []
    try:
        for stem, fig in figures.items():
            for fmt in formats:
                name = f"{stem}.{fmt}"
                fig.savefig(staging / name, format=fmt, dpi=dpi)
                names.append(name)
        write_manifest(staging, "plot", names)
        check_output(target, kind="plot")  # again: the user may have added files meanwhile
        move_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [Path(out_dir) / name for name in names]


def _tag(fig: Figure, tag: str) -> None:
    """Append the run's identity to the figure's title (suptitle if it has one)."""
    if fig.get_suptitle():
        fig.suptitle(fig.get_suptitle() + tag)
    elif fig.axes:
        ax = fig.axes[0]
        ax.set_title(ax.get_title() + tag)


def _safe(name: str) -> str:
    """A file-name-safe form of a flow name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "flow"
