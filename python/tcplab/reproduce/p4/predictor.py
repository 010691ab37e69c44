"""The paper's future work (§5 L165, "セルロスの発生する条件をモデリングしたい"): a predictor of the
deadlock boundary from first principles, and its score on the simulated Figs. 5–6 grid.

Derivation (no parameter is fitted to the simulated boundary). On a LAN nearly all of a
window is queued: the data sent and not acknowledged is either in the switch's UBR queue or in
the few places outside it. Let the line carry L cells/s, CBR take C, so UBR drains R = L − C
(cells/s, R < L: the port, not the sender's NIC, is the bottleneck). A window of N segments of
S cells is W = N·S cells. The receiver acknowledges every second segment; an ACK for segment k
leaves when k's last cell has left the switch, and the queue then holds every segment sent
after k but the two the ACK will release: (N − 2)·S cells. Those two leave the sender back to
back at the line rate, so the queue peaks when the second one's last cell is in, after the
ACK's turnaround T (propagation and serialisation of the ACK's cells and of the first data
cell) plus the two segments' serialisation 2S/L, during which the port drained R·(T + 2S/L):

    peak queue = W − R·(T + 2·S/L)

A sender held at its socket buffer repeats this every two segments, so the port overflows on
every ACK once the peak passes the UBR buffer B: cells are lost from frame after frame, Reno
without SACK cannot repair several losses in a window, and the flow lives on retransmission
timeouts (≥ 1 s each) — the deadlock. Below the line it never loses a cell. Hence:

    deadlock  ⇔  N·S − (L − C)·(T + 2S/L) > B
    critical CBR  C* = L − (N·S − B) / (T + 2S/L)        (cells/s; ×53·8 for Mb/s)

It gives the paper's regularities: C* falls linearly in the window (socket buffer) with slope
L/(T + 2S/L) per cell ≈ L/(2S), the same for every B (F16) and ∝ 1/MSS (F19); C* reaches the
top of the search where N·S ≈ B + (L − 140 Mb/s)·(T + 2S/L), a window ∝ B with a small MSS term
(F15, F18); and because N = ⌈socket/MSS⌉ (at most 65,535 bytes of window unless the buffer
asked for exceeds it, `window_segments`), C* moves in steps of one MSS (F20). A larger B, or a
socket buffer below B, never deadlocks (F1, F14).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p4.atm import cbr_cells_per_s, cells_per_packet, mss_freebsd
from tcplab.reproduce.p4.constants import CBR_TOP_MBPS, CRITERIA, LINE_CELLS_PER_S, MTUS
from tcplab.reproduce.p4.runs import summarise

__all__ = ["ACK_CELLS", "LATTICE_CBRS", "beyond", "classify", "score_view", "critical_cbr_mbps", "peak_queue_cells", "predicts_deadlock", "turnaround_s"]

LINK_DELAY_S = 5e-6
"""Each link's propagation delay in the shipped scenario (README A2)."""
ACK_CELLS = 2
"""A pure ACK (40 bytes of IP) over AAL5 with LLC/SNAP: ⌈(40 + 16)/48⌉ = 2 cells."""


def turnaround_s(delay_s: float = LINK_DELAY_S) -> float:
    """T: from the last cell of segment k leaving the switch to the first cell of the next
    burst arriving there — four propagation delays (sw→b, b→sw, sw→a, a→sw), the ACK's cells
    serialised twice (b→sw, sw→a) and the first data cell once, at the line rate. The hosts
    answer in no time (the simulator's hosts have no processing cost)."""
    return 4 * delay_s + (2 * ACK_CELLS + 1) / LINE_CELLS_PER_S


def window_segments(sock: int, mss: int) -> int:
    """Whole segments a socket buffer lets the sender keep outstanding: BSD rounds the buffer up
    to whole MSS, but asks for RFC 1323 window scaling only when the buffer as requested
    exceeds 65,535 bytes, so a smaller request offers at most 65,535 bytes (tcp_usrreq.c
    `request_r_scale`; README A6)."""
    win = math.ceil(sock / mss) * mss
    if sock <= 65_535:
        win = min(win, 65_535)
    return win // mss


def peak_queue_cells(sock: int, mss: int, cbr_mbps: float, unit: str = "cell", delay_s: float = LINK_DELAY_S) -> float:
    """The UBR queue's peak with a window of `window_segments` held by the socket buffer."""
    s = cells_per_packet(mss)
    n = window_segments(sock, mss)
    drain = LINE_CELLS_PER_S - cbr_cells_per_s(cbr_mbps, unit)
    return n * s - drain * (turnaround_s(delay_s) + 2 * s / LINE_CELLS_PER_S)


