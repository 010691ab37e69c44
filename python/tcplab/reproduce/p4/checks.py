"""Study 004's findings judged on the measured means (over the seeds, per point).

The figures are lost (only captions and prose survive), so every finding is a threshold, an
order or a shape, judged under one reading of the unknowns (a `View`: an effective-buffer
factor, the CBR unit, the MSS rule, and the criterion a point is judged by). The tolerances
were set from the paper's words before the full runs: "ほぼ有効帯域" ≥ 90 % of UBR's ceiling;
"急激に低下" below 50 % at 1K cells with the knee above 2K cells (so within the region below
3K the text names); "比例" and "ほとんどよらない" within ±25 %; "依存しない" slopes within a
factor 1.5; "ほぼ反比例" a slope ratio within ±30 % of the MSS ratio. Each check quotes its
sentence from the seed with its line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import polars as pl

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p4.atm import cells_per_packet
from tcplab.reproduce.p4.constants import CRITERIA, FIG5_CELLS, MTUS, TABLE2_CELLS
from tcplab.reproduce.p4.runs import summarise
from tcplab.reproduce.p4.variants import VARIANTS

__all__ = ["View", "all_views", "checks", "fit_slope", "least_socket", "post_scan", "stated_setting_checks"]

Curve = list[tuple[int, float, float | None]]
"""A Fig. 5/6 curve: (socket KiB, lo, hi) per socket buffer, hi the least CBR found to meet the criterion
(the upward search, `search`); hi None = met at no CBR up to 140 Mb/s."""

NEAR_FULL = 0.9
SHARP = 0.5
MEANING = {"deadlock": "≤ 2 % of the bandwidth left to UBR", "deadlock (link)": "≤ 2 % of the link's 149.76 Mb/s",
           "collapse": "≥ 2 retransmission timeouts per run"}
"""What each criterion means, for the checks' wording."""


@dataclasses.dataclass
class View:
    """Everything the checks read, under one reading of the unknowns."""

    variant: str
    criterion: str
    fig2: dict[int, list[dict[str, Any]]]
    """MTU → rows by configured cell buffer: cells, mbps, mbps_min, mbps_max, share, ceiling, dead."""
    table2: dict[int, dict[str, Any]]
    """Socket KiB → the row at Table 2's configured buffer."""
    fig5: dict[int, Curve]
    """Configured cell buffer → curve (MTU 1500)."""
    fig6: dict[int, Curve]
    """MTU → curve (1K cells)."""
    mss: dict[int, int]
    f: float = 1.0
    """The effective-buffer factor of the variant."""

    def plain(self) -> dict[str, Any]:
        return {"variant": self.variant, "criterion": self.criterion,
                "fig2": {m: [{k: r[k] for k in ("cells", "mbps", "share", "dead")} for r in rows] for m, rows in self.fig2.items()},
                "table2": {k: {n: r[n] for n in ("mbps", "share", "dead")} for k, r in self.table2.items()},
                "fig5": self.fig5, "fig6": self.fig6, "knees": {m: knee(rows) for m, rows in self.fig2.items()}}


def knee(rows: Sequence[dict[str, Any]]) -> int | None:
    """The smallest buffer from which every larger one gives ≥ 90 % of UBR's ceiling."""
    best = None
    for r in sorted(rows, key=lambda r: -r["cells"]):
        if r["share"] < NEAR_FULL:
            break
        best = r["cells"]
    return best


def least_socket(curve: Curve) -> int | None:
    """The least socket buffer (KiB) whose critical CBR is not "none"."""
    return next((k for k, _, hi in sorted(curve) if hi is not None), None)


