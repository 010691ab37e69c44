"""Event raster: one row per flow, a mark per event (dupACKs, retransmissions, losses)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
from matplotlib.figure import Figure

from tcplab.analysis._frames import is_capture
from tcplab.analysis.tcpevents import (
    DEFAULT_EVENT_KINDS,
    dupack_events,
    retransmissions,
)
from tcplab.plots._common import (
    flow_labels,
    legend,
    new_figure,
    rasterize_if_large,
    select_flows,
    time_window,
)

KIND_ORDER = ["dupack", "retransmit", "fast_retransmit", "timeout", "recovery_exit"]
"""Kinds from bottom to top within a flow's row."""

KIND_STYLE = {
    "dupack": {"marker": "|", "color": "0.55", "s": 30, "label": "duplicate ACK"},
    "retransmit": {"marker": "o", "color": "tab:blue", "s": 10, "label": "retransmission"},
    "fast_retransmit": {"marker": "v", "color": "tab:orange", "s": 40, "label": "fast retransmit"},
    "timeout": {"marker": "X", "color": "tab:red", "s": 60, "label": "timeout (RTO)"},
    "recovery_exit": {"marker": "^", "color": "tab:green", "s": 30, "label": "recovery exit"},
}


def event_raster(
    df: pl.DataFrame,
    *,
    kinds: Sequence[str] | None = None,
    flows: Sequence[int | str] | None = None,
    start_s: float | None = None,
    end_s: float | None = None,
    tap: int | None = None,
    title: str | None = None,
) -> Figure:
    """Events per flow vs time: a row per flow, a marker style per kind of event.

    `df` is the `events` trace (kinds: dupack, retransmit, fast_retransmit, timeout,
    recovery_exit; only the data sender's, `end` 0) or a capture (kinds derived from the headers: dupack from
    `dupack_events`, retransmit from `retransmissions`). `kinds` picks and orders the kinds
    shown (default: all present); `flows` (ids or names) picks the rows.
    """
    events = _events(df, tap)
    events = time_window(select_flows(events, flows), start_s, end_s)
    present = [k for k in KIND_ORDER if k in set(events["kind"].unique().to_list())]
    shown = [k for k in (kinds if kinds is not None else present)]
    unknown = set(shown) - set(KIND_STYLE)
    if unknown:
        raise ValueError(f"unknown event kind(s) {sorted(unknown)}; known: {KIND_ORDER}")
    events = events.filter(pl.col("kind").is_in(shown))

    labels = flow_labels(events) if not events.is_empty() else {}
    row = {flow: i for i, flow in enumerate(labels)}
    fig, (ax,) = new_figure(height=max(2.5, 1.2 + 0.45 * max(len(row), 1)))
    spread = 0.6
    for i, kind in enumerate(shown):
        # Within a row, kinds go from top to bottom in legend order (the y axis is inverted).
        offset = (i - (len(shown) - 1) / 2) * (spread / max(len(shown), 1))
        rows = events.filter(pl.col("kind") == kind)
        if rows.is_empty():
            continue
        y = [row[f] + offset for f in rows["flow"].to_list()]
        style = dict(KIND_STYLE[kind])
        artist = ax.scatter(rows["time_s"].to_numpy(), y, linewidths=1.0, **style)
        rasterize_if_large(artist, len(y))
    if events.is_empty():
        ax.text(
            0.5, 0.5, "no events", transform=ax.transAxes, ha="center", va="center", color="0.4"
        )
    ax.set_yticks(range(len(row)), list(labels.values()))
    ax.set_ylim(max(len(row), 1) - 0.4, -0.6)  # first flow on top
    ax.set_xlabel("time (s)")
    ax.set_ylabel("flow")
    ax.set_title(title or "Events per flow")
    legend(ax)
    return fig


def _events(df: pl.DataFrame, tap: int | None) -> pl.DataFrame:
    """flow, time_s, kind (name) [, flow_name] from an events trace or a capture."""
    if is_capture(df):
        dup = dupack_events(df, tap).with_columns(kind=pl.lit("dupack"))
        resent = retransmissions(df, tap).with_columns(kind=pl.lit("retransmit"))
        columns = ["flow", "time_s", "kind"] + (["flow_name"] if "flow_name" in df.columns else [])
        return pl.concat([dup.select(columns), resent.select(columns)]).sort("time_s")
    if "kind_name" in df.columns:
        kind = pl.col("kind_name")
    else:
        kind = pl.col("kind").replace_strict(
            DEFAULT_EVENT_KINDS, default=None, return_dtype=pl.String
        )
    columns = [pl.col("flow"), pl.col("time_s"), kind.alias("kind")]
    if "flow_name" in df.columns:
        columns.append(pl.col("flow_name"))
    if "end" in df.columns:  # the data sender's events (a two-way application's replies aside)
        df = df.filter(pl.col("end") == 0)
    return df.select(columns)