def predicts_deadlock(sock: int, mss: int, cells: float, cbr_mbps: float, unit: str = "cell") -> bool:
    """Whether the predictor puts this point in deadlock: CBR present and the peak above B."""
    return cbr_mbps > 0 and peak_queue_cells(sock, mss, cbr_mbps, unit) > cells


def critical_cbr_mbps(sock: int, mss: int, cells: float, unit: str = "cell", top: float = CBR_TOP_MBPS) -> float | None:
    """The least CBR (Mb/s in `unit`) the predictor puts in deadlock, None if none up to
    `top`; 0.0 when any CBR at all does."""
    s = cells_per_packet(mss)
    n = window_segments(sock, mss)
    hold = turnaround_s() + 2 * s / LINE_CELLS_PER_S
    c_cells = LINE_CELLS_PER_S - (n * s - cells) / hold
    mbps = c_cells * 8 * (53 if unit == "cell" else 48) / 1e6
    if mbps >= top:
        return None
    return max(mbps, 0.0)


def slope_mbps_per_kib(mss: int, unit: str = "cell") -> float:
    """The predicted fall of the critical CBR per KiB of socket buffer (averaged over the MSS
    steps): L/(T + 2S/L) cells/s per cell of window, one cell of window per MSS/S bytes."""
    s = cells_per_packet(mss)
    hold = turnaround_s() + 2 * s / LINE_CELLS_PER_S
    per_cell = 1 / hold * 8 * (53 if unit == "cell" else 48) / 1e6
    return per_cell * s / mss * 1024


def classify(points: Iterable[tuple[int, int, float, float | None]], cbrs: Sequence[float], unit: str = "cell") -> dict[str, Any]:
    """Score the predictor on a lattice: `points` are (socket bytes, MSS, cells, simulated
    critical CBR or None) and `cbrs` the CBR values; a lattice point is simulated deadlock when
    its CBR is at or above the simulated critical CBR (the search's monotonicity) and predicted
    deadlock by `predicts_deadlock`. Returns the counts and the share right."""
    right = total = false_pos = false_neg = 0
    for sock, mss, cells, sim in points:
        for c in cbrs:
            simulated = sim is not None and c >= sim
            predicted = predicts_deadlock(sock, mss, cells, c, unit)
            total += 1
            right += simulated == predicted
            false_pos += predicted and not simulated
            false_neg += simulated and not predicted
    return {"points": total, "right": right, "share": right / total if total else float("nan"),
            "false_deadlock": false_pos, "missed_deadlock": false_neg}


LATTICE_CBRS = tuple(range(5, 141, 5))
"""The CBR values (Mb/s) of the lattice the predictor is scored on (every socket buffer of the
searched curves × these)."""


def score_view(view: Any, cbrs: Sequence[float] = LATTICE_CBRS) -> dict[str, Any]:
    """The predictor on one view's Figs. 5–6 lattice: each searched (socket, CBR) is simulated
    in the view's state when its CBR is at or above the searched critical CBR."""
    pts = []
    for cells, curve in view.fig5.items():
        pts += [(k * 1024, view.mss[1500], view.f * cells, hi) for k, _, hi in curve]
    for mtu, curve in view.fig6.items():
        if mtu != 1500:
            pts += [(k * 1024, view.mss[mtu], view.f * 1024, hi) for k, _, hi in curve]
    return classify(pts, cbrs)


