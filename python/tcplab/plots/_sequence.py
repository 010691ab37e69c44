"""Sequence number vs time for one flow, in the style of tcptrace."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from tcplab.analysis._frames import ACK, ACK_DIR, flow_id, select_tap
from tcplab.analysis.tcpevents import dupack_events, mark_retransmissions
from tcplab.plots._common import (
    bytes_unit,
    new_figure,
    rasterize_if_large,
    time_window,
)


def sequence(
    capture: pl.DataFrame,
    flow: int | str,
    *,
    tap: int | None = None,
    start_s: float | None = None,
    end_s: float | None = None,
    window: bool = True,
    dupacks: bool = True,
    title: str | None = None,
) -> Figure:
    """tcptrace-style time-sequence graph of one TCP flow from a capture.

    Each data segment is a vertical bar from `seq` to `seq + len` at the time it passes the
    tap; retransmissions (a range seen before, or marked by the simulator) in red; the ACK
    line (highest ACK number) as a step line; with `window`, the receiver's advertised window
    edge (ACK + window) as a thin step line, when it lies within the range of the data and
    ACKs for at least half the time (the y axis is scaled to those); with `dupacks`,
    duplicate ACKs as small marks on the ACK line. Sequence numbers are relative (first data
    byte = 1).
    """
    f = flow_id(capture, flow)
    packets = select_tap(capture, tap).filter(pl.col("flow") == f)
    data = mark_retransmissions(packets)
    if "retransmit" in data.columns:
        data = data.with_columns(
            retransmitted=pl.col("retransmitted") | (pl.col("retransmit") != 0)
        )
    data = time_window(data, start_s, end_s)
    acks = time_window(
        packets.filter((pl.col("dir") == ACK_DIR) & ((pl.col("flags") & ACK) != 0)),
        start_s,
        end_s,
    )

    lows, highs = [], []
    if not data.is_empty():
        lows.append(float(data["seq"].min()))
        highs.append(float((data["seq"] + data["len"]).max()))
    if not acks.is_empty():
        lows.append(float(acks["ack"].min()))
        highs.append(float(acks["ack"].max()))
    top = max(highs, default=0.0)
    divisor, unit = bytes_unit(top)
    fig, (ax,) = new_figure(height=5.5)

    for resent, color, label in ((False, "tab:blue", "data"), (True, "tab:red", "retransmission")):
        rows = data.filter(pl.col("retransmitted") == resent)
        if rows.is_empty():
            continue
        t = rows["time_s"].to_numpy()
        low = rows["seq"].to_numpy().astype(float) / divisor
        high = (rows["seq"] + rows["len"]).to_numpy().astype(float) / divisor
        # One path of vertical bars separated by NaN: much faster than a LineCollection.
        gap = np.full_like(t, np.nan)
        (bars,) = ax.plot(
            np.column_stack((t, t, gap)).ravel(),
            np.column_stack((low, high, gap)).ravel(),
            color=color,
            linewidth=1.6 if resent else 1.0,
            solid_capstyle="butt",
            label=label,
            zorder=3 if resent else 2,
        )
        rasterize_if_large(bars, len(t))
        if resent:
            ax.plot(t, high, linestyle="none", marker="o", markersize=3, color=color, zorder=3)

    if not acks.is_empty():
        t = acks["time_s"].to_numpy()
        ack = np.maximum.accumulate(acks["ack"].to_numpy().astype(float))
        (line,) = ax.plot(
            t, ack / divisor, drawstyle="steps-post", color="tab:green", linewidth=1.0, label="ACK"
        )
        rasterize_if_large(line, len(t))
        edge = np.array([np.inf])
        if window and "window" in acks.columns:
            edge = (acks["ack"] + acks["window"]).to_numpy().astype(float) / divisor
        # Drawn only when it lies within the range of the data for at least half the time
        # (see the y limits below); a window far above the data would be a stray line.
        if np.median(edge) <= top / divisor:
            (line,) = ax.plot(
                t,
                edge,
                drawstyle="steps-post",
                color="goldenrod",
                linewidth=0.8,
                label="advertised window",
            )
            rasterize_if_large(line, len(t))
        if dupacks and "sack_blocks" in capture.columns:
            dup = time_window(
                dupack_events(capture.filter(pl.col("flow") == f), tap), start_s, end_s
            )
            if not dup.is_empty():
                (line,) = ax.plot(
                    dup["time_s"].to_numpy(),
                    dup["ack"].to_numpy().astype(float) / divisor,
                    linestyle="none",
                    marker="_",
                    markersize=6,
                    color="0.3",
                    label="duplicate ACK",
                )
                rasterize_if_large(line, len(dup))

    if highs:
        # Scale to the data and ACKs: the window edge (often far above) may leave the top.
        low, high = min(lows) / divisor, top / divisor
        pad = max((high - low) * 0.04, 1e-9)
        ax.set_ylim(low - pad, high + pad)
    name = _flow_name(packets, f)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"relative sequence number ({unit})")
    ax.set_title(title or f"Time-sequence graph: {name}")
    # The graph climbs from lower left to upper right: the lower right corner is free.
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="lower right", fontsize="small", framealpha=0.9)
    return fig


def _flow_name(packets: pl.DataFrame, flow: int) -> str:
    """The flow's name when the capture has one, else "flow <id>"."""
    if "flow_name" in packets.columns and not packets.is_empty():
        name = packets["flow_name"][0]
        if name is not None:
            return name
    return f"flow {flow}"
