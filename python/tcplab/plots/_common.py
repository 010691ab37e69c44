"""Figure set-up shared by the plot functions: Agg canvas, units, labels, legends."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

WIDTH_IN = 9.0
"""Default figure width (inches)."""

RASTER_POINTS = 20_000
"""Artists with more points than this are rasterized in vector output (SVG stays small)."""

UNSET_SSTHRESH = 2**62
"""ssthresh values at or above this are the core's "unlimited" (u64::MAX) marker."""


def new_figure(
    nrows: int = 1, *, height: float | None = None, sharex: bool = True, sharey: bool = False
) -> tuple[Figure, list[Axes]]:
    """A Figure on an Agg canvas (no pyplot state) with `nrows` stacked axes."""
    if height is None:
        height = 4.5 if nrows == 1 else min(2.2 * nrows + 1.0, 16.0)
    fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, 1, sharex=sharex, sharey=sharey, squeeze=False)[:, 0]
    for ax in axes:
        ax.grid(True, color="0.88", linewidth=0.6)
        ax.set_axisbelow(True)
    return fig, list(axes)


def bytes_unit(max_value: float) -> tuple[float, str]:
    """(divisor, unit) to show byte counts up to `max_value` (decimal: KB = 1000 bytes)."""
    for divisor, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if max_value >= 10 * divisor:
            return divisor, unit
    return 1.0, "bytes"


def rate_unit(max_bps: float) -> tuple[float, str]:
    """(divisor, unit) to show rates up to `max_bps` bits per second."""
    for divisor, unit in ((1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")):
        if max_bps >= divisor:
            return divisor, unit
    return 1.0, "b/s"


def flow_labels(df: pl.DataFrame) -> dict[int, str]:
    """Flow id -> label (its name when the frame has `flow_name`, else "flow <id>")."""
    ids = sorted(int(f) for f in df["flow"].unique())
    labels = {f: f"flow {f}" for f in ids}
    if "flow_name" in df.columns:
        for f, name in df.select("flow", "flow_name").unique(subset="flow").iter_rows():
            if name is not None:
                labels[int(f)] = name
    return labels


def legend(ax: Axes, *, title: str | None = None) -> None:
    """A legend in a column to the right of the axes, where it never hides data."""
    handles, _ = ax.get_legend_handles_labels()
    if not handles:
        return
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0.0,
        title=title,
        fontsize="small",
        ncols=1 if len(handles) <= 20 else 2,
    )


def rasterize_if_large(artist: Artist, points: int) -> None:
    """Rasterize `artist` in vector output when it draws more than RASTER_POINTS points."""
    if points > RASTER_POINTS:
        artist.set_rasterized(True)


def time_window(
    df: pl.DataFrame, start_s: float | None, end_s: float | None, column: str = "time_s"
) -> pl.DataFrame:
    """Rows with `column` inside [start_s, end_s] (either bound optional)."""
    if start_s is not None:
        df = df.filter(pl.col(column) >= start_s)
    if end_s is not None:
        df = df.filter(pl.col(column) <= end_s)
    return df


def select_flows(df: pl.DataFrame, flows: Sequence[int | str] | None) -> pl.DataFrame:
    """Rows of the given flows (ids or names); all when None."""
    from tcplab.analysis._frames import filter_flows

    return filter_flows(df, flows)
