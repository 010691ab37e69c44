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
