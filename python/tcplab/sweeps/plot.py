"""A first sweep plot: a metric's mean over seeds with confidence-interval error bars."""

from __future__ import annotations

from typing import Any

import polars as pl

from tcplab.sweeps.stats import axis_columns, sweep_summary

__all__ = ["sweep_plot"]


def sweep_plot(
    table: pl.DataFrame,
    x: str,
    y: str,
    hue: str | None = None,
    confidence: float = 0.95,
    ax: Any = None,
) -> Any:
    """Plot the mean of metric `y` against axis `x` with `confidence` intervals over seeds.

    `table` is a sweep table (`tcplab.sweep` or `results.parquet`); `hue` is another axis, one
    line per value. Axes other than `x` and `hue` must have a single value (filter the table
    first). Numeric `x` values are placed by value, others (e.g. "50pkts") in sweep order.
    Draws on `ax` if given; returns the matplotlib Figure.
    """
    from matplotlib.figure import Figure

    by = [x] if hue is None else [x, hue]
    for column in axis_columns(table):
        if column not in by and table[column].n_unique() > 1:
            raise ValueError(
                f"axis {column!r} varies in the table; filter it to one value or pass it as hue"
            )
    stats = sweep_summary(table, by=by, value=y, confidence=confidence)
    if ax is None:
        figure = Figure(figsize=(6.4, 4.0), layout="constrained")
        ax = figure.add_subplot()
    else:
        figure = ax.figure

    numeric = stats.schema[x].is_numeric()
    categories = stats[x].unique(maintain_order=True).to_list()
    position = {value: i for i, value in enumerate(categories)}
    groups = (
        [(None, stats)]
        if hue is None
        else [
            (value, stats.filter(pl.col(hue) == value))
            for value in stats[hue].unique(maintain_order=True).to_list()
        ]
    )
    for value, rows in groups:
        xs = rows[x].to_list() if numeric else [position[v] for v in rows[x].to_list()]
        means = [float("nan") if m is None else m for m in rows["mean"].to_list()]
        errors = [0.0 if c is None else c for c in rows["ci"].to_list()]
        ax.errorbar(
            xs,
            means,
            yerr=errors,
            marker="o",
            markersize=4,
            capsize=3,
            label=None if hue is None else f"{hue} = {value}",
        )
    if not numeric:
        ax.set_xticks(range(len(categories)), [str(c) for c in categories])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"mean ± {confidence:.0%} CI over seeds", fontsize="medium")
    if hue is not None:
        ax.legend(title=None, fontsize="small")
    ax.grid(True, alpha=0.3)
    return figure
