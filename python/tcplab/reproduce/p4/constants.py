"""Study 004's constants: the shipped scenarios, the host profile, the line and the paper's
grids, the criteria a point is judged by, the sweeps' metrics and the traced runs' settings.
The study's modules import them from here (none of them from another's orchestrator).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "CBR_TOP_MBPS", "COLLAPSE_TIMEOUTS", "CRITERIA", "DEADLOCK_FRACTION", "DURATION_S", "FIG5_CELLS", "KEYS",
    "LINE_CELLS_PER_S", "LINK_MBPS", "METRICS", "MTUS", "PORT", "PORT_NAME", "PORT_TAP", "PROFILE", "SCAN_MBPS", "SENDER_TAP", "SENDER_TCP", "STALL_S", "STUDY",
    "TABLE2_CELLS", "TABLE2_SOCKS_KIB", "TRACE_OVERRIDES", "WARMUP_S",
]

STUDY = "p4_atm"
"""The shipped scenarios' directory (`scenarios/p4_atm/`)."""

PROFILE: dict[str, Any] = {"profile": "freebsd-3.2"}
"""The FreeBSD 3.2 host (README A6): the `[defaults.tcp]` table of every run (it replaces the
scenario's; a test keeps the shipped scenarios' table equal to it). The profile rounds the
socket buffers as BSD's `tcp_mss` does."""

LINE_CELLS_PER_S = 353_208
"""OC-3c: 149.76 Mb/s of 53-byte cells (README A1)."""
LINK_MBPS = 149.76
DURATION_S = 10.0
"""netperf -l 10 (§2.2 L67)."""
DEADLOCK_FRACTION = 0.02
"""Deadlock: throughput at most 2 % of 有効帯域 ("2% 以下", §3.1 L86)."""
MTUS = (512, 1500, 4352, 6500, 9180)
"""Fig. 2's MTUs (§3.1 L75)."""
CBR_TOP_MBPS = 140.0
"""Figs. 5–6: 140 Mb/s is plotted where no CBR up to it deadlocks (§4.1 L130)."""
SCAN_MBPS = 10.0
"""Figs. 5–6: the step by which the search raises the CBR until deadlock (§4.1 L130; the
paper's step is not given, README A12); the first bracket is then halved to the plan's
tolerance."""

COLLAPSE_TIMEOUTS = 2.0
CRITERIA: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "deadlock": lambda r: bool(r["deadlock"]),
    "deadlock (link)": lambda r: bool(r["deadlock_link"]),
    "collapse": lambda r: bool(r["timeouts"] >= COLLAPSE_TIMEOUTS),
}
"""What a point is judged by, on its means over the seeds: the paper's deadlock (≤ 2 % of the
bandwidth left to UBR, the shipped reading), the same against the link (≤ 2 % of 149.76 Mb/s,
有効帯域's other sense, README A9), and beyond the paper the collapse — the flow lives on
retransmission timeouts (at least 2 in the 10 s, each ≥ 1 s idle) — the regime whose onset the
predictor derives, whatever the depth the throughput falls to."""

PORT_NAME = "sw->b"
"""The switch port towards the receiver (the queue at sw of the link to b): the UBR cell buffer
and the CBR stream."""
PORT = f"queue({PORT_NAME})"
"""The port's override path, by name."""
SENDER_TCP = "flows.0.tcp"
"""The path of the sender's TCP settings (MSS, socket buffers) in the shipped scenarios."""
METRICS = {
    "delivered": "sum(flows[kind=tcp].bytes_delivered)",
    "least_delivered": "min(flows[kind=tcp].bytes_delivered)",
    "segments": "sum(flows[kind=tcp].segments_sent)",
    "retransmits": "sum(flows[kind=tcp].retransmits)",
    "timeouts": "sum(flows[kind=tcp].timeouts)",
    "fast_retransmits": "sum(flows[kind=tcp].fast_retransmits)",
    "cells_dropped": f"queues[{PORT_NAME}].cells_dropped",
    "cells_discarded": f"queues[{PORT_NAME}].cells_discarded",
    "frames_damaged": f"queues[{PORT_NAME}].frames_damaged",
    "frames_discarded": f"queues[{PORT_NAME}].frames_discarded",
    "events": "events",
}

KEYS = ("scenario", "mss", "sock", "cells", "cbr_mbps", "unit", "discard", "epd", "burst")
"""The fields of a point (`runs.Spec`) a run's row carries and a summary groups by."""

FIG5_CELLS = (512, 1024, 1536)
"""Fig. 5's cell buffers, 0.5K/1K/1.5K cells (§4.1 L130; K = 1024, README A7)."""
TABLE2_SOCKS_KIB = (25, 38)
TABLE2_CELLS = 1024
"""Table 2's cell buffer: not given; 1K cells as Fig. 6's and L75's (README A10)."""

TRACE_OVERRIDES: dict[str, Any] = {
    "taps": [{"name": "sender", "link": ["a", "sw"], "pcap": False, "trace": True},
             {"name": "port", "link": ["sw", "b"], "direction": "sw", "pcap": False, "trace": True}],
    "trace": {"cwnd": True, "events": True},
}
"""A header capture on the sender's link (the paper's tcpdump at the sender, README A11), one on
the link out of the switch port (what leaves the port towards b: F10), and the sender's window
and loss events. The port's packet queue trace is not asked for: an ATM port's cells never
enter it (it held one row, 0 packets, while 165 cells were dropped)."""
SENDER_TAP, PORT_TAP = 0, 1
"""The `tap` column of the capture trace: the taps of `TRACE_OVERRIDES` in their order."""
STALL_S = 0.3
"""A stall: nothing on the sender's link, either way, for at least this long — longer than the
200 ms delayed-ACK timer, so nothing can be left in flight (a segment in the network would have
drawn an ACK)."""
WARMUP_S = 0.01
"""Sends in the first 10 ms (the initial window's burst) are left out of the per-ACK counts."""