def fit_slope(curve: Curve, tol: float) -> tuple[float, float, int] | None:
    """Least-squares line through the falling part of a curve: from the least deadlocking
    socket buffer to the first whose critical CBR (the bracket's top) is down to the search's
    resolution `tol`, both included. Returns (slope Mb/s per KiB, R², points), or None with
    fewer than 2 points."""
    start = least_socket(curve)
    pts: list[tuple[int, float]] = []
    for k, _, hi in sorted(curve):
        if start is None or k < start or hi is None:
            continue
        pts.append((k, hi))
        if hi <= tol:
            break
    if len(pts) < 2:
        return None
    n = len(pts)
    mx, my = sum(k for k, _ in pts) / n, sum(v for _, v in pts) / n
    sxx = sum((k - mx) ** 2 for k, _ in pts)
    sxy = sum((k - mx) * (v - my) for k, v in pts)
    syy = sum((v - my) ** 2 for _, v in pts)
    slope = sxy / sxx
    r2 = (sxy * sxy / (sxx * syy)) if syy > 0 else 1.0
    return slope, r2, n


def all_views(data: dict[str, Any]) -> dict[str, View]:
    """A view per variant and criterion, named "variant | criterion" (the shipped one first)."""

    summ = summarise(data["tables"]["fig2_table2"])
    rows = {(r["mss"], r["sock"], r["cells"], r["unit"]): r for r in summ.filter(pl.col("cbr_mbps") == 60.0).iter_rows(named=True)}
    views = {}
    for v in VARIANTS:
        for crit, judge in CRITERIA.items():
            fig2 = {}
            for m in MTUS:
                fig2[m] = [{**rows[(v.mss(m), 65536, v.cells(c), v.unit)], "cells": c, "dead": judge(rows[(v.mss(m), 65536, v.cells(c), v.unit)])}
                           for c in data["plan"]["fig2_cells"]]
            t2 = {}
            for k in (25, 38):
                r = rows[(1460, k * 1024, v.cells(TABLE2_CELLS), v.unit)]
                t2[k] = {**r, "dead": judge(r)}
            scale = 48 / 53 if v.unit == "payload" else 1.0

            def curve(mss: int, cells: int) -> Curve:
                pts = sorted((s // 1024, lo * scale, None if hi is None else hi * scale)
                             for (c, s, k), (lo, hi) in data["critical"].items() if c == (mss, cells, "cell") and k == crit)
                return pts

            fig5 = {c: curve(v.mss(1500), v.cells(c)) for c in FIG5_CELLS}
            fig6 = {m: curve(v.mss(m), v.cells(TABLE2_CELLS)) for m in (1500, 9180)}
            views[f"{v.name} · {crit}"] = View(v.name, crit, fig2, t2, fig5, fig6, {m: v.mss(m) for m in MTUS}, v.f)
    return views


def _fmt_curve_pt(hi: float | None) -> str:
    return "none" if hi is None else f"{hi:.0f}"


def checks(view: View, data: dict[str, Any], traces: bool = True) -> list[Check]:
    """Every finding of the paper under `view` (the Table 2 traces and TCP against TCP are
    judged only where `traces`: they are the shipped reading's runs)."""
    tol = data["plan"]["tol_mbps"]
    out: list[Check] = []
    big = [c for c in data["plan"]["fig2_cells"] if c >= 3072]
    f2 = view.fig2
    worst = {m: min((r["share"] for r in f2[m] if r["cells"] in big), default=float("nan")) for m in MTUS}
    out.append(Check("Fig. 2", f"cell buffer ≥ 3K cells: every MTU gets nearly the bandwidth left to UBR (≥ {NEAR_FULL:.0%} of it at every buffer ≥ 3072 cells)",
                     "least share at ≥ 3K: " + ", ".join(f"MTU {m}: {s:.1%}" for m, s in worst.items()), all(s >= NEAR_FULL for s in worst.values()),
                     values={"finding": "F1", "least_share": worst},
                     quote="セルバッファサイズが 150K[bytes] (3K[cells]) 以上では UBR トラフィックは MTU サイズに関わらずほぼ有効帯域に相当するスループットを得ている。",
                     location="§3.1 L77 (Fig. 2)"))
    knees = {m: knee(f2[m]) for m in MTUS}
    at1k = {m: next(r["share"] for r in f2[m] if r["cells"] == 1024) for m in MTUS}
    sharp = all(k is not None and 2048 < k <= 3072 for k in knees.values()) and all(s < SHARP for s in at1k.values())
    out.append(Check("Fig. 2", f"below 3K cells throughput falls sharply (every MTU's knee — the least buffer keeping ≥ {NEAR_FULL:.0%} — in (2048, 3072] cells, and under {SHARP:.0%} at 1K)",
                     "knees: " + ", ".join(f"{m}: {k}" for m, k in knees.items()) + "; share at 1K: " + ", ".join(f"{m}: {s:.1%}" for m, s in at1k.items()),
                     sharp, values={"finding": "F2", "knees": knees, "share_1k": at1k},
                     quote="一方、セルバッファサイズが 150K[bytes] (3K[cells]) 以下の領域では急激にスループットが低下し、", location="§3.1 L77 (Fig. 2)"))
    small = [c for c in data["plan"]["fig2_cells"] if c <= 1024]
    dead = {m: [r["cells"] for r in f2[m] if r["cells"] in small and not r["dead"]] for m in MTUS if m >= 1500}
    out.append(Check("Fig. 2", f"at ≤ 1K cells MTUs 1500–9180 are in deadlock ({MEANING[view.criterion]}) at every buffer of Fig. 2's grid ≤ 1024",
                     "; ".join(f"MTU {m}: " + ", ".join(f"{r['cells']}: {r['mbps']:.2f} Mb/s ({r['share']:.1%})" for r in f2[m] if r["cells"] in (512, 1024))
                               for m in dead) + "; not in deadlock at: " + (", ".join(f"{m}@{c}" for m, cs in dead.items() for c in cs) or "none"),
                     all(not cs for cs in dead.values()), values={"finding": "F3", "not_dead": dead},
                     quote="50K[bytes] (1K[cells]) 以下になると MTU サイズが 512[bytes] の場合を除いて UBR トラフィックは有効帯域の 2% 以下のスループットしか得られていない。",
                     location="§3.1 L77–86 (Fig. 2)"))
    r512 = next(r for r in f2[512] if r["cells"] == 1024)
    r1500 = next(r for r in f2[1500] if r["cells"] == 1024)
    out.append(Check("Fig. 2", "MTU 512 is the exception: not in deadlock at 1K cells where MTU 1500 is",
                     f"at 1K: MTU 512 {r512['mbps']:.2f} Mb/s ({r512['share']:.1%}, {'deadlock' if r512['dead'] else 'no deadlock'}); "
                     f"MTU 1500 {r1500['mbps']:.2f} Mb/s ({r1500['share']:.1%}, {'deadlock' if r1500['dead'] else 'no deadlock'})",
                     (not r512["dead"]) and r1500["dead"], values={"finding": "F4", "mbps_512": r512["mbps"], "mbps_1500": r1500["mbps"]},
                     quote="MTU サイズが 512[bytes] の場合を除いて", location="§3.1 L86 (Fig. 2)"))
    falling = [c for c in data["plan"]["fig2_cells"]
               if min(next(r["share"] for r in f2[m] if r["cells"] == c) for m in (1500, 9180)) < NEAR_FULL]
    mean = {m: sum(next(r["share"] for r in f2[m] if r["cells"] == c) for c in falling) / max(1, len(falling)) for m in (1500, 9180)}
    out.append(Check("Fig. 2", "under CBR the degradation is more pronounced at MTU 1500 than at 9180 (mean share over the buffers where either is below 90 %)",
                     f"MTU 1500 {mean[1500]:.1%}, MTU 9180 {mean[9180]:.1%} over {len(falling)} buffers ({', '.join(map(str, falling))})",
                     bool(falling) and mean[1500] < mean[9180], values={"finding": "F6", "mean_share": mean, "buffers": falling},
                     quote="TCP のトラフィックが CBR トラフィックにより妨害される状況では、MTU サイズが 9180[bytes] よりも 1500[bytes] の場合に性能低下が顕著である。",
                     location="§3.1 L91 (Fig. 2)"))
    t2 = view.table2
    out.append(Check("Table 2", f"MTU 1500, CBR 60 Mb/s (1K cells, README A10): socket 25 KB good (≥ {NEAR_FULL:.0%} of UBR's bandwidth), 38 KB in deadlock",
                     f"25 KB: {t2[25]['mbps']:.2f} Mb/s ({t2[25]['share']:.1%}); 38 KB: {t2[38]['mbps']:.2f} Mb/s ({t2[38]['share']:.1%})",
                     t2[25]["share"] >= NEAR_FULL and t2[38]["dead"], values={"finding": "F7", "mbps": {k: r["mbps"] for k, r in t2.items()}},
                     quote="Socket size[Kbytes]  25  38 / Throughput  Good  Deadlock", location="Table 2 (L95–101)"))
    if traces:
        out += _trace_checks(data["traces"])
    out += _fig56_checks(view, tol)
    if traces:
        r = next(r for r in f2[1500] if r["cells"] == 1024)
        cells_sent = r["segments"] * cells_per_packet(1460)
        loss = r["cells_dropped"] / cells_sent if cells_sent else float("nan")
        out.append(Check("§1", "one lost cell costs a whole packet: at 1K cells (MTU 1500) a cell loss ratio under 1 % takes throughput below half of the ceiling",
                         f"cells lost {loss:.3%} of those sent; {r['frames_damaged']:.0f} frames damaged, {r['frames_discarded']:.0f} discarded at reassembly; throughput {r['share']:.1%} of the ceiling",
                         loss < 0.01 and r["share"] < 0.5 and r["frames_discarded"] >= r["frames_damaged"], values={"finding": "F21", "cell_loss": loss, "share": r["share"]},
                         quote="ATM レベルでのひとつのセル損失（セルロス）が上位のプロトコルレベルでは大幅なスループットの低下を招く原因となる [2]。",
                         location="§1 L35"))
    for c in out:
        c.claim = f"{c.values['finding']}: {c.claim}"
    return out


def post_scan(tr: dict[str, Any]) -> bool:
    """Whether §3.2's traces are judged at a buffer chosen after the scan (Table 2's pattern
    nearest 1K cells), not at the 1K cells L75 states (README A10)."""
    return tr["chosen"] is not None and tr["chosen"] != tr["cells"]


def stated_setting_checks(data: dict[str, Any]) -> list[Check]:
    """F8–F13 judged at the buffer the paper states (L75's 1K cells; Table 2 gives none) when
    the headline judges them at a buffer chosen after the scan; [] when it does not. Not
    counted in the headline: the report prints them beside it."""
    tr = data["traces"]
    if not post_scan(tr):
        return []
    out = _trace_checks(tr, tr["cells"])
    for c in out:
        c.claim = f"{c.values['finding']}: {c.claim}"
    return out


def _trace_checks(tr: dict[str, Any], cells: int | None = None) -> list[Check]:
    """§3.2's mechanism, on the traced runs of Table 2's patterns at `cells` (by default the
    buffer chosen after the scan, or the stated one if none was)."""
    c = cells if cells is not None else (tr["chosen"] if tr["chosen"] is not None else tr["cells"])
    a, b = tr["runs"][(c, 25)], tr["runs"][(c, 38)]

    def avg(rs: list[dict[str, Any]], k: str) -> float:
        return sum(r[k] for r in rs) / len(rs)

    chosen = c != tr["cells"]
    where = (f"at {c} cells, a buffer chosen after the scan: the nearest to 1K where Table 2's pattern appears" if chosen
             else f"at {c} cells, the buffer L75 states; Table 2 gives none")
    out = []
    out.append(Check("Fig. 3", f"(b) reaches a smaller final sequence number and stalls repeatedly; (a) does not stall ({where})",
                     f"final sequence (a) {avg(a, 'final_seq') / 1e6:.1f} MB, (b) {avg(b, 'final_seq') / 1e6:.1f} MB; stalls ≥ 0.3 s per run (a) {avg(a, 'stalls'):.1f}, (b) {avg(b, 'stalls'):.1f}",
                     avg(b, "final_seq") < avg(a, "final_seq") and avg(b, "stalls") >= 2 and avg(a, "stalls") == 0,
                     values={"finding": "F8", "final_seq": [avg(a, "final_seq"), avg(b, "final_seq")], "stalls": [avg(a, "stalls"), avg(b, "stalls")]},
                     quote="パターン (b) のグラフは最終的に到達したシーケンス番号が小さい。また、「一定時間シーケンス番号が進まない状態 (タイムラグ)」が度々発生しており、スループット低下を招いている。",
                     location="§3.2 L107 (Fig. 3)"))
    stalls = sum(r["stalls"] for r in b)
    by_to = sum(r["stalls_by_timeout"] for r in b)
    out.append(Check("§3.2", f"the stalls end by a retransmission timeout, not a fast retransmit (≥ 90 % of (b)'s stalls; {where})",
                     f"{by_to} of {stalls} stalls end with a timeout", stalls > 0 and by_to >= 0.9 * stalls, values={"finding": "F9", "stalls": stalls, "by_timeout": by_to},
                     quote="TCP において再送が起こる条件は、送信端末で重複確認応答 (duplicate ACK) が 3 回受信されるか、タイムアウトが発生するかである [5]。問題となるタイムラグでは後者が発生している。",
                     location="§3.2 L109"))
    empty = sum(r["stalls_empty"] for r in b)
    seen = [r.get("port_frames") for r in b]
    tapped = all(n is not None and n > 0 for n in seen)
    out.append(Check("§3.2", "during a stall nothing is in the network: no segment or ACK on the sender's link, and nothing leaves the switch port "
                     f"(a tap on the port's link: the port is work-conserving, so no departure means it is empty; {where})",
                     f"{empty} of {stalls} stalls silent on the sender's link for ≥ 0.3 s, the last segment sent before each out of the port whole and no frame "
                     "leaving the port during it; the port's tap saw "
                     + (f"{sum(seen)} frames leave in (b)'s runs" if tapped else "nothing at all (not tapped: no stall can be judged empty)"),
                     stalls > 0 and tapped and empty == stalls,
                     values={"finding": "F10", "stalls": stalls, "empty": empty, "port_frames": seen},
                     quote="送信端末からのセグメントと受信端末からの ACK がネットワーク上から全て消滅し、送受信端末とも何も送信しない状態になっている。",
                     location="§3.2 L110"))
    out.append(Check("§3.2", f"(a) sends 2 segments per ACK, (b) sometimes 3; each ACK covers 2 segments (a: ≥ 90 % of ACKs followed by exactly 2; b: ≥ 1 % by 3 or more; ≥ 80 % of ACKs cover 2 MSS; {where})",
                     f"(a) 2 per ACK {avg(a, 'sends_2'):.1%}, 3+ {avg(a, 'sends_3plus'):.2%}; (b) 2 per ACK {avg(b, 'sends_2'):.1%}, 3+ {avg(b, 'sends_3plus'):.2%}; ACKs covering 2 MSS (a) {avg(a, 'acked_2mss'):.1%}, (b) {avg(b, 'acked_2mss'):.1%}",
                     avg(a, "sends_2") >= 0.9 and avg(b, "sends_3plus") >= 0.01 and min(avg(a, "acked_2mss"), avg(b, "acked_2mss")) >= 0.8,
                     values={"finding": "F11", **{k: [avg(a, k), avg(b, k)] for k in ("sends_2", "sends_3plus", "acked_2mss")}},
                     quote="前者は 1 回 ACK を受信する間に 2 回セグメントを送信しているが、後者は 1 回 ACK を受信する間に 3 回セグメントを送信するときがある。両者の ACK は常に 2 つのセグメントに対して確認応答をしている。",
                     location="§3.2 L117"))
    room, checked = sum(r["losses_with_room"] for r in b), sum(r["losses_checked"] for r in b)
    out.append(Check("Fig. 4", f"(a) keeps its outstanding data at the window's right edge; (b) loses segments sent while its window still had room (a: ≥ 90 % of ACKs; b: ≥ half of its timed-out losses; {where})",
                     f"(a) at the edge after {avg(a, 'at_edge'):.1%} of ACKs (window {a[0]['window']} B); (b) {avg(b, 'at_edge'):.1%}, and {room} of {checked} lost segments sent with room left (window {b[0]['window']} B)",
                     avg(a, "at_edge") >= 0.9 and checked > 0 and room >= 0.5 * checked, values={"finding": "F12", "at_edge": [avg(a, "at_edge"), avg(b, "at_edge")], "room": [room, checked]},
                     quote="パターン (a) では「送信したが未確認のデータ量」は輻輳ウィンドウの右端に到達している (図 4)。…しかしパターン (b) では、まだウィンドウに空きがあるためその後も「送信したが未確認のデータ量」が占める割合が増加し、ある値を超過するとセグメント・ロスが発生する。",
                     location="§3.2 L119 (Fig. 4)"))
    out.append(Check("§3.2", f"a socket buffer small enough loses nothing even with its whole window in use; a large one loses segments before its window is used up ({where})",
                     f"cells lost per run: (a) {avg(a, 'cells_dropped'):.0f}, (b) {avg(b, 'cells_dropped'):.0f}; (b)'s largest outstanding {max(r['max_outstanding'] for r in b)} B of its {b[0]['window']} B window",
                     avg(a, "cells_dropped") == 0 and avg(b, "cells_dropped") > 0 and max(r["max_outstanding"] for r in b) < b[0]["window"],
                     values={"finding": "F13", "cells_dropped": [avg(a, "cells_dropped"), avg(b, "cells_dropped")]},
                     quote="Socket バッファサイズが十分小さいときは輻輳ウインドウを全て使用してセグメントを送信しても輻輳が発生しないが、Socket バッファサイズが大きいと輻輳ウインドウを全て使用するまでに輻輳が発生し、セグメント・ロスが発生する。",
                     location="§3.2 L124"))
    for x in out:
        x.values = {**x.values, "cells": c, "post_scan": chosen}
    return out


def _fig56_checks(view: View, tol: float) -> list[Check]:
    """§4's findings on the searched curves."""
    out = []
    f5, f6 = view.fig5, view.fig6
    starts = {c: least_socket(cv) for c, cv in f5.items()}
    smallest = {c: min((k for k, _, _ in cv), default=None) for c, cv in f5.items()}
    none_small = all(cv and sorted(cv)[0][2] is None for cv in f5.values()) and any(s is not None for s in starts.values())
    out.append(Check("Fig. 5", f"small socket buffers never deadlock ({MEANING[view.criterion]}), whatever the CBR: none up to 140 Mb/s at the smallest socket buffer of every curve, while larger ones do on some curve",
                     "; ".join(f"{c} cells: none from {smallest[c]} KB up to {'64 KB (never)' if starts[c] is None else f'{starts[c]} KB'}" for c in f5),
                     none_small, values={"finding": "F14", "least_socket_kib": starts},
                     quote="Socket バッファサイズが十分小さければ CBR トラフィックが大きくても deadlock は生じない。", location="§4.1 L134–139 (Fig. 5)"))
    t = [starts[c] for c in (512, 1024, 1536)]
    ok = all(x is not None for x in t) and abs(t[1] / t[0] / 2 - 1) <= 0.25 and abs(t[2] / t[0] / 3 - 1) <= 0.25  # type: ignore[operator]
    out.append(Check("Fig. 5", "the least deadlocking socket buffer is proportional to the cell buffer (0.5K : 1K : 1.5K → 1 : 2 : 3, ±25 %)",
                     "least deadlocking socket buffer: " + ", ".join(f"{c} cells: {'none ≤ 64' if s is None else s} KB" for c, s in starts.items()),
                     ok, values={"finding": "F15", "least_socket_kib": starts},
                     quote="deadlock が生じ得る最小の Socket バッファサイズはセルバッファサイズに比例する。", location="§4.1 L141 (Fig. 5)"))
    fits = {c: fit_slope(cv, tol) for c, cv in f5.items()}
    slopes = [f[0] for f in fits.values() if f is not None]
    mags = [-s for s in slopes]
    ok = len(mags) >= 2 and min(mags) > 0 and max(mags) / min(mags) <= 1.5
    out.append(Check("Fig. 5", "beyond it the critical CBR falls linearly, with a slope that does not depend on the cell buffer (≥ 2 curves, slopes within a factor 1.5)",
                     "; ".join(f"{c} cells: " + ("too few falling points" if f is None else f"{f[0]:.1f} Mb/s per KB (R² {f[1]:.2f}, {f[2]} points)") for c, f in fits.items()),
                     ok, values={"finding": "F16", "slopes": {c: None if f is None else f[0] for c, f in fits.items()}},
                     quote="その値より Socket バッファサイズを増やすと、deadlock を生じさせるのに必要な CBR トラフィックの帯域は線形に減少し、その傾きはセルバッファサイズには依存しない。",
                     location="§4.1 L142 (Fig. 5)"))
    last = sorted(f5[1024])[-1] if f5[1024] else None
    out.append(Check("Fig. 5", "above some socket buffer even a very small CBR deadlocks (1K cells: critical CBR ≤ 10 Mb/s at the largest socket buffer)",
                     f"1K cells at {last[0]} KB: {_fmt_curve_pt(last[2])} Mb/s" if last else "no points", last is not None and last[2] is not None and last[2] <= 10,
                     values={"finding": "F17", "critical_at_largest": None if last is None else last[2]},
                     quote="Socket バッファサイズがある値以上では、ごくわずかの CBR トラフィックでも deadlock を引き起こす。", location="§4.1 L143 (Fig. 5)"))
    s6 = {m: least_socket(cv) for m, cv in f6.items()}
    ok = s6[1500] is not None and s6[9180] is not None and abs(s6[9180] - s6[1500]) <= 0.25 * s6[1500]
    out.append(Check("Fig. 6", "the least deadlocking socket buffer hardly depends on the MTU (1K cells: MTU 9180 within ±25 % of MTU 1500's)",
                     ", ".join(f"MTU {m}: {'none ≤ 64' if s is None else s} KB" for m, s in s6.items()), ok, values={"finding": "F18", "least_socket_kib": s6},
                     quote="deadlock が生じ得る最小の Socket バッファサイズは MTU サイズにほとんどよらない。", location="§4.2 L154 (Fig. 6)"))
    g = {m: fit_slope(cv, tol) for m, cv in f6.items()}
    ratio_mss = view.mss[9180] / view.mss[1500]
    ratio = g[1500][0] / g[9180][0] if g[1500] and g[9180] and g[9180][0] != 0 else None
    out.append(Check("Fig. 6", f"the slope is roughly inversely proportional to the MSS (slope ratio 1500 : 9180 within ±30 % of the MSS ratio {ratio_mss:.2f})",
                     "; ".join(f"MTU {m}: " + ("too few falling points" if f is None else f"{f[0]:.2f} Mb/s per KB ({f[2]} points)") for m, f in g.items())
                     + ("" if ratio is None else f"; ratio {ratio:.2f}"), ratio is not None and abs(ratio / ratio_mss - 1) <= 0.3,
                     values={"finding": "F19", "slope_ratio": ratio, "mss_ratio": ratio_mss},
                     quote="その傾きは MTU サイズ (正確には MSS) にほぼ反比例している。", location="§4.2 L155 (Fig. 6)"))
    mss = view.mss[9180]
    pts = [(k, hi) for k, _, hi in sorted(f6[9180]) if hi is not None]
    runs: list[list[tuple[int, float]]] = []
    for k, hi in pts:
        if runs and abs(runs[-1][0][1] - hi) <= 1e-6:
            runs[-1].append((k, hi))
        else:
            runs.append([(k, hi)])
    mean_run = len(pts) / len(runs) if runs else 0.0
    out.append(Check("Fig. 6", f"MTU 9180's curve is a staircase (one MSS = {mss} B per step): at least two levels, each held over ≥ 2 consecutive socket buffers on average (the same critical CBR: socket buffers giving the same window run alike)",
                     "levels: " + ("; ".join(f"{r[0][1]:.0f} Mb/s over {r[0][0]}–{r[-1][0]} KB ({len(r)} points)" for r in runs) or "no deadlocking point"),
                     len(runs) >= 2 and mean_run >= 2, values={"finding": "F20", "levels": len(runs), "mean_run": mean_run},
                     quote="MTU サイズが 9180[bytes] の場合にグラフは階段状になっているのは、Socket バッファサイズを細かく変化させても TCP が MSS に基づいてウインドウサイズを丸めるという TCP の仕様によるものと考えられる。",
                     location="§4.2 L157 (Fig. 6)"))
    return out
