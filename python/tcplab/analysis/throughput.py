"""Per-flow throughput in fixed time bins, and goodput over a window.

Two sources:
- the `throughput` trace (time_s = bin end, flow, bytes delivered to the receiving application
  in the bin, bps): re-binned into coarser bins that are whole multiples of its interval;
- a `capture`: payload bytes of the data direction per flow, binned by the time each packet
  passes the tap.
"""

from __future__ import annotations

import math

import polars as pl

from tcplab.analysis._frames import (
    ACK,
    ACK_DIR,
    EPS,
    data_packets,
    is_capture,
    is_tcp,
    require,
    select_tap,
    with_names,
)
from tcplab.analysis.tcpevents import mark_retransmissions

__all__ = ["goodput", "throughput_bins", "trace_interval"]

_OUT_COLUMNS = ["flow", "start_s", "end_s", "bytes", "bps"]


def trace_interval(throughput: pl.DataFrame) -> float:
    """The bin width (s) of a `throughput` trace: the smallest gap between distinct bin ends,
    or the single bin end when there is only one (bins start at 0)."""
    require(throughput, ("time_s",), "throughput trace")
    times = throughput["time_s"].unique().sort()
    if len(times) == 0:
        raise ValueError("throughput trace is empty: cannot infer its interval")
    if len(times) == 1:
        return float(times[0])
    return float(times.diff().drop_nulls().min())


def throughput_bins(
    df: pl.DataFrame,
    bin_s: float | None = None,
    *,
    start_s: float = 0.0,
    end_s: float | None = None,
    tap: int | None = None,
    retransmissions: bool = True,
    interval_s: float | None = None,
) -> pl.DataFrame:
    """Per-flow throughput in bins of `bin_s` seconds, from a throughput trace or a capture.

    Returns one row per flow and bin, every flow in every bin (zeros where nothing was
    counted), sorted by flow then time: flow (and flow_name when the input has it), start_s
    and end_s (s, the bin's extent), bytes (in the bin) and bps (bits per second,
    `8 * bytes / (end_s - start_s)`). Bins are aligned to `start_s`.

    From the `throughput` trace (bytes delivered to the receiver): `bin_s` must be a whole
    multiple of the trace interval (inferred, or `interval_s`), and `start_s` a multiple of
    it; `bin_s=None` keeps the trace's own bins. A last bin that the trace only partly covers
    ends where the trace ends (its bps is over the covered time). `end_s` drops trace bins
    ending after it.

    From a `capture`: bytes are the payload (`len`) of data-direction packets, counted in the
    bin in which the packet's first bit passed the tap. By default retransmissions count
    (this is what the wire at the tap carried); `retransmissions=False` drops packets whose
    sequence range the tap had already seen (see `retransmissions()`), which approximates the
    rate of new data. UDP datagrams always count. `bin_s` is required. Without `end_s` the
    bins run whole up to the one holding the last packet of the capture (any direction);
    with `end_s` the last bin is cut there. `tap` selects one tap of a multi-tap capture.
    """
    if bin_s is not None and not bin_s > 0:
        raise ValueError(f"bin_s must be positive, got {bin_s}")
    if is_capture(df):
        if bin_s is None:
            raise ValueError("bin_s is required for a capture")
        return _capture_bins(df, bin_s, start_s, end_s, tap, retransmissions)
    return _trace_bins(df, bin_s, start_s, end_s, interval_s)


