"""Throughput per flow over time."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from tcplab.analysis._frames import is_capture
from tcplab.analysis.throughput import throughput_bins, trace_interval
from tcplab.plots._common import (
    flow_labels,
    legend,
    new_figure,
    rate_unit,
    select_flows,
)


def throughput(
    df: pl.DataFrame,
    bin_s: float | None = None,
    *,
    flows: Sequence[int | str] | None = None,
    start_s: float = 0.0,
    end_s: float | None = None,
    tap: int | None = None,
    retransmissions: bool = True,
    title: str | None = None,
) -> Figure:
    """Throughput of each flow vs time, one step line per flow (a step per bin).

    `df` is a `throughput` trace (re-binned to `bin_s`, a multiple of its interval; default
    its own bins) or a capture (data-direction payload per bin; `bin_s` required;
    `retransmissions=False` leaves resent data out). See `tcplab.analysis.throughput_bins`.
    The rate axis is in kb/s, Mb/s or Gb/s depending on the largest value.
    """
    binned = select_flows(
        throughput_bins(
            df, bin_s, start_s=start_s, end_s=end_s, tap=tap, retransmissions=retransmissions
        ),
        flows,
    )
    if bin_s is None and not is_capture(df) and not df.is_empty():
        bin_s = trace_interval(df)
    fig, (ax,) = new_figure()
    divisor, unit = rate_unit(float(binned["bps"].max() or 0.0))
    labels = flow_labels(binned) if not binned.is_empty() else {}
    for flow, label in labels.items():
        rows = binned.filter(pl.col("flow") == flow).sort("start_s")
        edges = np.append(rows["start_s"].to_numpy(), rows["end_s"][-1])
        values = rows["bps"].to_numpy() / divisor
        ax.plot(
            edges, np.append(values, values[-1]), drawstyle="steps-post", label=label, linewidth=1.2
        )
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"throughput ({unit})")
    ax.set_ylim(bottom=0)
    source = "at the tap" if is_capture(df) else "delivered"
    bins = f", {bin_s * 1000:g} ms bins" if bin_s else ""
    ax.set_title(title or f"Throughput per flow ({source}{bins})")
    legend(ax)
    return fig
