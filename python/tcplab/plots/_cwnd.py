"""Congestion window and data in flight vs time, a panel per flow."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from tcplab.analysis.timing import outstanding_data
from tcplab.plots._common import (
    UNSET_SSTHRESH,
    bytes_unit,
    flow_labels,
    new_figure,
    rasterize_if_large,
    select_flows,
    time_window,
)


def cwnd(
    cwnd_df: pl.DataFrame,
    *,
    flows: Sequence[int | str] | None = None,
    capture: pl.DataFrame | None = None,
    tap: int | None = None,
    start_s: float | None = None,
    end_s: float | None = None,
    ssthresh: bool = True,
    sharey: bool = True,
    max_panels: int = 8,
    title: str | None = None,
) -> Figure:
    """cwnd and data in flight of each flow vs time, one panel per flow (shared axes).

    From the `cwnd` trace: cwnd, in-flight bytes (the sender's estimate) and, with
    `ssthresh`, the slow-start threshold once it is set. With a `capture`, the outstanding
    data seen at the tap (`tcplab.analysis.outstanding_data`) is drawn too. At most
    `max_panels` flows are drawn (the first by id); the title says when some were left out.
    The panels share the y axis (`sharey=False` scales each to its flow).
    """
    rows = time_window(select_flows(cwnd_df, flows), start_s, end_s)
    labels = flow_labels(rows) if not rows.is_empty() else {}
    total = len(labels)
    labels = dict(list(labels.items())[:max_panels])

    outstanding = {}
    if capture is not None:
        for flow in labels:
            out = outstanding_data(capture, flow, tap=tap)
            outstanding[flow] = time_window(out, start_s, end_s)

    top = (
        float(rows.select(pl.max_horizontal("cwnd_bytes", "inflight_bytes")).max().item() or 0)
        if not rows.is_empty()
        else 0.0
    )
    for out in outstanding.values():
        if not out.is_empty():
            top = max(top, float(out["outstanding_bytes"].max()))
    divisor, unit = bytes_unit(top)

    fig, axes = new_figure(max(len(labels), 1), sharey=sharey)
    for ax, (flow, label) in zip(axes, labels.items(), strict=False):
        series = rows.filter(pl.col("flow") == flow).sort("time_s", maintain_order=True)
        t = series["time_s"].to_numpy()
        lines = [
            # A thin in-flight line over a thick cwnd line: both stay visible where equal.
            ("cwnd", series["cwnd_bytes"], {"color": "tab:blue", "linewidth": 2.0}),
            (
                "in flight",
                series["inflight_bytes"],
                {"color": "tab:orange", "linewidth": 0.8},
            ),
        ]
        if ssthresh:
            raw = series["ssthresh_bytes"].cast(pl.Float64).fill_null(np.nan).to_numpy().copy()
            raw[raw >= UNSET_SSTHRESH] = np.nan
            if not np.all(np.isnan(raw)):
                lines.append(
                    ("ssthresh", raw, {"color": "0.35", "linestyle": "--", "linewidth": 0.9})
                )
        for name, values, style in lines:
            y = np.asarray(values, dtype=float) / divisor
            (line,) = ax.plot(t, y, drawstyle="steps-post", label=name, **style)
            rasterize_if_large(line, len(t))
        if flow in outstanding and not outstanding[flow].is_empty():
            out = outstanding[flow]
            (line,) = ax.plot(
                out["time_s"].to_numpy(),
                out["outstanding_bytes"].to_numpy() / divisor,
                drawstyle="steps-post",
                color="tab:green",
                linewidth=0.8,
                linestyle=":",
                label="outstanding at tap",
            )
            rasterize_if_large(line, len(out))
        ax.set_ylabel(f"window ({unit})")
        ax.set_title(label, loc="left", fontsize="medium")
    # After all panels are drawn: on shared axes an earlier set_ylim would freeze the range.
    for ax in axes[:1] if sharey else axes:
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("time (s)")
    if labels:
        axes[0].legend(
            loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small"
        )
    shown = f" (first {len(labels)} of {total} flows)" if total > len(labels) else ""
    fig.suptitle((title or "Congestion window and data in flight") + shown)
    return fig
