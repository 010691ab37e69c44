"""Study 001's findings judged on the measured means (over the seeds, per active-server count).

The figures are lost (only their captions survive), so every finding is an order between
schemes or a trend in N, and each check says the range of N it applies to: the incast
regime, N ≥ 64 (`LARGE`), where FGTCP degrades, unless the sentence is about every N. Each
check quotes its sentence from the seed with its place (§section, sentence).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p1.constants import CEILING_MBPS

__all__ = ["LARGE", "checks", "findings_at", "timeout_bound_mbps"]

LARGE = 64
"""The incast regime the comparisons of §4.3 are judged in: N ≥ 64 active servers."""

SRU_BITS = 65_536 * 8
RTO_MIN_S = 0.2


def timeout_bound_mbps(n: int, ceiling_mbps: float) -> float:
    """Standard TCP's goodput if every block loses one 200 ms timeout and nothing else: the
    block's bits over the time to send them at the ceiling plus RTOmin (§2.1's argument)."""
    bits = n * SRU_BITS
    return bits / (bits / (ceiling_mbps * 1e6) + RTO_MIN_S) / 1e6


class _Means:
    """Lookup of a summary table's means."""

    def __init__(self, summary: pl.DataFrame):
        self.rows = {(r["model"], r["scheme"], r["servers"]): r for r in summary.iter_rows(named=True)}
        self.servers = sorted({k[2] for k in self.rows})

    def g(self, model: str, scheme: str, n: int) -> float:
        return float(self.rows[(model, scheme, n)]["goodput_mbps"])

    def nir(self, model: str, scheme: str, n: int) -> float:
        return float(self.rows[(model, scheme, n)]["nir"])

    def has(self, model: str, scheme: str) -> bool:
        return any(k[0] == model and k[1] == scheme for k in self.rows)

    def large(self) -> list[int]:
        return [n for n in self.servers if n >= LARGE] or self.servers[-1:]


def _fmt(xs: Sequence[tuple[int, float]], unit: str = "") -> str:
    return ", ".join(f"N={n}: {v:.3g}{unit}" for n, v in xs)


def findings_at(summary: pl.DataFrame, model: str) -> dict[str, Any]:
    """The orders of §4.3 in one model on one summary (for the maps): AHTCP above FGTCP,
    within 10 % below LNRTCP/HYBTCP, and with a lower NIR than both, at every N ≥ 64."""
    m = _Means(summary)
    big = [n for n in m.large() if (model, "AHTCP", n) in m.rows]
    above_fg = all(m.g(model, "AHTCP", n) > m.g(model, "FGTCP", n) for n in big) if m.has(model, "FGTCP") else None
    ratios = [m.g(model, "AHTCP", n) / m.g(model, s, n) for n in big for s in ("LNRTCP", "HYBTCP") if m.has(model, s)]
    nir_lower = all(m.nir(model, "AHTCP", n) < m.nir(model, s, n) for n in big for s in ("LNRTCP", "HYBTCP") if m.has(model, s))
    return {"above_fgtcp": above_fg, "ratio_min": min(ratios, default=float("nan")), "ratio_max": max(ratios, default=float("nan")),
            "near_lnr_hyb": bool(ratios) and all(0.9 <= r <= 1.1 for r in ratios), "nir_lower": nir_lower}


