"""Queue length vs time."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
from matplotlib.figure import Figure

from tcplab.analysis._frames import require
from tcplab.plots._common import (
    bytes_unit,
    legend,
    new_figure,
    rasterize_if_large,
    time_window,
)


def queue(
    queue_df: pl.DataFrame,
    *,
    queues: Sequence[int | str] | None = None,
    column: str = "packets",
    start_s: float | None = None,
    end_s: float | None = None,
    title: str | None = None,
) -> Figure:
    """Length of each queue vs time (a step line per queue, from the `queue` trace).

    `column` is `packets` or `bytes` (shown in bytes, KB or MB); `queues` picks queues by id
    or name (default: all in the trace).
    """
    if column not in ("packets", "bytes"):
        raise ValueError(f"column must be 'packets' or 'bytes', got {column!r}")
    require(queue_df, ("time_s", "queue", column), "queue trace")
    rows = time_window(queue_df, start_s, end_s)
    if queues is not None:
        ids = [q for q in queues if not isinstance(q, str)]
        names = [q for q in queues if isinstance(q, str)]
        condition = pl.col("queue").is_in(ids)
        if names:
            condition = condition | pl.col("queue_name").is_in(names)
        rows = rows.filter(condition)
    if column == "bytes":
        divisor, unit = bytes_unit(float(rows["bytes"].max() or 0) if not rows.is_empty() else 0)
    else:
        divisor, unit = 1.0, "packets"

    fig, (ax,) = new_figure()
    names = []
    for (q,), series in sorted(rows.group_by("queue", maintain_order=True)):
        series = series.sort("time_s", maintain_order=True)
        name = series["queue_name"][0] if "queue_name" in series.columns else f"queue {q}"
        names.append(name)
        (line,) = ax.plot(
            series["time_s"].to_numpy(),
            series[column].to_numpy().astype(float) / divisor,
            drawstyle="steps-post",
            linewidth=0.9,
            label=name,
        )
        rasterize_if_large(line, len(series))
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"queue length ({unit})")
    ax.set_ylim(bottom=0)
    if len(names) == 1:
        ax.set_title(title or f"Queue length: {names[0]}")
    else:
        ax.set_title(title or "Queue length")
        legend(ax)
    return fig
