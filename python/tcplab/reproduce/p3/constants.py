"""Study 003's constants: the shipped scenarios, the link, the criteria (dev/p3/FINDINGS.md,
fixed before any run), the plan's grids."""

from __future__ import annotations

STUDY = "p3_imtcp"
"""The shipped scenarios' directory (`scenarios/p3_imtcp/`)."""
SEED_FILE = "shared/seeds/003_6f729dd2efbb7574.txt"
"""The slides the findings quote."""

LINK = "r1->dn"
"""The bottleneck (watched by `trace.link_usage`)."""
MEASURED = "imtcp"
"""The ImTCP flow of the accuracy scenarios."""
BG = "bg"
"""The background flow of background.toml."""

STEADY_S = 5.0
"""FINDINGS "Per-seed metric": the first 5 s (slow start, the first measurements) excluded."""
RECOVER_TOL = 0.10
"""F7: a result within ±10 % (ours) of the new truth has found it."""
RECOVER_MEDIAN = 5
"""F7: median measurements to recover ≤ 5 (ours: 「数回」)."""
ACC_MEDIAN = 0.10
"""F21: median |Â − A|/A ≤ 10 % (ours)."""
ACC_P90 = 0.25
"""F21: 90th percentile ≤ 25 % (ours)."""
PACKETS = 40
"""F20: 「1 回の計測あたりのストリーム数 : 4, 1 ストリームあたりのパケット数 : 10」."""
DROP_MAX = 0.05
"""F30: cross-traffic drop ≤ 5 % (ours)."""
RATIO_MIN = 0.8
"""F31: ImTCP-bg throughput / free bandwidth ≥ 0.8 (ours)."""
HZ_GRID = (100, 1_000, 10_000, 20_000, 50_000, 100_000)
"""F14: the slides' HZ table (S6)."""
PACKET_BITS = 12_000
"""1,500-byte IP packets (EVIDENCE §2.5): R_max = 12,000 bit × HZ (EVIDENCE §4)."""
RULES = ("ties-split", "pathload", "ties-excluded")
"""The trend rule, an unknown (EVIDENCE §3): the stage's default first (judged), the others beside."""
CCS = ("reno", "tcp-lp", "imtcp-bg", "ledbat")
"""S10's background controllers (LEDBAT reported beside, not judged)."""

BG_STAGE = {"flows.0.tcp.cc": "imtcp-bg", "flows.0.tcp.variant": "imtcp", "flows.0.tcp.imtcp_bg.rtt_source": "stage"}
"""ImTCP-bg's RTT samples timed from the ImTCP stage's release, not from tcp_output (an unknown:
EVIDENCE §5 "Open"); the shipped reading is "tcp"."""
LINUX_1KHZ = {"flows.0.tcp.variant": "none", "flows.0.tcp.profile": "linux-2.6.16", "flows.0.tcp.hz": 1000,
              "flows.0.tcp.ts_tick": "1ms", "flows.0.tcp.rto_granularity": "1ms"}
"""The background flow's two hosts as Linux 2.6.16 with HZ = 1000 (CONFIG_HZ_1000: jiffies, and
so TSval, tick every 1 ms): EVIDENCE §6's [R] host for TCP-LP (a Linux module; no FreeBSD TCP-LP
is known), whose one-way delay needs a timestamp clock of at most 1 kHz at both ends."""
READINGS = {
    "bg-stage": {"imtcp-bg": "imtcp-bg/stage"},
    "lp-linux-1khz": {"tcp-lp": "tcp-lp/linux-1khz"},
    "both": {"imtcp-bg": "imtcp-bg/stage", "tcp-lp": "tcp-lp/linux-1khz"},
}
"""Block D's mapped readings: which controllers' runs each replaces in the shipped set."""
