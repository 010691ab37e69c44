"""Timing inside the RTT: which flow sends first in each RTT and by how much (study 000,
Figs. 6-8), packet spacing of data and ACKs, and outstanding data over time."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tcplab.analysis._frames import (
    ACK,
    ACK_DIR,
    DATA_DIR,
    EPS,
    FIN,
    SYN,
    data_packets,
    filter_flows,
    flow_id,
    is_tcp,
    select_tap,
    with_names,
)

__all__ = [
    "ack_spacing",
    "data_spacing",
    "outstanding_data",
    "send_gap_per_round",
    "send_gap_per_rtt",
    "send_order_per_rtt",
    "send_rounds",
    "spacing_stats",
]


def send_order_per_rtt(
    capture: pl.DataFrame,
    rtt_s: float,
    t0: float | None = None,
    *,
    flows: Sequence[int | str] | None = None,
    tap: int | None = None,
) -> pl.DataFrame:
    """For each RTT-long window, the order in which flows send their first data packet.

    Windows are [t0 + k·rtt_s, t0 + (k+1)·rtt_s), k = 0, 1, ... (`rtt_index`); `t0` defaults
    to the first data packet (after the handshake) of the flows ranked. Data packets are
    data-direction packets with payload, timed when their first bit passes the tap.

    Returns one row per (window, flow that sent in it), sorted by rtt_index then rank:
    rtt_index, window_start_s (s), flow (and flow_name), first_send_s (s, time of the flow's
    first data packet in the window), offset_s (first_send_s − window_start_s), rank (1 =
    first; ties go to the lower flow id), packets and bytes (data packets and payload bytes
    the flow sent in the window; Fig. 7's bursts). `flows` (ids or names) limits the flows
    ranked (e.g. to leave out a UDP stream, which would otherwise set `t0`). Pass `t0`
    explicitly to compare windows across calls with different `flows`.
    """
    if not rtt_s > 0:
        raise ValueError(f"rtt_s must be positive, got {rtt_s}")
    data = filter_flows(select_tap(capture, tap).filter(data_packets()), flows)
    if data.is_empty():
        raise ValueError("capture holds no data packets of the flows asked for")
    if t0 is None:
        t0 = float(data["time_s"].min())
    data = data.filter(pl.col("time_s") >= t0)
    index = ((pl.col("time_s") - t0) / rtt_s * (1 + EPS) + EPS).floor().cast(pl.Int64)
    out = (
        data.with_columns(rtt_index=index)
        .group_by("rtt_index", "flow")
        .agg(
            first_send_s=pl.col("time_s").min(),
            packets=pl.len().cast(pl.Int64),
            bytes=pl.col("len").sum().cast(pl.Int64),
        )
        .sort("rtt_index", "first_send_s", "flow")
        .with_columns(
            window_start_s=t0 + pl.col("rtt_index") * rtt_s,
            rank=pl.int_range(1, pl.len() + 1).over("rtt_index"),
        )
        .with_columns(offset_s=pl.col("first_send_s") - pl.col("window_start_s"))
        .select(
            "rtt_index",
            "window_start_s",
            "flow",
            "first_send_s",
            "offset_s",
            "rank",
            "packets",
            "bytes",
        )
    )
    return with_names(out, capture)


def send_gap_per_rtt(
    capture: pl.DataFrame,
    rtt_s: float,
    flow_a: int | str,
    flow_b: int | str,
    t0: float | None = None,
    *,
    tap: int | None = None,
) -> pl.DataFrame:
    """Per RTT window, flow_b's first data packet time minus flow_a's (study 000, Fig. 8).

    Windows as in `send_order_per_rtt` (`t0` defaults to the first data packet of either
    flow). Only windows in which both flows sent appear. Fixed windows cannot follow an RTT
    that grows with queueing: once the gap nears rtt_s, a flow's burst can straddle a window
    edge and the gap wraps (turns negative); pick rtt_s from the measured RTT.

    Returns rtt_index, window_start_s, first_a_s, first_b_s and gap_s (s; positive when
    flow_b sends after flow_a).
    """
    a = flow_id(capture, flow_a)
    b = flow_id(capture, flow_b)
    order = send_order_per_rtt(capture, rtt_s, t0, flows=[a, b], tap=tap)
    first = order.select("rtt_index", "window_start_s", "flow", "first_send_s")
    joined = first.filter(pl.col("flow") == a).join(
        first.filter(pl.col("flow") == b).select("rtt_index", "first_send_s"),
        on="rtt_index",
        suffix="_b",
    )
    return (
        joined.select(
            "rtt_index",
            "window_start_s",
            pl.col("first_send_s").alias("first_a_s"),
            pl.col("first_send_s_b").alias("first_b_s"),
        )
        .with_columns(gap_s=pl.col("first_b_s") - pl.col("first_a_s"))
        .sort("rtt_index")
    )


def send_rounds(
    capture: pl.DataFrame,
    idle_s: float,
    *,
    flows: Sequence[int | str] | None = None,
    tap: int | None = None,
) -> pl.DataFrame:
    """Each flow's data packets split into rounds (window-limited bursts): a new round starts
    where the flow has sent nothing for more than `idle_s` (s).

    Unlike fixed RTT windows, rounds follow an RTT that grows with queueing, so a flow's
    k-th burst is compared with another's k-th burst however late both come. Once a flow
    sends without pause (its window covers the path), its rounds run together into one.
    Returns flow, round (0, 1, ...), start_s, end_s (first and last data packet), packets and
    bytes (payload), sorted by flow then round.
    """
    if not idle_s > 0:
        raise ValueError(f"idle_s must be positive, got {idle_s}")
    data = filter_flows(select_tap(capture, tap).filter(data_packets()), flows)
    if data.is_empty():
        raise ValueError("capture holds no data packets of the flows asked for")
    gap = pl.col("time_s").diff().over("flow")
    return (
        data.sort("flow", "time_s")
        .with_columns(round=(gap > idle_s).fill_null(False).cast(pl.Int64).cum_sum().over("flow"))
        .group_by("flow", "round")
        .agg(
            start_s=pl.col("time_s").min(),
            end_s=pl.col("time_s").max(),
            packets=pl.len().cast(pl.Int64),
            bytes=pl.col("len").sum().cast(pl.Int64),
        )
        .sort("flow", "round")
    )


def send_gap_per_round(
    capture: pl.DataFrame,
    flow_a: int | str,
    flow_b: int | str,
    idle_s: float,
    *,
    tap: int | None = None,
) -> pl.DataFrame:
    """Per round (see `send_rounds`), flow_b's first data packet time minus flow_a's (study
    000, Fig. 8: "RTT内でこれら2つのストリームで最初に送られたパケット同士の時刻を比較する").

    Only rounds both flows reached appear. Returns round, first_a_s, first_b_s and gap_s (s;
    positive when flow_b sends after flow_a); the gap never wraps as fixed windows do.
    """
    a = flow_id(capture, flow_a)
    b = flow_id(capture, flow_b)
    rounds = send_rounds(capture, idle_s, flows=[a, b], tap=tap).select("flow", "round", "start_s")
    joined = rounds.filter(pl.col("flow") == a).join(rounds.filter(pl.col("flow") == b), on="round", suffix="_b")
    return (
        joined.select("round", pl.col("start_s").alias("first_a_s"), pl.col("start_s_b").alias("first_b_s"))
        .with_columns(gap_s=pl.col("first_b_s") - pl.col("first_a_s"))
        .sort("round")
    )


def _spacing(packets: pl.DataFrame, start_s: float | None, end_s: float | None) -> pl.DataFrame:
    """time_s and gap_s (time since the previous packet) of time-sorted packets in a window."""
    if start_s is not None:
        packets = packets.filter(pl.col("time_s") >= start_s)
    if end_s is not None:
        packets = packets.filter(pl.col("time_s") <= end_s)
    return (
        packets.select("time_s")
        .with_columns(gap_s=pl.col("time_s").diff())
        .filter(pl.col("gap_s").is_not_null())
    )


def data_spacing(
    capture: pl.DataFrame,
    flow: int | str,
    *,
    start_s: float | None = None,
    end_s: float | None = None,
    tap: int | None = None,
) -> pl.DataFrame:
    """Inter-departure times of one flow's data packets (payload-carrying, data direction)
    at the tap, within [start_s, end_s] when given.

    Returns one row per packet after the first: time_s (s) and gap_s (s since the flow's
    previous data packet). Summarise with `spacing_stats`.
    """
    f = flow_id(capture, flow)
    packets = select_tap(capture, tap).filter((pl.col("flow") == f) & data_packets())
    return _spacing(packets, start_s, end_s)


def ack_spacing(
    capture: pl.DataFrame,
    flow: int | str,
    *,
    start_s: float | None = None,
    end_s: float | None = None,
    new_data_only: bool = False,
    tap: int | None = None,
) -> pl.DataFrame:
    """Inter-arrival times of one flow's ACKs (reverse-direction packets with the ACK flag)
    at the tap, within [start_s, end_s] when given.

    With `new_data_only`, only ACKs that raise the highest ACK number so far count (duplicate
    ACKs are left out). Returns time_s (s) and gap_s (s since the previous counted ACK).
    Compare with `data_spacing`: ACKs that keep the data spacing carry the bottleneck's
    spacing back to the sender (ACK clocking); compressed ACKs have smaller gaps.
    """
    f = flow_id(capture, flow)
    acks = select_tap(capture, tap).filter(
        (pl.col("flow") == f) & (pl.col("dir") == ACK_DIR) & ((pl.col("flags") & ACK) != 0)
    )
    if new_data_only:
        previous_high = pl.col("ack").cum_max().shift(1)
        acks = acks.filter((pl.col("ack") > previous_high).fill_null(True))
    return _spacing(acks, start_s, end_s)


def spacing_stats(gaps: pl.DataFrame) -> dict[str, float]:
    """Summary of a `data_spacing` / `ack_spacing` frame: count, mean_s, median_s, min_s,
    max_s, std_s (sample standard deviation, ddof 1), p10_s, p90_s (the lower of the two
    order statistics around the percentile) and cv (std_s / mean_s). Times in seconds; NaN
    where undefined."""
    g = gaps["gap_s"].drop_nulls().sort()
    n = len(g)
    if n == 0:
        nan = float("nan")
        return {k: nan for k in _STAT_KEYS} | {"count": 0}
    mean = float(g.mean())
    std = float(g.std(ddof=1)) if n > 1 else float("nan")
    return {
        "count": n,
        "mean_s": mean,
        "median_s": float(g.median()),
        "min_s": float(g[0]),
        "max_s": float(g[-1]),
        "std_s": std,
        "p10_s": float(g.quantile(0.1, interpolation="lower")),
        "p90_s": float(g.quantile(0.9, interpolation="lower")),
        "cv": std / mean if mean > 0 else float("nan"),
    }


_STAT_KEYS = ("mean_s", "median_s", "min_s", "max_s", "std_s", "p10_s", "p90_s", "cv")


def outstanding_data(
    capture: pl.DataFrame, flow: int | str, *, tap: int | None = None
) -> pl.DataFrame:
    """Outstanding (sent but unacknowledged) data of one TCP flow over time, as the tap sees
    it: the highest sequence number sent so far minus the highest ACK number seen so far.

    Sequence space as in TCP (relative numbers: the SYN is 0, the first data byte 1): a data-
    direction packet reaches `seq + len`, plus 1 for SYN and for FIN. Before the first ACK the
    highest ACK is taken as 0, so an unanswered SYN is 1 byte outstanding (as in the core's
    inflight_bytes). With a tap near the sender this approximates the sender's flight size.

    Returns one row per packet of the flow (either direction), in time order: time_s (s),
    dir, highest_sent, highest_ack and outstanding_bytes (max(highest_sent − highest_ack, 0)).
    """
    f = flow_id(capture, flow)
    packets = select_tap(capture, tap).filter((pl.col("flow") == f) & is_tcp())
    syn_fin = ((pl.col("flags") & SYN) != 0).cast(pl.Int64) + ((pl.col("flags") & FIN) != 0).cast(
        pl.Int64
    )
    reach = pl.col("seq").cast(pl.Int64) + pl.col("len").cast(pl.Int64) + syn_fin
    acked = pl.col("ack").cast(pl.Int64)
    out = packets.with_columns(
        sent=pl.when(pl.col("dir") == DATA_DIR).then(reach),
        acked=pl.when((pl.col("dir") == ACK_DIR) & ((pl.col("flags") & ACK) != 0)).then(acked),
    ).with_columns(
        highest_sent=pl.col("sent").cum_max().forward_fill().fill_null(0),
        highest_ack=pl.col("acked").cum_max().forward_fill().fill_null(0),
    )
    return out.select(
        "time_s",
        "dir",
        "highest_sent",
        "highest_ack",
        outstanding_bytes=pl.max_horizontal(
            pl.col("highest_sent") - pl.col("highest_ack"), pl.lit(0)
        ),
    )
