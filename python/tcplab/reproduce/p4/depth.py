"""Study 004, issue 33: the collapse's depth and onset mapped by mechanism, not by a factor f.

Each `Candidate` is one value of one mechanism that the scenario keys can express (extra
`[defaults.tcp]` keys after the FreeBSD 3.2 profile, or other overrides such as the receiver's
`hosts.1.jitter`). `depth_table` runs every candidate on a grid declared here, before the runs:
Fig. 2 (64 KB sockets, CBR 60 Mb/s) at MTU 1500 and 9180 over `CELLS`, and Table 2 (25 KB and
38 KB at MTU 1500) at 1K cells, over `SEEDS`; it reports per (candidate, MTU) the share of
UBR's ceiling at 1K cells (the depth; the paper's deadlock is ≤ 2 %), the knee (the least
buffer from which every larger one keeps ≥ 90 %, `checks.knee`; the paper's ≈ 3K cells), the
timeouts and the bytes delivered per timeout at 1K cells, and Table 2's two shares.
`table2_scan` finds the cell buffers at which Table 2's split appears (25 KB Good, 38 KB
deadlocked or collapsed). Every value's evidence is in scenarios/p4_atm/README.md ("Depth and
onset by mechanism (mapped)"); `Candidate.note` says in a few words where it comes from.
Not wired into `reproduce p4`:
`python -m tcplab.reproduce.p4.depth` prints both tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from tcplab.reproduce.p4.atm import mss_freebsd
from tcplab.reproduce.p4.checks import knee
from tcplab.reproduce.p4.constants import COLLAPSE_TIMEOUTS, DEADLOCK_FRACTION, TABLE2_SOCKS_KIB
from tcplab.reproduce.p4.runs import Spec, run_specs, summarise

__all__ = ["CANDIDATES", "CELLS", "MTUS", "SEEDS", "TABLE2_SCAN", "Candidate", "depth_table", "table2_scan"]

CELLS = (512, 724, 1024, 1448, 2048, 2560, 3072, 4096)
"""Fig. 2's buffers, ≈ √2 apart with the paper's 1K and 3K (the full plan's grid from 512 to 4K)."""
MTUS = (1500, 9180)
"""The MTUs whose order (F6) and depth (F3) are in question."""
SEEDS = (1, 2, 3)
TABLE2_SCAN = (384, 512, 640, 768, 896, 1024, 1152, 1280, 1536)
"""Cell buffers scanned for Table 2's split (the paper never states its buffer)."""


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One value of one mechanism."""

    mechanism: str
    value: str
    tcp: tuple[tuple[str, Any], ...] = ()
    """Keys added to `[defaults.tcp]` after the profile."""
    extra: tuple[tuple[str, Any], ...] = ()
    """Other overrides for every run (dotted paths)."""
    note: str = ""
    """Where the value comes from (the README gives the source)."""


CANDIDATES = (
    Candidate("shipped", "freebsd-3.2 profile", note="README A6"),
    Candidate("1 RTO floor", "rto_min 0.5 s (1 slow tick)", (("rto_min", "500ms"),),
              note="below the LAN RTO of rtt + 2 ticks: shows whether the floor binds"),
    Candidate("1 RTO floor", "timer_ticks off (RTO = 3 ticks exactly)", (("timer_ticks", False),),
              note="not BSD: removes the slow timer's phase (stall 1.5 s, not 1.0-1.5 s)"),
    Candidate("1 RTO floor", "rto_min 3 s (sensitivity)", (("rto_min", "3s"),),
              note="outside the evidence: BSD's RTO once backed off (REXMTVAL·2)"),
    Candidate("1 RTO floor", "timestamps on (RTT sample every ACK)", (("timestamps", True),),
              note="FreeBSD 3.2's default tcp_do_rfc1323 = 1; tcp_now on the slow timer"),
    Candidate("2 CA / slow start", "abc_limit 0 (one MSS per ACK)", (("abc_limit", 0),),
              note="4.4BSD/FreeBSD tcp_input: cwnd += maxseg per ACK, no byte counting"),
    Candidate("2 CA / slow start", "abc_limit 2 (sensitivity)", (("abc_limit", 2),),
              note="RFC 3465 L = 2, not BSD"),
    Candidate("3 initial burst", "initial_cwnd 1 (slow start)", (("initial_cwnd", 1),),
              note="4.4BSD-Lite tcp_mss: snd_cwnd = mss for every peer"),
    Candidate("4 host turnaround", "receiver jitter 0.4 ms (mean 0.2)", extra=(("hosts.1.jitter", "400us"),),
              note="uniform per ACK, FIFO; no fixed-delay key exists"),
    Candidate("4 host turnaround", "receiver jitter 1 ms (mean 0.5)", extra=(("hosts.1.jitter", "1ms"),)),
    Candidate("4 host turnaround", "receiver jitter 2 ms (mean 1)", extra=(("hosts.1.jitter", "2ms"),)),
    Candidate("4 host turnaround", "sender jitter 0.4 ms (mean 0.2)", extra=(("hosts.0.jitter", "400us"),),
              note="the sender's turnaround ACK → data; it delays every data packet too"),
)
"""The pre-declared grid of mechanisms (README, "Depth and onset by mechanism (mapped)")."""


def _specs(cells: Sequence[int] = CELLS) -> list[Spec]:
    fig2 = [Spec(mss=mss_freebsd(m), sock=65536, cells=c) for m in MTUS for c in cells]
    return fig2 + [Spec(mss=1460, sock=k * 1024, cells=1024) for k in TABLE2_SOCKS_KIB]


def _run(c: Candidate, specs: Sequence[Spec], seeds: Sequence[int], workers: int | None) -> pl.DataFrame:
    table = run_specs(specs, seeds, workers=workers, tcp=dict(c.tcp), extra=dict(c.extra), name="p4-depth")
    return summarise(table)


def depth_table(candidates: Sequence[Candidate] = CANDIDATES, seeds: Sequence[int] = SEEDS, *,
                cells: Sequence[int] = CELLS, workers: int | None = 1) -> pl.DataFrame:
    """One row per (candidate, MTU): `share_1k` (mean share of UBR's ceiling at 1K cells),
    `deadlock_1k` (≤ 2 %), `knee` (cells; None if no buffer of the grid keeps ≥ 90 %),
    `timeouts_1k`, `mb_per_timeout_1k` (bytes delivered per timeout at 1K, MB),
    `share_4k` (the ceiling kept at the top of the grid), `shares` (every buffer's share), and at MTU 1500 Table 2's shares
    and timeouts at 1K cells (`t2_25`, `t2_38`, `t2_38_timeouts`)."""
    rows: list[dict[str, Any]] = []
    for c in candidates:
        s = _run(c, _specs(cells), seeds, workers)
        for m in MTUS:
            f2 = s.filter((pl.col("mss") == mss_freebsd(m)) & (pl.col("sock") == 65536)).sort("cells")
            at = {r["cells"]: r for r in f2.iter_rows(named=True)}
            k1 = at[1024]
            row = {"mechanism": c.mechanism, "value": c.value, "mtu": m, "share_1k": k1["share"],
                   "deadlock_1k": k1["share"] <= DEADLOCK_FRACTION, "knee": knee(list(at.values())),
                   "timeouts_1k": k1["timeouts"], "share_4k": at[max(at)]["share"],
                   "shares": " ".join(f"{c}:{r['share']:.3f}" for c, r in at.items()),
                   "mb_per_timeout_1k": k1["mbps"] * 10 / 8 / k1["timeouts"] if k1["timeouts"] else None}
            if m == 1500:
                t2 = {r["sock"] // 1024: r for r in s.filter((pl.col("mss") == 1460) & (pl.col("cells") == 1024)
                                                              & (pl.col("sock") != 65536)).iter_rows(named=True)}
                small, large = TABLE2_SOCKS_KIB
                row.update(t2_25=t2[small]["share"], t2_38=t2[large]["share"], t2_38_timeouts=t2[large]["timeouts"])
            rows.append(row)
    return pl.DataFrame(rows)


def table2_scan(candidate: Candidate = CANDIDATES[0], seeds: Sequence[int] = SEEDS, *,
                cells: Sequence[int] = TABLE2_SCAN, workers: int | None = 1) -> pl.DataFrame:
    """Table 2 (MTU 1500, CBR 60, 25 KB against 38 KB) over `cells`: per buffer the shares and
    38 KB's timeouts, and whether the paper's split appears (25 KB ≥ 90 %, 38 KB ≤ 2 %:
    `split`; or 38 KB collapsed, ≥ 2 timeouts: `split_collapse`)."""
    specs = [Spec(mss=1460, sock=k * 1024, cells=c) for c in cells for k in TABLE2_SOCKS_KIB]
    s = _run(candidate, specs, seeds, workers)
    by = {(r["cells"], r["sock"] // 1024): r for r in s.iter_rows(named=True)}
    small, large = TABLE2_SOCKS_KIB
    rows = []
    for c in cells:
        a, b = by[(c, small)], by[(c, large)]
        good = a["share"] >= 0.9
        rows.append({"cells": c, "share_25": a["share"], "share_38": b["share"], "timeouts_38": b["timeouts"],
                     "split": good and b["share"] <= DEADLOCK_FRACTION,
                     "split_collapse": good and b["timeouts"] >= COLLAPSE_TIMEOUTS})
    return pl.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> Mapping[str, pl.DataFrame]:
    """Print both tables (all candidates, 3 seeds, one worker)."""
    import time

    t0 = time.time()
    pl.Config.set_tbl_rows(100).set_tbl_cols(20).set_tbl_width_chars(250).set_fmt_str_lengths(60)
    d = depth_table()
    print(d.with_columns(pl.col(pl.Float64).round(4)))
    t2 = table2_scan()
    print(t2.with_columns(pl.col(pl.Float64).round(4)))
    print(f"wall {time.time() - t0:.0f} s")
    return {"depth": d, "table2": t2}


if __name__ == "__main__":
    main()