def _trace_bins(
    df: pl.DataFrame,
    bin_s: float | None,
    start_s: float,
    end_s: float | None,
    interval_s: float | None,
) -> pl.DataFrame:
    """Re-bin a `throughput` trace (see throughput_bins)."""
    require(df, ("time_s", "flow", "bytes"), "throughput trace")
    if df.is_empty():
        return _empty(df)
    step = interval_s if interval_s is not None else trace_interval(df)
    per_bin = _whole_multiple(bin_s if bin_s is not None else step, step, "bin_s")
    first = _whole_multiple(start_s, step, "start_s") if start_s else 0
    # Original bin k (0-based) covers [k*step, (k+1)*step); time_s is its end.
    k = ((pl.col("time_s") / step).round(0).cast(pl.Int64) - 1).alias("k")
    rows = df.with_columns(k).filter(pl.col("k") >= first)
    if end_s is not None:
        rows = rows.filter(pl.col("time_s") <= end_s * (1 + EPS) + EPS)
    if rows.is_empty():
        return _empty(df)
    rows = rows.with_columns(j=(pl.col("k") - first) // per_bin)
    # How far the trace reaches in each new bin (over all flows).
    cover = rows.group_by("j").agg(last_k=pl.col("k").max())
    sums = rows.group_by("flow", "j").agg(pl.col("bytes").sum().cast(pl.Int64))
    grid = (
        rows.select(pl.col("flow").unique())
        .join(cover, how="cross")
        .join(sums, on=["flow", "j"], how="left")
        .with_columns(pl.col("bytes").fill_null(0))
    )
    out = grid.with_columns(
        start_s=(first + pl.col("j") * per_bin) * step,
        end_s=(pl.col("last_k") + 1) * step,
    )
    return _finish(out, df)


def _capture_bins(
    capture: pl.DataFrame,
    bin_s: float,
    start_s: float,
    end_s: float | None,
    tap: int | None,
    retransmissions: bool,
) -> pl.DataFrame:
    """Bin the data-direction payload of a capture (see throughput_bins)."""
    packets = select_tap(capture, tap)
    if packets.is_empty():
        return _empty(capture)
    if end_s is None:
        last = float(packets["time_s"].max())
        bins = math.floor((last - start_s) / bin_s * (1 + EPS) + EPS) + 1
        end_s = start_s + bins * bin_s
    else:
        bins = max(math.ceil((end_s - start_s) / bin_s * (1 - EPS) - EPS), 1)
    packets = packets.with_row_index("row")
    data = packets.filter(data_packets())
    if not retransmissions:
        resent = mark_retransmissions(packets).filter(pl.col("retransmitted"))["row"]
        data = data.filter(~pl.col("row").is_in(resent.implode()))
    flows = data.select(pl.col("flow").unique())
    data = data.filter((pl.col("time_s") >= start_s) & (pl.col("time_s") <= end_s))
    index = ((pl.col("time_s") - start_s) / bin_s * (1 + EPS) + EPS).floor().cast(pl.Int64)
    data = data.with_columns(j=pl.min_horizontal(index, pl.lit(bins - 1)))
    sums = data.group_by("flow", "j").agg(pl.col("len").sum().cast(pl.Int64).alias("bytes"))
    grid = (
        flows.join(pl.DataFrame({"j": range(bins)}, schema={"j": pl.Int64}), how="cross")
        .join(sums, on=["flow", "j"], how="left")
        .with_columns(pl.col("bytes").fill_null(0))
    )
    out = grid.with_columns(
        start_s=start_s + pl.col("j") * bin_s,
        end_s=pl.min_horizontal(start_s + (pl.col("j") + 1) * bin_s, pl.lit(end_s)),
    )
    return _finish(out, capture)


def _finish(out: pl.DataFrame, source: pl.DataFrame) -> pl.DataFrame:
    """Add bps, order rows and columns, attach flow names."""
    out = out.with_columns(
        bps=pl.col("bytes") * 8.0 / (pl.col("end_s") - pl.col("start_s")),
    ).sort("flow", "start_s")
    return with_names(out.select(_OUT_COLUMNS), source)


def _empty(source: pl.DataFrame) -> pl.DataFrame:
    """An empty result with the output schema."""
    out = pl.DataFrame(
        schema={
            "flow": pl.UInt32,
            "start_s": pl.Float64,
            "end_s": pl.Float64,
            "bytes": pl.Int64,
            "bps": pl.Float64,
        }
    )
    if "flow_name" in source.columns:
        out = out.insert_column(1, pl.Series("flow_name", [], dtype=pl.String))
    return out


def _whole_multiple(value: float, step: float, name: str) -> int:
    """`value / step` as an integer, or ValueError when it is not (nearly) whole."""
    ratio = value / step
    n = round(ratio)
    if n < 0 or abs(ratio - n) > 1e-6 * max(1.0, abs(ratio)):
        raise ValueError(
            f"{name}={value} is not a whole multiple of the throughput trace interval {step} s "
            "(use a capture, or record the trace with a finer throughput_interval)"
        )
    return n


def goodput(
    df: pl.DataFrame,
    start_s: float | None = None,
    end_s: float | None = None,
    *,
    tap: int | None = None,
) -> pl.DataFrame:
    """Goodput per flow (application payload delivered per second) over a window.

    From the `throughput` trace: the bytes delivered in the trace bins lying inside
    [start_s, end_s] (default: the whole trace), divided by the time those bins span.

    From a capture: bytes acknowledged, i.e. the advance of the highest ACK number of the
    flow's ACK-direction packets from the last one at or before `start_s` (or 1, the first
    data byte, when there was none) to the highest one at or before `end_s`, capped at the
    highest data byte sent (so the ACK of a FIN does not count). Defaults: the first and last
    packet times of the (tap's) capture. TCP flows only: a tap cannot tell what a UDP receiver
    got (use the throughput trace).

    Returns flow (and flow_name), bytes, duration_s (s) and goodput_bps (bits per second).
    """
    if is_capture(df):
        return _capture_goodput(df, start_s, end_s, tap)
    require(df, ("time_s", "flow", "bytes"), "throughput trace")
    step = trace_interval(df)
    rows = df.filter(pl.col("time_s") - step >= (start_s or 0.0) - EPS * max(step, 1.0))
    if end_s is not None:
        rows = rows.filter(pl.col("time_s") <= end_s * (1 + EPS) + EPS)
    if rows.is_empty():
        raise ValueError(f"no throughput trace bins inside [{start_s}, {end_s}]")
    duration = len(rows["time_s"].unique()) * step
    out = (
        rows.group_by("flow")
        .agg(pl.col("bytes").sum().cast(pl.Int64))
        .with_columns(duration_s=pl.lit(duration))
    )
    return _goodput_finish(out, df)


def _capture_goodput(
    capture: pl.DataFrame, start_s: float | None, end_s: float | None, tap: int | None
) -> pl.DataFrame:
    """Goodput from ACK advance in a capture (see goodput)."""
    packets = select_tap(capture, tap).filter(is_tcp())
    if packets.is_empty():
        raise ValueError("capture holds no TCP packets")
    start = float(packets["time_s"].min()) if start_s is None else start_s
    end = float(packets["time_s"].max()) if end_s is None else end_s
    if not end > start:
        raise ValueError(f"empty window [{start}, {end}]")
    data_end = (
        packets.filter(data_packets())
        .group_by("flow")
        .agg(data_end=(pl.col("seq") + pl.col("len")).max().cast(pl.Int64))
    )
    acks = packets.filter((pl.col("dir") == ACK_DIR) & ((pl.col("flags") & ACK) != 0))
    ack = pl.col("ack").cast(pl.Int64)
    before = acks.filter(pl.col("time_s") <= start).group_by("flow").agg(base=ack.max())
    upto = acks.filter(pl.col("time_s") <= end).group_by("flow").agg(top=ack.max())
    out = (
        packets.select(pl.col("flow").unique())
        .join(data_end, on="flow", how="left")
        .join(before, on="flow", how="left")
        .join(upto, on="flow", how="left")
        .with_columns(
            pl.col("data_end").fill_null(1),
            pl.col("base").fill_null(1),
            pl.col("top").fill_null(1),
        )
        .with_columns(
            bytes=pl.max_horizontal(
                pl.min_horizontal("top", "data_end") - pl.min_horizontal("base", "data_end"),
                pl.lit(0),
            ),
            duration_s=pl.lit(end - start),
        )
    )
    return _goodput_finish(out, capture)


def _goodput_finish(out: pl.DataFrame, source: pl.DataFrame) -> pl.DataFrame:
    """Add goodput_bps, order rows and columns, attach flow names."""
    out = out.with_columns(goodput_bps=pl.col("bytes") * 8.0 / pl.col("duration_s"))
    out = out.select("flow", "bytes", "duration_s", "goodput_bps").sort("flow")
    return with_names(out, source)
