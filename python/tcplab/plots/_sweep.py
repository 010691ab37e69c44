"""Sweep curves: the mean of a metric over runs (seeds) with a confidence band."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from tcplab.analysis.stats import mean_ci
from tcplab.plots._common import legend, new_figure


def sweep(
    df: pl.DataFrame,
    x: str,
    y: str,
    by: str | None = None,
    *,
    level: float = 0.95,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    logy: bool = False,
    title: str | None = None,
) -> Figure:
    """Mean of `y` against `x` with a Student-t confidence band over the runs at each point
    (one row per run: e.g. seed, x, y), one curve per value of `by`.

    Points with a single run get no band. Pass `xlabel`/`ylabel` with units (the defaults are
    the column names).
    """
    # Private column names, so that x or by may be called e.g. "n" or "mean".
    renamed = df.select(
        pl.col(x).alias("__x"),
        pl.col(y).alias("__y"),
        *([] if by is None else [pl.col(by).alias("__by")]),
    )
    keys = ["__x"] if by is None else ["__by", "__x"]
    stats = mean_ci(renamed, keys, "__y", level=level).sort(keys)
    fig, (ax,) = new_figure()
    groups = (
        [(None, stats)]
        if by is None
        else [
            (value, stats.filter(pl.col("__by") == value))
            for value in stats["__by"].unique().sort()
        ]
    )
    markers = "os^Dv<>p"
    for i, (value, rows) in enumerate(groups):
        xs = rows["__x"].to_numpy().astype(float)
        label = None if by is None else f"{by} = {value}"
        (line,) = ax.plot(
            xs,
            rows["mean"].to_numpy(),
            marker=markers[i % len(markers)],
            markersize=4,
            label=label,
        )
        low = rows["ci_low"].fill_null(np.nan).to_numpy().astype(float)
        high = rows["ci_high"].fill_null(np.nan).to_numpy().astype(float)
        ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    if logx:
        ax.set_xscale("log")
        # Plain numbers at the swept values rather than 2×10⁰, 3×10⁰, ...
        values = np.unique(stats["__x"].to_numpy().astype(float))
        if len(values) <= 16:
            ax.set_xticks(values)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    runs = stats["n"].unique().sort().to_list()
    per_point = (
        f"{runs[0]} runs per point" if len(runs) == 1 else f"{min(runs)}–{max(runs)} runs per point"
    )
    ax.set_title(title or f"Mean and {level:.0%} confidence interval ({per_point})")
    if by is not None:
        legend(ax)
    return fig
