"""Jain's fairness index, for a set of rates and over time."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import polars as pl

from tcplab.analysis._frames import filter_flows
from tcplab.analysis.throughput import throughput_bins

__all__ = ["JainOverTime", "jain_index", "jain_over_time"]


def jain_index(values: Iterable[float] | pl.Series | np.ndarray) -> float:
    """Jain's fairness index J = (Σx)² / (n·Σx²) of non-negative values (e.g. rates).

    J is 1 when all values are equal and 1/n when one value takes everything. NaN when every
    value is 0 (no allocation to judge). ValueError for no values or a negative one.
    """
    x = np.asarray(
        list(values) if not isinstance(values, (np.ndarray, pl.Series)) else values, dtype=float
    )
    if x.size == 0:
        raise ValueError("jain_index of no values")
    if np.any(np.isnan(x)):
        raise ValueError("jain_index: NaN among the values")
    if np.any(x < 0):
        raise ValueError("jain_index: negative value")
    square_sum = float(np.sum(x * x))
    if square_sum == 0:
        return math.nan
    return float(np.sum(x)) ** 2 / (x.size * square_sum)


class JainOverTime(NamedTuple):
    """Result of `jain_over_time`.

    `overall`: Jain's index of the per-flow mean throughput over the whole window.
    `per_bin`: one row per bin: start_s, end_s (s), jain (NaN in a bin where no flow sent),
    n_flows (flows counted).
    """

    overall: float
    per_bin: pl.DataFrame


def jain_over_time(
    df: pl.DataFrame,
    bin_s: float | None = None,
    start_s: float = 0.0,
    end_s: float | None = None,
    *,
    flows: Sequence[int | str] | None = None,
    tap: int | None = None,
) -> JainOverTime:
    """Jain's index of per-flow throughput over [start_s, end_s] and per bin of `bin_s`.

    `df` is a `throughput` trace or a capture (binned with `throughput_bins`, which see for
    the rules on bins; `bin_s=None` keeps a throughput trace's own bins). `flows` (ids or
    names) limits the flows compared, e.g. to leave out a UDP stream; every flow in the
    frame counts otherwise, including ones that have not started or have finished (a flow
    with zero throughput is treated unfairly, by definition).
    """
    binned = throughput_bins(df, bin_s, start_s=start_s, end_s=end_s, tap=tap)
    binned = filter_flows(binned, flows)
    if binned.is_empty():
        raise ValueError("no throughput bins in the window")
    per_flow = binned.group_by("flow").agg(
        mean_bps=pl.col("bytes").sum() * 8.0 / (pl.col("end_s") - pl.col("start_s")).sum()
    )
    overall = jain_index(per_flow["mean_bps"])
    per_bin = (
        binned.group_by("start_s", "end_s")
        .agg(
            # (Σx)² / (n·Σx²); 0/0 gives NaN for a bin where no flow sent, as jain_index.
            jain=pl.col("bps").sum() ** 2 / (pl.len() * (pl.col("bps") ** 2).sum()),
            n_flows=pl.len().cast(pl.Int64),
        )
        .sort("start_s")
    )
    return JainOverTime(overall, per_bin)
