"""Aggregating a sweep table over seeds: mean and Student-t confidence interval per axis point."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tcplab.analysis.stats import t_quantile

__all__ = ["axis_columns", "metric_columns", "sweep_summary"]

_FIXED_BEFORE_METRICS = ("seed", "key", "scenario_hash", "wall_time_s", "error")


def axis_columns(table: pl.DataFrame) -> list[str]:
    """The axis columns of a sweep table: those between `point` and `seed`."""
    columns = table.columns
    if "point" not in columns or "seed" not in columns:
        raise ValueError("not a sweep table: expected the columns 'point' and 'seed'")
    return columns[columns.index("point") + 1 : columns.index("seed")]


def metric_columns(table: pl.DataFrame) -> list[str]:
    """The metric columns of a sweep table: those after `error`."""
    columns = table.columns
    if "error" not in columns:
        raise ValueError("not a sweep table: expected the column 'error'")
    return columns[columns.index("error") + 1 :]


def sweep_summary(
    table: pl.DataFrame,
    by: str | Sequence[str] | None = None,
    value: str | Sequence[str] | None = None,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Mean and confidence interval of `value` over the runs of each group of `by`.

    `table` is a sweep table (`tcplab.sweep` or `results.parquet`). `by` defaults to every axis
    column (one group per axis point, over its seeds); `value` to every metric column (and may
    name `wall_time_s`). Failed runs (non-null `error`) are left out and counted.

    Returns one row per group and value, groups in order of first appearance: the `by` columns,
    `metric`, `runs` (rows in the group), `failed`, `n` (non-null values used), `mean`, `std`
    (sample standard deviation), `ci` (half-width of the two-sided Student-t interval at
    `confidence`: t·std/√n), `low` and `high` (mean ∓ ci). With n = 1, std and ci are null.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    by = axis_columns(table) if by is None else [by] if isinstance(by, str) else list(by)
    values = (
        metric_columns(table)
        if value is None
        else [value]
        if isinstance(value, str)
        else list(value)
    )
    for column in [*by, *values]:
        if column not in table.columns:
            raise ValueError(f"no column {column!r} in the sweep table")
    for column in values:
        if not table.schema[column].is_numeric() and table.schema[column] != pl.Null:
            raise ValueError(f"column {column!r} is not numeric")

    ok = pl.col("error").is_null()
    frames = []
    for column in values:
        x = pl.col(column).filter(ok).cast(pl.Float64)
        aggregations = [
            pl.len().cast(pl.Int64).alias("runs"),
            (~ok).sum().cast(pl.Int64).alias("failed"),
            x.count().cast(pl.Int64).alias("n"),
            x.mean().alias("mean"),
            x.std(ddof=1).alias("std"),
        ]
        if by:
            frame = table.group_by(by, maintain_order=True).agg(aggregations)
        else:
            frame = table.select(aggregations)
        frames.append(
            frame.with_columns(pl.lit(column).alias("metric")).select(
                *by, "metric", "runs", "failed", "n", "mean", "std"
            )
        )
    if not frames:
        raise ValueError("no value columns to summarise")
    if by:
        order = table.select(by).unique(maintain_order=True).with_row_index("_group")
        summary = pl.concat(frames).join(order, on=by, how="left", nulls_equal=True)
        summary = summary.sort("_group", maintain_order=True).drop("_group")
    else:
        summary = pl.concat(frames)
    t = pl.Series(
        "t",
        [t_quantile((1 + confidence) / 2, n - 1) if n >= 2 else None for n in summary["n"]],
        dtype=pl.Float64,
    )
    ci = (t * summary["std"] / summary["n"].cast(pl.Float64).sqrt()).alias("ci")
    return summary.with_columns(ci).with_columns(
        (pl.col("mean") - pl.col("ci")).alias("low"), (pl.col("mean") + pl.col("ci")).alias("high")
    )
