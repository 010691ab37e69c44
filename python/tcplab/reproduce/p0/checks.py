"""Study 000's findings, each judged on the runs of the shipped scenarios.

Every finding of the paper is stated as the paper states it (its sentence from the seed
`000_dc74dff776e003ff.txt` and its place) and judged per seed; it holds when more than half
of the seeds bear it out, and the measured values of every seed are printed either way.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p0.constants import FIRST_LOSS_PAPER_S, FIRST_LOSS_TOLERANCE_S, STAGGERED_RATE_MBPS
from tcplab.reproduce.p0.runs import judge

__all__ = ["GAP_GROWTH", "checks", "remedy_check"]

GAP_GROWTH = 3.0
"""Fig. 8: the gap must grow at least this many times from the first round to the last one
before the first loss (the paper's gap grows from ≈ 2 ms over its RTTs)."""

def _majority(flags: list[bool]) -> bool:
    """More than half of the seeds."""
    return 2 * sum(flags) > len(flags)


def _count(flags: list[bool]) -> str:
    """"k/n seeds"."""
    return f"{sum(flags)}/{len(flags)} seeds"


def _gap_grows(gaps: list[float]) -> bool:
    """The gap never shrinks by more than 0.1 ms from one round to the next and ends at least
    `GAP_GROWTH` times its first value."""
    if len(gaps) < 2 or gaps[0] <= 0:
        return False
    steady = all(b >= a - 1e-4 for a, b in zip(gaps, gaps[1:], strict=False))
    return steady and gaps[-1] >= GAP_GROWTH * gaps[0]


def checks(data: dict[str, Any]) -> list[Check]:
    """The paper's findings, and the comparisons beyond it, set beside the measurements."""
    sim, stag = data["simultaneous"], data["staggered"]
    win = data["plan"]["window"]
    # Each seed judged once, by the rules the map uses too.
    verdicts = [judge(a, b) for a, b in zip(sim, stag, strict=True)]

    def holds(key: str) -> list[bool]:
        return [v[key] for v in verdicts]

    res: list[Check] = []
    firsts = [r["first_loss_s"] for r in sim]
    near = holds("first_loss")
    res.append(Check(
        "Fig. 4",
        f"All streams carry the same rate until about 5 s: the first loss comes at "
        f"{FIRST_LOSS_PAPER_S:g} ± {FIRST_LOSS_TOLERANCE_S:g} s",
        "first loss at " + ", ".join(f"{t:.2f}" for t in firsts) + f" s ({_count(near)} within)",
        _majority(near),
        values={"first_loss_s": firsts, "within_seeds": sum(near)},
        quote="5秒付近までは全ての ストリームがほぼ同じ流量である.",
        location="§4.1 ¶1 (Fig. 4)",
    ))
    unfair = holds("unfair")
    res.append(Check(
        "Fig. 4",
        f"Simultaneous start: the streams diverge and stay apart (Jain < 0.95 over {win[0]:g}–{win[1]:g} s)",
        "Jain " + ", ".join(f"{r['jain']:.3f}" for r in sim) + f" (< 0.95 in {_count(unfair)})",
        _majority(unfair),
        values={"jain": [r["jain"] for r in sim], "unfair_seeds": sum(unfair)},
        quote="その後は, どのストリームもほぼ一定の値を保っている.序盤 でついた速度格差が保存されている.",
        location="§4.1 ¶1 (Fig. 4)",
    ))
    persist = holds("shrinks")
    res.append(Check(
        "Fig. 4",
        "The gaps shrink slowly but persist to the end of the run: still unfair in its last 10 s "
        "(Jain < 0.95), with a smaller spread ((max − min)/mean) in the window's last third than in its first",
        "Jain in the last 10 s " + ", ".join(f"{r['jain_end']:.3f}" for r in sim)
        + "; spread first → last third " + ", ".join(f"{r['spread_early']:.2f}→{r['spread_late']:.2f}" for r in sim)
        + f" ({_count(persist)} both)",
        _majority(persist),
        values={"jain_end": [r["jain_end"] for r in sim], "spread_early": [r["spread_early"] for r in sim],
                "spread_late": [r["spread_late"] for r in sim]},
        quote="速度格差は少 […] しずつ減少しているが、少なくとも 100 秒の範囲内 では解消されていない.",
        location="§4.1 ¶1–2 (Fig. 4)",
    ))
    slowest = holds("first_loser_slowest")
    res.append(Check(
        "Fig. 4",
        "The rate drops in loss order and the gap it opens is kept: the first stream to lose stays the slowest",
        "first loser / slowest per seed: " + ", ".join(
            f"{r['first_loss_order'][0] if r['first_loss_order'] else '-'}/{int(np.argmin(r['means_mbps']))}" for r in sim
        ) + f" ({_count(slowest)} the same)",
        _majority(slowest),
        values={"first_loser_slowest_seeds": sum(slowest)},
        quote="その後,stream 3,1,2,0の順に流量低下がおきている.その結果, ストリーム間で速度格差が生じている.",
        location="§4.1 ¶1 (Fig. 4)",
    ))
    taus = [r["kendall_tau"] for r in sim if not math.isnan(r["kendall_tau"])]
    res.append(Check(
        "Figs. 5–7",
        "Streams that send later in the RTT are likelier to lose: mean Kendall τ(send order, reversed loss order) > 0",
        ("τ = " + ", ".join(f"{t:+.2f}" for t in taus) + f"; mean {np.mean(taus):+.2f}") if taus else "no losses",
        bool(taus) and float(np.mean(taus)) > 0,
        values={"kendall_tau": taus},
        quote="順番が後のストリームは直前に他のストリー ムがパケットを送っているためスイッチのバッファ にパケットがたまっている可能性が高い.そのため、 ロスを起こしやすい.",
        location="§4.1 ¶4 (Fig. 7)",
    ))
    exact = holds("exact_reverse")
    res.append(Check(
        "Figs. 5–7",
        "The losses come in exactly the reverse of the send order (the paper: sent 0, 2, 1, 3; lost 3, 1, 2, 0; τ = +1)",
        "send → loss order per seed: " + "; ".join(
            f"{''.join(map(str, r['start_order']))}→{''.join(map(str, r['first_loss_order']))}" for r in sim
        ) + f" (exact reverse in {_count(exact)})",
        _majority(exact),
        values={"exact_reverse_seeds": sum(exact)},
        quote="stream0,2,1,3の順にパケットを送出して いる. […] 実際、図5はstream3,1,2, 0の順にロスが発生している事を示している.",
        location="§4.1 ¶4 (Fig. 7), with ¶2 (Fig. 5)",
    ))
    rounds = data["simultaneous_rounds"]
    kept = [bool(r["order_kept"]) for r in rounds]
    res.append(Check(
        "Fig. 7",
        "The first round's send order is kept in every round up to the first loss",
        "rounds before the first loss " + ", ".join(str(r["rounds_before_loss"]) for r in rounds)
        + f"; order kept in {_count(kept)}",
        _majority(kept),
        values={"order_kept_seeds": sum(kept), "rounds_before_loss": [r["rounds_before_loss"] for r in rounds]},
        quote="図6のパケット送出順がそのまま保存されて いる.",
        location="§4.1 ¶4 (Fig. 7)",
    ))
    grows = [_gap_grows(r["gaps_s"]) for r in rounds]
    res.append(Check(
        "Fig. 8",
        f"The send-time gap between the first and the last stream grows round by round while kept "
        f"(never shrinks, ≥ {GAP_GROWTH:g}× by the last round before the first loss)",
        "; ".join(f"{r['gaps_s'][0] * 1e3:.2f} → {r['gaps_s'][-1] * 1e3:.1f} ms over {len(r['gaps_s'])} rounds" for r in rounds)
        + f" ({_count(grows)} grow so)",
        _majority(grows),
        values={"gaps_s": [r["gaps_s"] for r in rounds], "growing_seeds": sum(grows)},
        quote="そのためストリーム間の送 出時間差が拡大されながら保存される.",
        location="§4.1 ¶5 (Fig. 8)",
    ))
    lo, hi = STAGGERED_RATE_MBPS
    fair = holds("staggered_fair")
    res.append(Check(
        "Fig. 9",
        f"Staggered start (i·RTT/4): every run fair, each stream near 250 Mb/s (Jain ≥ 0.98, every stream {lo:g}–{hi:g} Mb/s)",
        "; ".join(f"Jain {r['jain']:.4f}, " + "/".join(f"{m:.0f}" for m in r["means_mbps"]) + " Mb/s" for r in stag),
        all(fair),
        values={"jain": [r["jain"] for r in stag], "means_mbps": [r["means_mbps"] for r in stag]},
        quote="4 つのストリームがほぼ 250Mbps で安定して いる. […] 何回か実験を繰り返したが,全て同 様の結果になった.",
        location="§4.2 ¶3 (Fig. 9)",
    ))
    res.append(Check(
        "Fig. 9",
        "Staggered start: the 1 Gb/s link used close to 100 % (≥ 95 %)",
        "goodput / 1 Gb/s " + ", ".join(f"{r['util']:.3f}" for r in stag),
        all(holds("staggered_full")),
        values={"utilisation": [r["util"] for r in stag]},
        quote="1Gbpsのボトルネックリンク帯域を公平かつ 100%に近い効率で使用している.",
        location="§4.2 ¶3 (Fig. 9)",
    ))
    spreads = [r["first_round_spread_s"] for r in rounds]
    res.append(Check(
        "Fig. 6 (input)",
        "In the first RTT the streams start sending ~2 ms apart (an input: start_skew is set from this figure)",
        "first-round spread " + ", ".join(f"{s * 1e3:.2f}" for s in spreads) + " ms",
        all(0.2e-3 < s < 3e-3 for s in spreads),
        paper=False,
        values={"first_round_spread_s": spreads},
    ))
    for figure, claim, rows in (
        ("§5", "DECP-like cooperative window control makes simultaneous starts fair", data["decp"]),
        ("§5", "A Stream-Harmonizer-like gateway (delaying the fast streams) makes simultaneous starts fair", data["harmonizer"]),
        ("not in the paper", "Staggered start under CUBIC (linux-modern profile) is fair too", data["cubic_staggered"]),
    ):
        res.append(remedy_check(figure, claim, rows))
    return res


def remedy_check(figure: str, claim: str, rows: list[dict[str, Any]]) -> Check:
    """A remedy beyond the paper, judged on fairness and utilisation: every run fair (Jain ≥
    0.98) with the link used (goodput ≥ 95 % of 1 Gb/s)."""
    measured = "Jain " + ", ".join(f"{r['jain']:.4f}" for r in rows)
    measured += "; utilisation " + ", ".join(f"{r['util']:.3f}" for r in rows)
    values = {"jain": [r["jain"] for r in rows], "utilisation": [r["util"] for r in rows]}
    ok = all(r["jain"] >= 0.98 and r["util"] >= 0.95 for r in rows)
    return Check(figure, claim + " and keeps the link full (Jain ≥ 0.98, utilisation ≥ 0.95)", measured, ok, paper=False, values=values)
