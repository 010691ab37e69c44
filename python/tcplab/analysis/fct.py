"""Flow-completion times: per flow, the time from its start to its last byte's arrival, and
its slowdown against the same transfer alone on an idle path.

Input: a Result's flow table (`result.flows`), or the `flows` list of a saved summary.json
turned into a DataFrame. A flow that has not finished has a null FCT (it is never dropped
silently: `fct_stats` counts it in `unfinished`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from tcplab.analysis._frames import require

__all__ = ["fct", "fct_stats"]


def fct(
    flows: pl.DataFrame,
    *,
    line_bps: float | None = None,
    base_rtt_s: float | None = None,
    kind: str | None = "tcp",
) -> pl.DataFrame:
    """One row per flow: `name`, `size_bytes` (payload delivered), `fct_s` (finish_s −
    start_s; null while running) and, given the path's bottleneck `line_bps` and
    propagation `base_rtt_s`, `ideal_s` = base_rtt_s + size·8/line_bps (the convention of
    pFabric and its successors: one RTT plus the serialization of the bytes) and
    `slowdown` = fct_s / ideal_s (≥ 1 up to the handshake and slow start a real transfer
    adds). `kind` keeps only flows of that kind (None: all).
    """
    require(flows, ("name", "start_s", "finish_s", "bytes_delivered"), "flow table")
    if (line_bps is None) != (base_rtt_s is None):
        raise ValueError("give both line_bps and base_rtt_s for the slowdown, or neither")
    if line_bps is not None and not line_bps > 0:
        raise ValueError(f"line_bps must be positive, got {line_bps}")
    if base_rtt_s is not None and not base_rtt_s >= 0:
        raise ValueError(f"base_rtt_s must be non-negative, got {base_rtt_s}")
    rows = flows
    if kind is not None:
        require(flows, ("kind",), "flow table")
        rows = rows.filter(pl.col("kind") == kind)
    out = rows.select(
        pl.col("name"),
        pl.col("bytes_delivered").alias("size_bytes"),
        (pl.col("finish_s").cast(pl.Float64) - pl.col("start_s")).alias("fct_s"),
    )
    if line_bps is not None:
        out = out.with_columns((base_rtt_s + pl.col("size_bytes") * 8.0 / line_bps).alias("ideal_s"))
        out = out.with_columns((pl.col("fct_s") / pl.col("ideal_s")).alias("slowdown"))
    return out


def fct_stats(table: pl.DataFrame, column: str = "fct_s", percentiles: Sequence[float] = (50, 99)) -> dict[str, float]:
    """Over the finished flows of `fct`'s table: `count`, `unfinished`, `mean` and `p<q>` of
    `column` (`fct_s` or `slowdown`) for each q, interpolated between order statistics
    (numpy's default). Raises ValueError when no flow has finished.
    """
    require(table, (column,), "FCT table")
    values = table[column].drop_nulls().to_numpy().astype(float)
    unfinished = table[column].null_count()
    if len(values) == 0:
        raise ValueError(f"no finished flow in the table ({unfinished} unfinished)")
    result = {"count": float(len(values)), "unfinished": float(unfinished), "mean": float(values.mean())}
    for q in percentiles:
        if not 0 <= q <= 100:
            raise ValueError(f"percentile {q} outside [0, 100]")
        result[f"p{q:g}"] = float(np.percentile(values, q))
    return result