def beyond(data: dict[str, Any], views: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The comparisons beyond the paper (not counted in its verdict): the predictor's score,
    the search's monotonicity at the spot checks, EPD/PPD against tail drop, TCP against TCP.
    Returns the checks and the tables the report prints."""
    out, tables = [], {}
    scores = {name: score_view(v) for name, v in views.items() if v.f in (1.0, 0.5) and ("payload" not in name and "MTU − 40" not in name)}
    tables["predictor"] = scores
    tables["predictor_cbrs"] = LATTICE_CBRS
    shipped = next(iter(views))
    for name, s in scores.items():
        if name.endswith("collapse") or name == shipped:
            out.append(Check("§5 (future work)", f"the first-principles predictor classifies ≥ 90 % of the Figs. 5–6 lattice right ({name})",
                             f"{s['right']} of {s['points']} right ({s['share']:.1%}); {s['false_deadlock']} predicted in deadlock but not, {s['missed_deadlock']} missed",
                             s["share"] >= 0.9, paper=False, values=s))
    # Monotonicity of the search, at the spot checks (MTU 1500, as shipped).
    spot = summarise(data["tables"]["spot"])
    mono = {}
    for crit, judge in CRITERIA.items():
        rows = []
        for cells, sock in sorted({(r["cells"], r["sock"]) for r in spot.iter_rows(named=True)}):
            part = spot.filter((pl.col("sock") == sock) & (pl.col("cells") == cells)).sort("cbr_mbps")
            seq = [(r["cbr_mbps"], judge(r)) for r in part.iter_rows(named=True)]
            found = data["critical"].get(((1460, cells, "cell"), sock, crit))
            agree = None if found is None else all(v == (found[1] is not None and c >= found[1]) for c, v in seq)
            rows.append({"cells": cells, "sock_kib": sock // 1024, "verdicts": seq, "agrees": agree,
                         "monotone": all(not (a and not b) for (_, a), (_, b) in zip(seq, seq[1:], strict=False))})
        mono[crit] = rows
        out.append(Check("method", f"the search's monotonicity in CBR holds at the spot checks ({crit}; MTU 1500)",
                         ("; ".join(f"{r['cells']} cells {r['sock_kib']} KB: " + "".join("x" if v else "." for _, v in r["verdicts"])
                                    + ("" if r["agrees"] in (None, True) else " (the search disagrees)") for r in rows)
                          + f" (x = met, at CBR {', '.join(f'{c:g}' for c, _ in rows[0]['verdicts'])} Mb/s)") if rows else "no spot checks",
                         all(r["monotone"] for r in rows), paper=False, values={"rows": rows}))
    tables["spot"] = mono
    # EPD and PPD against tail drop (Romanow & Floyd's remedies), Fig. 2's grid.
    disc = summarise(data["tables"]["discard"])
    tail = {(m, r["cells"]): r for m in (1500, 9180) for r in views[shipped].fig2[m]}
    rows = {}
    for r in disc.iter_rows(named=True):
        mtu = 1500 if r["mss"] == 1460 else 9180
        label = "PPD" if r["discard"] == "ppd" else f"EPD {r['epd'] / r['cells']:.1f}·B"
        rows.setdefault((mtu, label), {})[r["cells"]] = r
    tables["discard"] = {"tail": tail, "rows": rows}
    for mtu in (1500, 9180):
        at = {label: rs[1024]["share"] for (m, label), rs in rows.items() if m == mtu and 1024 in rs}
        out.append(Check("Romanow & Floyd [2]", f"EPD brings a single TCP back to near its ceiling at 1K cells (MTU {mtu}; ≥ 90 % of it; tail drop {tail[(mtu, 1024)]['share']:.1%})",
                         ", ".join(f"{k}: {v:.1%}" for k, v in at.items()), all(v >= 0.9 for k, v in at.items() if k.startswith("EPD")), paper=False,
                         values={"share_1k": at}))
    # TCP against TCP, no CBR (F5's other half, F6's contrast).
    tcp = summarise(data["tables"]["tcp_vs_tcp"])
    deg = {}
    for m in MTUS:
        part = tcp.filter((pl.col("mss") == mss_for(m)) & (pl.col("cells") < 1024))
        deg[m] = 1 - float(part["share"].mean()) if part.height else float("nan")  # type: ignore[arg-type]
    tables["tcp_vs_tcp"] = tcp
    out.append(Check("§3.1 L90 / [2]", "TCP against TCP (4 streams, no CBR) loses only about 10–30 % below 1K cells (mean over the buffers < 1K; accepted 5–35 %)",
                     ", ".join(f"MTU {m}: {d:.0%}" for m, d in deg.items()), all(0.05 <= d <= 0.35 for d in deg.values()), paper=False, values={"degradation": deg},
                     quote="セルバッファサイズが 50K[bytes] (1K[cells]) 未満の場合、複数の TCP コネクションによる輻輳では性能低下は 10~30% 程度にとどまっている", location="§3.1 L90"))
    out.append(Check("§3.1 L91 / [2]", "TCP against TCP: the larger the MTU, the larger the degradation (MTU 9180 loses at least 5 points more than MTU 1500 below 1K cells)",
                     f"MTU 1500: {deg[1500]:.0%}, MTU 9180: {deg[9180]:.0%}", deg[9180] >= deg[1500] + 0.05, paper=False, values={"degradation": deg},
                     quote="複数の TCP コネクションによる輻輳では MTU サイズが大きいほど性能低下が大きい", location="§3.1 L91"))
    return out, tables


def mss_for(mtu: int) -> int:
    """The shipped MSS of an MTU (FreeBSD's rule)."""
    return mss_freebsd(mtu)
