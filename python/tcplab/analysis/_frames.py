"""Shared helpers for the analysis functions: column checks, tap selection, flow names.

The capture schema (trace `capture`): time_s (f64, first bit on the wire at the tap), tap
(u32), flow (u32), dir (u32: 0 = data direction src→dst, 1 = reverse/ACK direction), seq
(u64, relative, first data byte = 1), ack (u64), len (u32, payload bytes), flags (u32: FIN=1
SYN=2 RST=4 PSH=8 ACK=16), ip_len (u32), window (u64 bytes), sack_blocks (u32), retransmit
(u32 0/1, the simulator's own marking).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

FIN = 1
SYN = 2
RST = 4
PSH = 8
ACK = 16

DATA_DIR = 0
"""`dir` value of packets in the data direction (src → dst)."""
ACK_DIR = 1
"""`dir` value of packets in the reverse (ACK) direction (dst → src)."""

CAPTURE_COLUMNS = ("time_s", "flow", "dir", "seq", "ack", "len", "flags")
"""Capture columns every capture-based function needs (others are checked where used)."""

EPS = 1e-9
"""Relative slack when a time is compared with a bin boundary computed in floating point."""


def require(df: pl.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise ValueError naming the missing columns if `df` lacks any of `columns`."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"{what}: missing column(s) {', '.join(missing)} (have: {', '.join(df.columns)})"
        )


def is_capture(df: pl.DataFrame) -> bool:
    """Whether `df` looks like a capture (it has the per-packet header columns)."""
    return {"dir", "seq", "len"} <= set(df.columns)


def select_tap(capture: pl.DataFrame, tap: int | None) -> pl.DataFrame:
    """The rows of one tap, sorted by time (stable: rows at one instant keep their order).

    With `tap=None` the capture must hold a single tap (or have no `tap` column); otherwise
    the same packet would be counted once per tap, so ValueError asks for a choice.
    """
    require(capture, CAPTURE_COLUMNS, "capture")
    if "tap" in capture.columns:
        if tap is None:
            taps = capture["tap"].unique().sort().to_list()
            if len(taps) > 1:
                raise ValueError(f"capture holds taps {taps}: pass tap= to choose one")
        else:
            capture = capture.filter(pl.col("tap") == tap)
    return capture.sort("time_s", maintain_order=True)


def is_tcp() -> pl.Expr:
    """True for TCP segments: every TCP segment carries SYN or ACK, UDP datagrams have flags 0."""
    return (pl.col("flags") & (SYN | ACK)) != 0


def data_packets() -> pl.Expr:
    """Data-direction packets carrying payload (TCP segments or UDP datagrams)."""
    return (pl.col("dir") == DATA_DIR) & (pl.col("len") > 0)


def flow_names(df: pl.DataFrame) -> pl.DataFrame | None:
    """The distinct (flow, flow_name) pairs of `df`, or None when it has no `flow_name`."""
    if "flow_name" not in df.columns or "flow" not in df.columns:
        return None
    return df.select("flow", "flow_name").unique(subset="flow", keep="first")


def with_names(out: pl.DataFrame, source: pl.DataFrame) -> pl.DataFrame:
    """`out` with a `flow_name` column after `flow`, when `source` has flow names."""
    names = flow_names(source)
    if names is None or "flow" not in out.columns or "flow_name" in out.columns:
        return out
    names = names.with_columns(pl.col("flow").cast(out.schema["flow"]))
    joined = out.join(names, on="flow", how="left", maintain_order="left")
    columns = list(out.columns)
    columns.insert(columns.index("flow") + 1, "flow_name")
    return joined.select(columns)


def filter_flows(df: pl.DataFrame, flows: Iterable[int | str] | None) -> pl.DataFrame:
    """Rows of the given flows (ids, or names matched against `flow_name`); all if None."""
    if flows is None:
        return df
    ids = [f for f in flows if not isinstance(f, str)]
    names = [f for f in flows if isinstance(f, str)]
    if names and "flow_name" not in df.columns:
        raise ValueError(f"flows {names} given by name but the frame has no flow_name column")
    condition = pl.col("flow").is_in(ids)
    if names:
        condition = condition | pl.col("flow_name").is_in(names)
    return df.filter(condition)


def flow_id(df: pl.DataFrame, flow: int | str) -> int:
    """The id of `flow` (an id, or a name looked up in `flow_name`)."""
    if not isinstance(flow, str):
        return int(flow)
    if "flow_name" not in df.columns:
        raise ValueError(f"flow {flow!r} given by name but the frame has no flow_name column")
    ids = df.filter(pl.col("flow_name") == flow)["flow"].unique().to_list()
    if not ids:
        raise ValueError(f"no flow named {flow!r}")
    return int(ids[0])
