"""TCP events per flow: duplicate ACKs and retransmissions seen in a capture, loss times
from the `events` trace, and the order in which flows first meet an event."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from tcplab.analysis._frames import (
    ACK,
    ACK_DIR,
    FIN,
    SYN,
    data_packets,
    is_tcp,
    require,
    select_tap,
    with_names,
)

__all__ = [
    "DEFAULT_EVENT_KINDS",
    "dupack_events",
    "first_occurrence_order",
    "loss_times",
    "retransmissions",
]

DEFAULT_EVENT_KINDS = {
    0: "fast_retransmit",
    1: "timeout",
    2: "recovery_exit",
    3: "retransmit",
    4: "dupack",
}
"""`events.kind` codes of the core (used when a frame has no `kind_name` column)."""


def mark_retransmissions(capture: pl.DataFrame) -> pl.DataFrame:
    """TCP data-direction payload packets of a time-sorted capture with a `retransmitted`
    column: True when the packet's first byte lies below the highest `seq + len` the flow
    had already sent (its range, or part of it, was seen before at this tap)."""
    data = capture.filter(data_packets() & is_tcp())
    end = pl.col("seq") + pl.col("len")
    previous_high = end.cum_max().shift(1).over("flow")
    return data.with_columns(
        retransmitted=(pl.col("seq") < previous_high).fill_null(False),
    )


def retransmissions(capture: pl.DataFrame, tap: int | None = None) -> pl.DataFrame:
    """Data packets whose sequence range was already seen at the tap, per flow.

    A TCP payload packet (dir 0, len > 0) is a retransmission when its first byte `seq` is
    below the highest `seq + len` of the flow's earlier packets at this tap (a full or partial
    resend). Only what the tap saw counts: a packet lost before the tap, and resent, is not
    detected. UDP datagrams (flags 0) are skipped.

    Returns one row per retransmission, in time order: flow (and flow_name when the capture
    has it), time_s (s), seq, len (bytes), and `marked` (the simulator's own `retransmit`
    flag, when the capture has that column, for comparison).
    """
    marked = mark_retransmissions(select_tap(capture, tap))
    out = marked.filter(pl.col("retransmitted"))
    columns = [pl.col("flow"), pl.col("time_s"), pl.col("seq"), pl.col("len")]
    if "retransmit" in out.columns:
        columns.append((pl.col("retransmit") != 0).alias("marked"))
    return with_names(out.select(columns), capture)


def dupack_events(capture: pl.DataFrame, tap: int | None = None) -> pl.DataFrame:
    """Duplicate ACKs per flow, from the reverse direction of a capture.

    An ACK-direction packet (dir 1, ACK flag set) is a duplicate ACK when it carries no
    payload, has neither SYN nor FIN, has the same `ack` as the previous ACK-direction packet
    of that flow, and either the same `window` as that packet or SACK blocks
    (`sack_blocks > 0`). This is RFC 5681's definition without its "sender has outstanding
    data" condition, which a tap cannot see reliably.

    Returns one row per duplicate ACK, in time order: flow (and flow_name), time_s (s), ack,
    and `dup_count`, the number of duplicates of this ack in a row so far (1, 2, 3, ...; the
    sender's fast retransmit normally follows the third).
    """
    require(capture, ("window", "sack_blocks"), "capture")
    acks = select_tap(capture, tap).filter(
        (pl.col("dir") == ACK_DIR) & ((pl.col("flags") & ACK) != 0)
    )
    duplicate = (
        (pl.col("len") == 0)
        & ((pl.col("flags") & (SYN | FIN)) == 0)
        & (pl.col("ack") == pl.col("ack").shift(1).over("flow"))
        & (
            (pl.col("window") == pl.col("window").shift(1).over("flow"))
            | (pl.col("sack_blocks") > 0)
        )
    ).fill_null(False)
    acks = acks.with_columns(duplicate=duplicate)
    acks = acks.with_columns(run=(~pl.col("duplicate")).cast(pl.Int64).cum_sum().over("flow"))
    acks = acks.with_columns(
        dup_count=pl.col("duplicate").cast(pl.Int64).cum_sum().over("flow", "run")
    )
    out = acks.filter(pl.col("duplicate")).select("flow", "time_s", "ack", "dup_count")
    return with_names(out, capture)


def loss_times(
    events: pl.DataFrame, kinds: Iterable[str] = ("fast_retransmit", "timeout")
) -> pl.DataFrame:
    """Loss-recovery events per flow from the `events` trace (default: fast retransmits and
    retransmission timeouts, the sender's reactions to a loss). Only the flow's data sender's
    events count (`end == 0` where the trace has the column: a two-way application's replies
    recover their own losses at the other end).

    Uses `kind_name` when present, else decodes `kind` with the core's codes. Returns flow
    (and flow_name), time_s (s), kind (name) and seq (the sequence number the event concerns),
    in time order.
    """
    require(events, ("time_s", "flow", "kind"), "events")
    kinds = list(kinds)
    unknown = set(kinds) - set(DEFAULT_EVENT_KINDS.values())
    if unknown:
        raise ValueError(
            f"unknown event kind(s) {sorted(unknown)}; known: {list(DEFAULT_EVENT_KINDS.values())}"
        )
    if "kind_name" in events.columns:
        name = pl.col("kind_name")
    else:
        name = pl.col("kind").replace_strict(
            DEFAULT_EVENT_KINDS, default=None, return_dtype=pl.String
        )
    columns = [pl.col("flow"), pl.col("time_s"), name.alias("kind")]
    if "seq" in events.columns:
        columns.append(pl.col("seq"))
    if "end" in events.columns:
        events = events.filter(pl.col("end") == 0)
    out = (
        events.select(columns)
        .filter(pl.col("kind").is_in(kinds))
        .sort("time_s", maintain_order=True)
    )
    return with_names(out, events)


def first_occurrence_order(df: pl.DataFrame, flows: Sequence[int] | None = None) -> list[int]:
    """Flow ids ordered by the time of their first row in `df` (any frame with flow and
    time_s: `loss_times`, `dupack_events`, `retransmissions`, ...). Ties go to the lower id.

    With `flows`, only those flows are ranked, and flows with no row are left out.
    """
    require(df, ("time_s", "flow"), "frame")
    if flows is not None:
        df = df.filter(pl.col("flow").is_in(list(flows)))
    first = df.group_by("flow").agg(pl.col("time_s").min()).sort("time_s", "flow")
    return [int(f) for f in first["flow"]]
