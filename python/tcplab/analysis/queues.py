"""Queue occupancy from the `queue` trace (one row per change of a queue's length)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from tcplab.analysis._frames import require

__all__ = ["queue_occupancy", "queue_series"]


def queue_series(queue_df: pl.DataFrame, queue: int | str | None = None) -> pl.DataFrame:
    """The rows of one queue (an id, or a name matched against `queue_name`), in time order.

    `queue=None` is allowed when the frame holds a single queue.
    """
    require(queue_df, ("time_s", "queue"), "queue trace")
    if queue is None:
        queues = queue_df["queue"].unique().to_list()
        if len(queues) > 1:
            raise ValueError(f"queue trace holds queues {sorted(queues)}: pass queue= to choose")
        rows = queue_df
    elif isinstance(queue, str):
        require(queue_df, ("queue_name",), "queue trace (queue given by name)")
        rows = queue_df.filter(pl.col("queue_name") == queue)
        if rows.is_empty():
            names = sorted(queue_df["queue_name"].unique().drop_nulls().to_list())
            raise ValueError(f"no queue named {queue!r} in the trace (have: {names})")
    else:
        rows = queue_df.filter(pl.col("queue") == queue)
        if rows.is_empty():
            raise ValueError(f"no queue {queue} in the trace")
    return rows.sort("time_s", maintain_order=True)


def queue_occupancy(
    queue_df: pl.DataFrame,
    queue: int | str | None = None,
    *,
    column: str = "packets",
    start_s: float = 0.0,
    end_s: float | None = None,
    percentiles: Sequence[float] = (50, 90, 99),
) -> dict[str, float]:
    """Time-weighted statistics of one queue's length over [start_s, end_s].

    The trace is read as a step function: each row's value holds from its time until the next
    row's (rows at one instant: the last one holds, the others last zero time). Before the
    first row the queue is empty (0). `end_s` defaults to the last row's time; `column` is
    `packets` or `bytes`.

    Returns `mean` (time-weighted), `max` (the largest value present at any instant of the
    window, including ones held for zero time), `min`, `p<q>` for each percentile q (the
    smallest value v such that the queue is ≤ v for at least q % of the window's time) and
    `duration_s`. Values are in the unit of `column`.
    """
    rows = queue_series(queue_df, queue)
    require(rows, (column,), "queue trace")
    t = rows["time_s"].to_numpy().astype(float)
    v = rows[column].to_numpy().astype(float)
    end = float(t[-1]) if end_s is None and len(t) else end_s
    if end is None or not end > start_s:
        raise ValueError(f"empty window [{start_s}, {end}]")

    # The value in effect at start_s, then every change inside the window.
    before = np.searchsorted(t, start_s, side="right")
    v_start = v[before - 1] if before > 0 else 0.0
    inside = (t > start_s) & (t <= end)
    times = np.concatenate(([start_s], t[inside]))
    values = np.concatenate(([v_start], v[inside]))
    durations = np.diff(np.concatenate((times, [end])))

    total = float(durations.sum())
    held = durations > 0
    result = {
        "mean": float(np.dot(values, durations) / total),
        "max": float(values.max()),
        "min": float(values[held].min()),
        "duration_s": total,
    }
    order = np.argsort(values[held], kind="stable")
    sorted_values = values[held][order]
    cumulative = np.cumsum(durations[held][order]) / total
    for q in percentiles:
        if not 0 <= q <= 100:
            raise ValueError(f"percentile {q} outside [0, 100]")
        i = int(np.searchsorted(cumulative, q / 100 - 1e-12, side="left"))
        result[f"p{q:g}"] = float(sorted_values[min(i, len(sorted_values) - 1)])
    return result
