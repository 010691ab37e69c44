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

__all__ = ["fct", "fct_by_size", "fct_stats", "message_fct"]


def fct(
    flows: pl.DataFrame,
    *,
    line_bps: float | None = None,
    base_rtt_s: float | None = None,
    kind: str | None = "tcp",
) -> pl.DataFrame:
    """One row per flow: `name`, `size_bytes` (payload delivered), `fct_s` (finish_s −
    start_s; null while running), `ideal_s` and `slowdown` = fct_s / ideal_s.

    By default `ideal_s` is the run's own `ideal_fct_s` for each flow of known size (a bulk
    flow with `bytes`, every flow of a workload): the least time the transfer could take on
    its own path when empty — the handshake, then every segment back to back through the
    path's hops at their rates (null for a flow of unknown size). Given the bottleneck
    `line_bps` and a `base_rtt_s` instead, `ideal_s` = base_rtt_s + size·8/line_bps, the
    convention of pFabric and its successors (one RTT plus the serialization of the bytes,
    no handshake, no headers). `kind` keeps only flows of that kind (None: all).
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
        (pl.col("ideal_fct_s").cast(pl.Float64) if "ideal_fct_s" in rows.columns else pl.lit(None, dtype=pl.Float64)).alias("ideal_s"),
    )
    if line_bps is not None:
        out = out.with_columns((base_rtt_s + pl.col("size_bytes") * 8.0 / line_bps).alias("ideal_s"))
    return out.with_columns((pl.col("fct_s") / pl.col("ideal_s")).alias("slowdown"))


def message_fct(messages: pl.DataFrame) -> pl.DataFrame:
    """One row per answered request of request/response flows, from the `messages` trace
    (`result.trace("messages")`, recorded whenever a scenario has such flows): `flow` (and
    `flow_name` when present), `id`, `request_bytes`, `size_bytes` (the response's bytes),
    `issued_s`, `fct_s` (request arrival to the response's last byte), `ideal_s` (the
    request's and the response's segments back to back on the empty path) and `slowdown` =
    fct_s / ideal_s. `fct_by_size` and `fct_stats` take the result as they take `fct`'s.
    """
    require(messages, ("flow", "id", "request_bytes", "response_bytes", "issued_s", "fct_s", "ideal_s"), "messages trace")
    names = [pl.col("flow_name")] if "flow_name" in messages.columns else []
    return messages.select(
        pl.col("flow"),
        *names,
        pl.col("id"),
        pl.col("request_bytes"),
        pl.col("response_bytes").alias("size_bytes"),
        pl.col("issued_s"),
        pl.col("fct_s"),
        pl.col("ideal_s"),
        (pl.col("fct_s") / pl.col("ideal_s")).alias("slowdown"),
    )


def fct_by_size(table: pl.DataFrame, edges: Sequence[float], column: str = "slowdown", percentiles: Sequence[float] = (50, 99)) -> pl.DataFrame:
    """`fct`'s table in size bins (`edges` in bytes, increasing: bin i holds edges[i] <
    size ≤ edges[i+1]), one row per bin: `lo_bytes`, `hi_bytes`, `count` (finished flows),
    `unfinished`, `mean` and `p<q>` of `column` — the usual FCT-by-size figure of data-centre
    papers (e.g. small flows ≤ 100 KB, large ≥ 10 MB). An empty bin has count 0 and nulls.
    """
    require(table, ("size_bytes", column), "FCT table")
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"edges must be at least two increasing sizes, got {list(edges)}")
    rows = []
    for lo, hi in zip(edges, edges[1:]):
        part = table.filter((pl.col("size_bytes") > lo) & (pl.col("size_bytes") <= hi))[column]
        values = part.drop_nulls().to_numpy().astype(float)
        row: dict[str, float | None] = {"lo_bytes": float(lo), "hi_bytes": float(hi), "count": float(len(values)), "unfinished": float(part.null_count())}
        row["mean"] = float(values.mean()) if len(values) else None
        for q in percentiles:
            if not 0 <= q <= 100:
                raise ValueError(f"percentile {q} outside [0, 100]")
            row[f"p{q:g}"] = float(np.percentile(values, q)) if len(values) else None
        rows.append(row)
    return pl.DataFrame(rows)


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
