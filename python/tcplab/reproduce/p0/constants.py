"""Study 000's constants: the shipped scenarios, the testbed's numbers, the findings a seed is
judged on and the readings of the unknowns the map sweeps. The study's modules import them from
here (none of them from another's orchestrator)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcplab.reproduce.scenarios import study_dir

__all__ = [
    "ACK_POLICIES", "BOTTLENECK", "CASES", "FINDINGS", "FIRST_LOSS_PAPER_S", "FIRST_LOSS_TOLERANCE_S",
    "INFINITE_SSTHRESH_SEGMENTS", "MAP_STARTS", "ROUND_IDLE_S", "RTT_S", "SCENARIOS", "SEGMENT_BYTES",
    "STAGGERED_RATE_MBPS",
]

SCENARIOS: Path = study_dir("p0_parallel_bic")
"""The shipped scenario directory (inside the installed package)."""

RTT_S = 0.300
"""Base round-trip time of the testbed (2 × 150 ms), seconds."""

BOTTLENECK = "sw_recv->sw_1g"
"""Name of the bottleneck queue (the 1 Gb/s egress towards the receivers)."""

FIRST_LOSS_PAPER_S = 5.0
"""§4.1 ¶1: the streams carry the same rate "until about 5 s" (5秒付近まで), s."""

FIRST_LOSS_TOLERANCE_S = 1.5
"""How far from 5 s the first loss may come and still be "about 5 s", s: five RTTs, since the
paper reads the time off Fig. 4, whose points are 300 ms (one RTT) averages, and says only
"付近" (about)."""

SEGMENT_BYTES = 9088
"""Payload bytes per segment (iperf -M 9100 less the 12-byte timestamp option): the unit of
the cwnd trace's segments."""

STAGGERED_RATE_MBPS = (225.0, 275.0)
"""Fig. 9: "ほぼ 250Mbps" read as 250 Mb/s ± 10 % for every stream."""

FINDINGS: dict[str, str] = {
    "first_loss": f"first loss within {FIRST_LOSS_PAPER_S:g} ± {FIRST_LOSS_TOLERANCE_S:g} s",
    "exact_reverse": "losses in exactly the reverse send order",
    "unfair": "unfair over the window (Jain < 0.95)",
    "persists": "still unfair in the last 10 s (Jain < 0.95)",
    "shrinks": "gaps persist and shrink (spread late < early)",
    "first_loser_slowest": "first loser slowest",
    "staggered_fair": "staggered: fair, every stream 225–275 Mb/s",
    "staggered_full": "staggered: link ≥ 95 % used",
}
"""The findings a seed is judged on (`judge`), by key: what each means. The reproduction's
checks and the map both use them."""

ROUND_IDLE_S = 0.010
"""A pause longer than this (s) ends a flow's round (`analysis.send_rounds`): 9 KB segments
leave 0.07–0.15 ms apart within a burst, and bursts are one RTT (300 ms) apart."""

CASES = ("simultaneous", "staggered", "decp", "harmonizer")
"""The shipped scenarios the reproduction runs, each over every seed."""

MAP_STARTS = ("simultaneous", "staggered")
"""The shipped scenarios the map runs at every point (a seed is judged on both)."""

INFINITE_SSTHRESH_SEGMENTS = 0xFFFF
"""Linux 2.6.16 `tcp_update_metrics` treats ssthresh ≥ 0xFFFF segments as "slow start still
did not finish"."""

ACK_POLICIES: dict[str, dict[str, Any]] = {
    # tcp_rmem[2] large enough that the growth target never stops (the shipped model): every
    # data segment grows the window and is ACKed at once until rcv_ssthresh reaches the buffer.
    "every": {"defaults.tcp.rx_truesize": 16564, "defaults.tcp.tcp_rmem_max": 0},
    # tcp_rmem[2] = 256 MB (as large as iperf's -w): quick ACKs until rcv_ssthresh passes
    # 3/8 of it (≈ 96 MB, a few seconds after the first loss), delayed ACKs after.
    "every→delayed": {"defaults.tcp.rx_truesize": 16564, "defaults.tcp.tcp_rmem_max": 256 << 20},
    # No window growth (a receiver that offers its whole buffer at once, as a TCP offload
    # engine or Linux 6.10+ would): delayed ACKs, every second segment, from the start.
    "delayed": {"defaults.tcp.rcv_window_growth": False, "defaults.tcp.rx_truesize": 0, "defaults.tcp.tcp_rmem_max": 0},
}
"""The receivers' ACK behaviour, by name: scenario overrides."""
