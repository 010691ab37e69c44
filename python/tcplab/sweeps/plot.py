"""The sweep plot: a metric's mean over runs (seeds) with confidence-interval error bars, against
an axis, one curve per value of another; units and log axes where natural."""

from __future__ import annotations

from typing import Any

import polars as pl

from tcplab.sweeps.labels import metric_heading
from tcplab.sweeps.stats import axis_columns, sweep_summary

__all__ = ["sweep_plot"]

LOG_SPAN = 100.0
"""A positive numeric range at least this wide (max/min) is drawn on a log scale by default."""


def sweep_plot(
    table: pl.DataFrame,
    x: str,
    y: str,
    hue: str | None = None,
    confidence: float = 0.95,
    ax: Any = None,
    *,
    logx: bool | None = None,
    logy: bool | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
) -> Any:
    """Plot the mean of `y` against `x` with `confidence` intervals over the runs at each point
    (Student-t), one curve per value of `hue`; returns the matplotlib Figure.

    `table` is a sweep table (`tcplab.sweep`, `results.parquet`: failed runs are left out, and
    axes other than `x` and `hue` must have a single value, so filter the table first) or any
    frame with one row per run. Numeric `x` values are placed by value, others (`"50pkts"`) in
    table order. A metric with a unit suffix is scaled and labelled (`sum(flows.goodput_bps)`
    → "sum goodput (Mb/s)"); pass `xlabel`/`ylabel` to override. `logx`/`logy`: None (the
    default) draws a log axis when the values are positive and span `LOG_SPAN` or more.
    Draws on `ax` if given.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullFormatter

    stats = _stats(table, x, y, hue, confidence)
    name, unit, factor = metric_heading(y)
    if ax is None:
        figure = Figure(figsize=(6.4, 4.0), layout="constrained")
        FigureCanvasAgg(figure)  # savefig and rendering without pyplot, as tcplab.plots' figures
        ax = figure.add_subplot()
    else:
        figure = ax.figure

    numeric = stats.schema[x].is_numeric()
    categories = stats[x].unique(maintain_order=True).to_list()
    position = {value: i for i, value in enumerate(categories)}
    groups = (
        [(None, stats)]
        if hue is None
        else [(v, stats.filter(pl.col(hue) == v)) for v in stats[hue].unique(maintain_order=True).to_list()]
    )
    markers = "os^Dv<>p"
    for i, (value, rows) in enumerate(groups):
        xs = rows[x].to_list() if numeric else [position[v] for v in rows[x].to_list()]
        means = [float("nan") if m is None else m * factor for m in rows["__mean"].to_list()]
        below = [0.0 if m is None or lo is None else (m - lo) * factor
                 for m, lo in zip(rows["__mean"].to_list(), rows["__low"].to_list())]
        above = [0.0 if m is None or hi is None else (hi - m) * factor
                 for m, hi in zip(rows["__mean"].to_list(), rows["__high"].to_list())]
        ax.errorbar(xs, means, yerr=[below, above], marker=markers[i % len(markers)],
                    markersize=4, capsize=3, label=None if hue is None else f"{hue} = {value}")

    if not numeric:
        ax.set_xticks(range(len(categories)), [str(c) for c in categories])
    elif logx if logx is not None else _spans(categories):
        ax.set_xscale("log")
        values = sorted(float(v) for v in categories)
        if len(values) <= 16:  # plain numbers at the swept values, not 2×10⁰, 3×10⁰, …
            ax.set_xticks(values)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    shown = [m * factor for m in stats["__mean"].to_list() if m is not None]
    if logy if logy is not None else _spans(shown):
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or (f"{name} ({unit})" if unit else name))
    runs = sorted(set(stats["__n"].to_list()))
    per_point = f"{runs[0]} runs per point" if len(runs) == 1 else f"{runs[0]}–{runs[-1]} runs per point"
    ax.set_title(title or f"mean ± {confidence:.0%} CI over seeds ({per_point})", fontsize="medium")
    if hue is not None:
        ax.legend(title=None, fontsize="small")
    ax.grid(True, alpha=0.3)
    return figure


def _stats(table: pl.DataFrame, x: str, y: str, hue: str | None, confidence: float) -> pl.DataFrame:
    """Per (x, hue): `__n`, `__mean`, `__low`, `__high` (private names: x may be called `n`) — from `sweep_summary` for a sweep table, else from the
    runs' rows (the same Student-t interval)."""
    by = [x] if hue is None else [x, hue]
    if {"point", "seed", "error"} <= set(table.columns):
        for column in axis_columns(table):
            if column not in by and table[column].n_unique() > 1:
                raise ValueError(
                    f"axis {column!r} varies in the table; filter it to one value or pass it as hue"
                )
        stats = sweep_summary(table, by=by, value=y, confidence=confidence)
        return stats.select(*by, *(pl.col(c).alias(f"__{c}") for c in ("n", "mean", "low", "high")))
    from tcplab.analysis.stats import mean_ci

    for column in (x, y, *([hue] if hue else [])):
        if column not in table.columns:
            raise ValueError(f"no column {column!r} in the table (columns: {', '.join(table.columns)})")
    # Private names, so that x or hue may be called e.g. "n" or "mean".
    private = {c: f"__{i}" for i, c in enumerate(by)}
    runs = table.select(*(pl.col(c).alias(p) for c, p in private.items()), pl.col(y).alias("__y"))
    keys = list(private.values())
    order = runs.select(keys).unique(maintain_order=True)
    stats = order.join(mean_ci(runs, keys, "__y", level=confidence), on=keys, how="left")
    return stats.select(
        *(pl.col(p).alias(c) for c, p in private.items()), pl.col("n").alias("__n"),
        pl.col("mean").alias("__mean"), pl.col("ci_low").alias("__low"),
        pl.col("ci_high").alias("__high"),
    )


def _spans(values: list[Any]) -> bool:
    """Whether positive numbers span LOG_SPAN or more (max/min)."""
    numbers = [float(v) for v in values if v is not None]
    return bool(numbers) and min(numbers) > 0 and max(numbers) / min(numbers) >= LOG_SPAN