def checks(summary: pl.DataFrame, runs: pl.DataFrame) -> list[Check]:
    """Every finding of the paper (and the comparisons beyond it) on the main sweep's
    `summary` (means per model, scheme and N) and its `runs` (one row per run)."""
    m = _Means(summary)
    big = m.large()
    out: list[Check] = []
    ceil_a = CEILING_MBPS["A"]

    # §2.1: standard TCP collapses, and is bounded by what its timeouts cost.
    mid = [n for n in m.servers if n >= 16]
    std = [(n, m.g("A", "standard", n)) for n in mid]
    out.append(Check(
        "§2.1", "standard TCP's goodput collapses toward 0 once the port overflows (model A: below 10 % of the ceiling at every N ≥ 16)",
        _fmt(std, " Mb/s") + f" (ceiling {ceil_a:.1f})", all(v < 0.1 * ceil_a for _, v in std),
        values={"goodput_mbps": dict(std), "ceiling_mbps": ceil_a},
        quote="結果的にスループットで見ると 0 に近い値になる", location="§2.1 s8"))
    bound = [(n, m.g("A", "standard", n), timeout_bound_mbps(n, ceil_a)) for n in mid]
    out.append(Check(
        "§2.1", "standard TCP is bounded by its timeouts: at most N·SRU / (N·SRU/C + RTOmin) per block (one 200 ms timeout a block)",
        ", ".join(f"N={n}: {v:.3g} ≤ {b:.3g}" for n, v, b in bound), all(v <= b for _, v, b in bound),
        values={"bound": {n: [v, b] for n, v, b in bound}},
        quote="SRU を構成する全パケットを送信するために使用する時間は、200 ミリ秒に比較すれば無視していいほど小さい", location="§2.1 s7"))

    # §2.2: FGTCP improves on standard TCP but degrades as N grows.
    fg = [(n, m.g("A", "FGTCP", n)) for n in mid]
    improves = all(m.g("A", "FGTCP", n) > m.g("A", "standard", n) for n in mid)
    degrades = fg[-1][1] < 0.9 * fg[0][1]
    out.append(Check(
        "§2.2", "FGTCP improves on standard TCP, but its goodput falls as servers grow (model A: above standard at every N ≥ 16; at the largest N below 90 % of its goodput at N = 16)",
        _fmt(fg, " Mb/s"), improves and degrades, values={"goodput_mbps": dict(fg)},
        quote="この方法ではサーバ数が多くなった場合にはインキャストが回避できない", location="§2.2 s2"))

    # §2.2: LNRTCP and HYBTCP hold their goodput ...
    held = [(s, n, m.g("A", s, n)) for s in ("LNRTCP", "HYBTCP") for n in mid]
    out.append(Check(
        "§2.2", "LNRTCP and HYBTCP avoid incast in most cases (model A: at least 80 % of the ceiling at every N ≥ 16)",
        "; ".join(f"{s} N={n}: {v:.3g}" for s, n, v in held), all(v >= 0.8 * ceil_a for _, _, v in held),
        values={"goodput_mbps": {f"{s}/{n}": v for s, n, v in held}},
        quote="インキャストを回避できることが多い", location="§2.2 s5"))
    # ... but retransmit aggressively: NIR above FGTCP's and rising with N.
    top = m.servers[-1]
    nirs = {s: [(n, m.nir("A", s, n)) for n in mid] for s in ("FGTCP", "LNRTCP", "HYBTCP")}
    aggressive = all(m.nir("A", s, top) > m.nir("A", "FGTCP", top) and nirs[s][-1][1] > nirs[s][0][1] for s in ("LNRTCP", "HYBTCP"))
    out.append(Check(
        "§2.2", f"LNRTCP and HYBTCP retransmit aggressively: NIR above FGTCP's at the largest N ({top}) and rising with N",
        "; ".join(f"{s}: {_fmt(v)}" for s, v in nirs.items()), aggressive, values={"nir": {s: dict(v) for s, v in nirs.items()}},
        quote="同一パケットがネットワーク上に流れる可能性が高くなり", location="§2.2 s6"))

    # §4.3: model A.
    f = findings_at(summary, "A")
    ah = [(n, m.g("A", "AHTCP", n), m.g("A", "FGTCP", n)) for n in big]
    out.append(Check(
        "Fig. 3", f"model A: AHTCP's goodput is above FGTCP's (every N ≥ {LARGE})",
        ", ".join(f"N={n}: {a:.3g} vs {b:.3g} Mb/s" for n, a, b in ah), bool(f["above_fgtcp"]),
        values={"ahtcp_fgtcp_mbps": {n: [a, b] for n, a, b in ah}},
        quote="ネットワークモデル A での AHTCP は、FGTCP と比較するとグッドプットが向上しており", location="§4.3 s5"))
    ratios = [(n, s, m.g("A", "AHTCP", n) / m.g("A", s, n)) for n in big for s in ("LNRTCP", "HYBTCP")]
    out.append(Check(
        "Fig. 3", f"model A: AHTCP's goodput is slightly below LNRTCP's and HYBTCP's but nearly equal (every N ≥ {LARGE}: ratio in [0.9, 1))",
        "; ".join(f"N={n} /{s}: {r:.3f}" for n, s, r in ratios), all(0.9 <= r < 1.0 for _, _, r in ratios),
        values={"ratio": {f"{s}/{n}": r for n, s, r in ratios}},
        quote="LNRTCPやHYBTCPと比べても、多少低いがほぼ同様な値になっている", location="§4.3 s5"))
    nir_a = [(n, m.nir("A", "AHTCP", n), m.nir("A", "LNRTCP", n), m.nir("A", "HYBTCP", n)) for n in big]
    out.append(Check(
        "Fig. 4", f"model A: AHTCP's NIR is lower than LNRTCP's and HYBTCP's (every N ≥ {LARGE})",
        "; ".join(f"N={n}: {a:.3f} vs {b:.3f}, {c:.3f}" for n, a, b, c in nir_a), bool(f["nir_lower"]),
        values={"nir": {n: [a, b, c] for n, a, b, c in nir_a}},
        quote="一方、NIRは低く抑えられており、ネットワークに与える負荷が小さい。", location="§4.3 s6"))

    # §4.3: model B.
    if m.has("B", "AHTCP"):
        fb = findings_at(summary, "B")
        rb = [(n, s, m.g("B", "AHTCP", n) / m.g("B", s, n)) for n in big for s in ("LNRTCP", "HYBTCP")]
        out.append(Check(
            "Fig. 5", f"model B: AHTCP's goodput equals LNRTCP's and HYBTCP's (every N ≥ {LARGE}: within ±10 %)",
            "; ".join(f"N={n} /{s}: {r:.3f}" for n, s, r in rb), bool(fb["near_lnr_hyb"]),
            values={"ratio": {f"{s}/{n}": r for n, s, r in rb}},
            quote="LNRTCPやHYBTCPと同等のグッドプットを記録しながらも", location="§4.3 s7"))
        nb = [(n, m.nir("B", "AHTCP", n), m.nir("B", "LNRTCP", n), m.nir("B", "HYBTCP", n)) for n in big]
        out.append(Check(
            "Fig. 6", f"model B: AHTCP's NIR is lower than LNRTCP's and HYBTCP's (every N ≥ {LARGE})",
            "; ".join(f"N={n}: {a:.3f} vs {b:.3f}, {c:.3f}" for n, a, b, c in nb), bool(fb["nir_lower"]),
            values={"nir": {n: [a, b, c] for n, a, b, c in nb}},
            quote="NIRを抑えることができている", location="§4.3 s7"))

    # §4.2: NIR is at least 1, exactly 1 when nothing is lost.
    # NIR is defined for reads that completed (P_SRU counts every block); runs the time cap
    # stopped (standard TCP at large N) are left out and counted.
    done = runs.filter(pl.col("unfinished") == 0) if "unfinished" in runs.columns else runs
    clean = done.filter(pl.col("dropped") == 0)
    min_nir = float(done["nir"].min())  # type: ignore[arg-type]
    exact = clean.height > 0 and bool((clean["nir"] == 1.0).all())
    out.append(Check(
        "§4.2", "NIR is at least 1, and exactly 1 in every run that lost nothing",
        f"smallest NIR {min_nir:.4f} over {done.height} completed runs ({runs.height - done.height} stopped by the time cap left out); "
        f"{clean.height} runs without a drop, NIR there "
        + (f"{float(clean['nir'].min()):.4f}–{float(clean['nir'].max()):.4f}" if clean.height else "(none)"),  # type: ignore[arg-type]
        min_nir >= 1.0 and exact, values={"min_nir": min_nir, "loss_free_runs": clean.height, "capped_runs": runs.height - done.height},
        quote="NIRの最小値は1となる", location="§4.2 s4"))
    # §4.3: nothing exceeds the ceiling.
    worst = {mod: float(runs.filter(pl.col("model") == mod)["goodput_mbps"].max() or 0.0) for mod in CEILING_MBPS if runs.filter(pl.col("model") == mod).height}  # type: ignore[arg-type]
    out.append(Check(
        "§4.3", "no run exceeds the goodput ceiling (model A ≈ 970, model B ≈ 1,940 Mb/s)",
        "; ".join(f"model {k}: best run {v:.1f} of {CEILING_MBPS[k]:.1f} Mb/s" for k, v in worst.items()),
        all(v <= CEILING_MBPS[k] for k, v in worst.items()), values={"best_mbps": worst},
        quote="ネットワークモデル A で約970 Mbps、ネットワークモデル B で約1,940 Mbpsとなる。", location="§4.3 s2"))

    # Beyond the paper: AHTCP over the standard RTOmin.
    if m.has("A", "AHTCP/200ms"):
        a2 = [(n, m.g("A", "AHTCP/200ms", n), m.g("A", "FGTCP", n)) for n in big]
        out.append(Check(
            "README A12", "AHTCP over the standard 200 ms RTOmin (requests alone end the idle time) is above FGTCP (model A, N ≥ 64)",
            ", ".join(f"N={n}: {a:.3g} vs {b:.3g} Mb/s" for n, a, b in a2), all(a > b for _, a, b in a2), paper=False,
            values={"ahtcp200ms_fgtcp_mbps": {n: [a, b] for n, a, b in a2}}))
    return out
