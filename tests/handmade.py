"""Small hand-made frames (a capture, throughput, events and queue traces) for the analysis
and plot tests; the expected answers are worked out in the tests."""

import polars as pl

SYN, ACK, FIN = 2, 16, 1

# ---------------------------------------------------------------------------------------------
# A hand-made capture (one tap). Flow 0 "a": handshake, three segments, an ACK of the first,
# then duplicates (the third with a changed window and no SACK: not a duplicate), a
# retransmission of the second segment, the ACK of everything, FIN and its ACK. Flow 1 "b":
# handshake, one 500-byte segment, its ACK and the receiver's FIN. Flow 2 "u": UDP (flags 0).
# Columns: time_s, flow, dir, seq, ack, len, flags, window, sack_blocks, retransmit.
CAPTURE_ROWS = [
    (0.000, 0, 0, 0, 0, 0, SYN, 65535, 0, 0),
    (0.005, 1, 0, 0, 0, 0, SYN, 65535, 0, 0),
    (0.010, 0, 1, 0, 1, 0, SYN | ACK, 10000, 0, 0),
    (0.012, 2, 0, 0, 0, 1000, 0, 0, 0, 0),
    (0.015, 1, 1, 0, 1, 0, SYN | ACK, 10000, 0, 0),
    (0.020, 0, 0, 1, 1, 0, ACK, 10000, 0, 0),
    (0.020, 0, 0, 1, 1, 1000, ACK, 10000, 0, 0),
    (0.021, 0, 0, 1001, 1, 1000, ACK, 10000, 0, 0),
    (0.022, 0, 0, 2001, 1, 1000, ACK, 10000, 0, 0),
    (0.025, 1, 0, 1, 1, 500, ACK, 10000, 0, 0),
    (0.030, 0, 1, 1, 1001, 0, ACK, 10000, 0, 0),
    (0.031, 0, 1, 1, 1001, 0, ACK, 10000, 0, 0),  # dupACK 1
    (0.032, 0, 1, 1, 1001, 0, ACK, 10000, 1, 0),  # dupACK 2 (same window, and SACK)
    (0.033, 0, 1, 1, 1001, 0, ACK, 9000, 0, 0),  # window changed, no SACK: not a dupACK
    (0.034, 0, 1, 1, 1001, 0, ACK, 9000, 0, 0),  # dupACK 1 of a new run
    (0.040, 0, 0, 1001, 1, 1000, ACK, 10000, 0, 1),  # retransmission
    (0.045, 1, 1, 1, 501, 0, ACK, 10000, 0, 0),
    (0.046, 1, 1, 1, 501, 0, FIN | ACK, 10000, 0, 0),  # FIN: not a dupACK
    (0.050, 0, 1, 1, 3001, 0, ACK, 10000, 0, 0),
    (0.052, 2, 0, 1, 0, 1000, 0, 0, 0, 0),
    (0.060, 0, 0, 3001, 1, 0, FIN | ACK, 10000, 0, 0),
    (0.070, 0, 1, 1, 3002, 0, ACK, 10000, 0, 0),
]
NAMES = {0: "a", 1: "b", 2: "u"}


def capture(rows=CAPTURE_ROWS, tap=0):
    columns = [
        "time_s",
        "flow",
        "dir",
        "seq",
        "ack",
        "len",
        "flags",
        "window",
        "sack_blocks",
        "retransmit",
    ]
    frame = pl.DataFrame(
        [dict(zip(columns, r, strict=True)) for r in rows],
        schema={
            "time_s": pl.Float64,
            "flow": pl.UInt32,
            "dir": pl.UInt32,
            "seq": pl.UInt64,
            "ack": pl.UInt64,
            "len": pl.UInt32,
            "flags": pl.UInt32,
            "window": pl.UInt64,
            "sack_blocks": pl.UInt32,
            "retransmit": pl.UInt32,
        },
        orient="row",
    )
    return frame.with_columns(
        tap=pl.lit(tap, dtype=pl.UInt32),
        ip_len=pl.col("len") + 40,
        flow_name=pl.col("flow").replace_strict(NAMES, return_dtype=pl.String),
    )


# A throughput trace with 100 ms bins (time_s = bin end): flow 0 delivers 100, 200, ... 600
# bytes, flow 1 0, 0, 10, 20, 30, 40.
def throughput_trace(bins=6):
    rows = []
    for k in range(1, bins + 1):
        rows.append({"time_s": k / 10, "flow": 0, "bytes": 100 * k})
        rows.append({"time_s": k / 10, "flow": 1, "bytes": max(0, 10 * (k - 2))})
    frame = pl.DataFrame(rows, schema={"time_s": pl.Float64, "flow": pl.UInt32, "bytes": pl.UInt64})
    return frame.with_columns(
        bps=pl.col("bytes") * 8 / 0.1,
        flow_name=pl.col("flow").replace_strict(NAMES, return_dtype=pl.String),
    )


EVENTS = pl.DataFrame(
    {
        "time_s": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
        "flow": [1, 1, 0, 2, 0, 2],
        "kind": [4, 0, 1, 3, 0, 0],
        "seq": [10, 10, 20, 30, 40, 50],
    },
    schema={"time_s": pl.Float64, "flow": pl.UInt32, "kind": pl.UInt32, "seq": pl.UInt64},
)


QUEUE = pl.DataFrame(
    {
        "time_s": [1.0, 2.0, 2.0, 4.0, 0.5],
        "queue": [3, 3, 3, 3, 7],
        "packets": [2, 5, 4, 0, 9],
        "bytes": [3000, 7500, 6000, 0, 100],
        "queue_name": ["x->y", "x->y", "x->y", "x->y", "other"],
    },
    schema_overrides={"queue": pl.UInt32, "packets": pl.UInt64, "bytes": pl.UInt64},
)
