"""Study 001's findings judged on the runs (one row per model, scheme, active-server count and
seed).

The figures are lost (only their captions survive), so every finding is an order between
schemes or a trend in N, and each check says the range of N it applies to: the incast
regime, N ≥ 64 (`LARGE`), where FGTCP degrades, unless the sentence is about every N. An
order between schemes (or between two N of one scheme) is judged by the paired difference
over the seeds and its 95 % t-interval (`paired`); a level (below 10 % of the ceiling, at
least 80 % of it, the one-timeout bound, NIR ≥ 1, the ceiling) is judged on the mean. Each
check quotes its sentence from the seed with its place (§section, sentence).

`checks` judges the findings of the models present in the runs (a map of one model judges
that model's), so the same function scores the main sweep and every point of the maps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p1.constants import CEILING_MBPS
from tcplab.reproduce.p1.paired import Diff, above, below, equal, paired, slightly_below

__all__ = ["BOUND_FROM", "LARGE", "MID", "SHORT", "checks", "timeout_bound_mbps", "verdicts"]

LARGE = 64
"""The incast regime the comparisons of §4.3 are judged in: N ≥ 64 active servers."""

MID = 16
"""§2's statements about many servers are judged from N = 16 on."""

BOUND_FROM = MID
"""The scope of the one-timeout bound (§2.1 s7): N ≥ 16, the range of the collapse it explains
(§2.1 s8). Below it not every block waits out a timeout (at N = 4 a run of 10 blocks lasts
about 0.96 s, about five 200 ms waits), so "one timeout a block" is not the premise there; the
report prints those points beside the check, outside its scope."""

SRU_BITS = 65_536 * 8
RTO_MIN_S = 0.2

SHORT = {
    "§2.1 s8": "std collapses", "§2.1 s7": "std bound", "§2.2 s2": "FG degrades", "§2.2 s5": "LNR/HYB hold",
    "§2.2 s6": "LNR/HYB NIR", "§4.3 s5 above": "A: > FG", "§4.3 s5 near": "A: ≲ LNR/HYB", "§4.3 s6": "A: NIR <",
    "§4.3 s7 equal": "B: = LNR/HYB", "§4.3 s7 nir": "B: NIR <", "§4.2 s4": "NIR ≥ 1", "§4.3 s2": "ceiling",
}
"""A short name per finding (the maps' column heads), by `Check.values["id"]`."""


def timeout_bound_mbps(n: int, ceiling_mbps: float) -> float:
    """Standard TCP's goodput if every block loses one 200 ms timeout and nothing else: the
    block's bits over the time to send them at the ceiling plus RTOmin (§2.1's argument)."""
    bits = n * SRU_BITS
    return bits / (bits / (ceiling_mbps * 1e6) + RTO_MIN_S) / 1e6


class _Runs:
    """The runs and their means per (model, scheme, N)."""

    def __init__(self, runs: pl.DataFrame):
        self.runs = runs
        means = runs.group_by(["model", "scheme", "servers"]).agg(
            pl.col("goodput_mbps").mean(), pl.col("nir").mean(),
            *([pl.col("timeouts").mean()] if "timeouts" in runs.columns else []))
        self.rows = {(r["model"], r["scheme"], r["servers"]): r for r in means.iter_rows(named=True)}
        self.servers = sorted({k[2] for k in self.rows})

    def g(self, model: str, scheme: str, n: int) -> float:
        return float(self.rows[(model, scheme, n)]["goodput_mbps"])

    def nir(self, model: str, scheme: str, n: int) -> float:
        return float(self.rows[(model, scheme, n)]["nir"])

    def has(self, model: str, scheme: str, n: int | None = None) -> bool:
        return any(k[0] == model and k[1] == scheme and (n is None or k[2] == n) for k in self.rows)

    def at_least(self, model: str, scheme: str, lo: int) -> list[int]:
        return [n for n in self.servers if n >= lo and self.has(model, scheme, n)]

    def d(self, value: str, model: str, a: str, b: str, n: int, nb: int | None = None, scale_b: float = 1.0) -> Diff:
        return paired(self.runs, value, (model, a, n), (model, b, n if nb is None else nb), scale_b=scale_b)


def _fmt(xs: Sequence[tuple[int, float]], unit: str = "") -> str:
    return ", ".join(f"N={n}: {v:.3g}{unit}" for n, v in xs)


def _diffs(ds: Sequence[tuple[str, Diff]]) -> str:
    return "; ".join(f"{k}: {d.text()}" for k, d in ds)


def checks(runs: pl.DataFrame) -> list[Check]:
    """Every finding of the paper (and the comparisons beyond it) on `runs`: the findings of
    model A if A ran, of model B if B ran, and §4.2/§4.3's over all runs."""
    m = _Runs(runs)
    out: list[Check] = []
    if m.has("A", "standard") and m.has("A", "FGTCP"):
        out += _section2(m)
    for model in ("A", "B"):
        if m.has(model, "AHTCP") and m.has(model, "LNRTCP"):
            out += _section43(m, model)
    out += _every_run(runs)
    if m.has("A", "AHTCP/200ms") and m.has("A", "FGTCP"):
        big = m.at_least("A", "AHTCP/200ms", LARGE)
        ds = [(f"N={n}", m.d("goodput_mbps", "A", "AHTCP/200ms", "FGTCP", n)) for n in big]
        out.append(Check(
            "README A12", "AHTCP over the standard 200 ms RTOmin (requests alone end the idle time) is above FGTCP (model A, N ≥ 64; "
            "paired goodput difference, Mb/s, 95 % interval above 0)",
            _diffs(ds), bool(ds) and all(above(d) for _, d in ds), paper=False,
            values={"id": "A12", "diff_mbps": {k: [d.mean, d.low, d.high] for k, d in ds}}))
    return out


def _section2(m: _Runs) -> list[Check]:
    """§2.1 and §2.2 in model A: standard TCP collapses within its timeout bound; FGTCP
    improves on it and degrades; LNRTCP and HYBTCP hold but retransmit aggressively."""
    out: list[Check] = []
    ceil_a = CEILING_MBPS["A"]
    mid = m.at_least("A", "standard", MID)
    std = [(n, m.g("A", "standard", n)) for n in mid]
    out.append(Check(
        "§2.1", f"standard TCP's goodput collapses toward 0 once the port overflows (model A: mean below 10 % of the ceiling at every N ≥ {MID})",
        _fmt(std, " Mb/s") + f" (ceiling {ceil_a:.1f})", bool(std) and all(v < 0.1 * ceil_a for _, v in std),
        values={"id": "§2.1 s8", "goodput_mbps": dict(std), "ceiling_mbps": ceil_a},
        quote="結果的にスループットで見ると 0 に近い値になる", location="§2.1 s8"))
    bound = [(n, m.g("A", "standard", n), timeout_bound_mbps(n, ceil_a)) for n in m.at_least("A", "standard", BOUND_FROM)]
    outside = [(n, m.g("A", "standard", n), timeout_bound_mbps(n, ceil_a), m.rows[("A", "standard", n)].get("timeouts"))
               for n in m.servers if 2 < n < BOUND_FROM and m.has("A", "standard", n)]
    note = ("; outside the scope (not every block waits out a timeout): "
            + ", ".join(f"N={n}: {v:.3g} vs {b:.3g}" + ("" if t is None else f" ({t:.1f} timeouts a run)") for n, v, b, t in outside)) if outside else ""
    out.append(Check(
        "§2.1", f"standard TCP is bounded by its timeouts: mean at most N·SRU / (N·SRU/C + RTOmin) (one 200 ms timeout a block), every N ≥ {BOUND_FROM}",
        ", ".join(f"N={n}: {v:.3g} ≤ {b:.3g}" for n, v, b in bound) + note, bool(bound) and all(v <= b for _, v, b in bound),
        values={"id": "§2.1 s7", "bound": {n: [v, b] for n, v, b in bound}, "outside_scope": {n: [v, b] for n, v, b, _ in outside}},
        quote="SRU を構成する全パケットを送信するために使用する時間は、200 ミリ秒に比較すれば無視していいほど小さい", location="§2.1 s7"))

    fg_n = m.at_least("A", "FGTCP", MID)
    lo, hi = fg_n[0], fg_n[-1]
    imp = [(f"N={n}", m.d("goodput_mbps", "A", "FGTCP", "standard", n)) for n in fg_n if m.has("A", "standard", n)]
    deg = m.d("goodput_mbps", "A", "FGTCP", "FGTCP", hi, lo, scale_b=0.9)
    out.append(Check(
        "§2.2", f"FGTCP improves on standard TCP, but its goodput falls as servers grow (model A, paired over seeds: FGTCP − standard above 0 at every "
        f"N ≥ {MID}; goodput at the largest N − 0.9 × goodput at N = {lo} below 0)",
        _fmt([(n, m.g("A", "FGTCP", n)) for n in fg_n], " Mb/s") + f"; FGTCP − standard: {_diffs(imp)}; N={hi} − 0.9·N={lo}: {deg.text()}",
        all(above(d) for _, d in imp) and below(deg),
        values={"id": "§2.2 s2", "goodput_mbps": {n: m.g("A", "FGTCP", n) for n in fg_n}, "degrade_diff": [deg.mean, deg.low, deg.high]},
        quote="この方法ではサーバ数が多くなった場合にはインキャストが回避できない", location="§2.2 s2"))

    held = [(s, n, m.g("A", s, n)) for s in ("LNRTCP", "HYBTCP") for n in m.at_least("A", s, MID)]
    out.append(Check(
        "§2.2", f"LNRTCP and HYBTCP avoid incast in most cases (model A: mean at least 80 % of the ceiling, {0.8 * ceil_a:.0f} Mb/s, at every N ≥ {MID})",
        "; ".join(f"{s} N={n}: {v:.3g}" for s, n, v in held), bool(held) and all(v >= 0.8 * ceil_a for _, _, v in held),
        values={"id": "§2.2 s5", "goodput_mbps": {f"{s}/{n}": v for s, n, v in held}},
        quote="インキャストを回避できることが多い", location="§2.2 s5"))
    agg = [(f"{s}−FGTCP N={hi}", m.d("nir", "A", s, "FGTCP", hi)) for s in ("LNRTCP", "HYBTCP")]
    rise = [(f"{s} N={hi}−N={lo}", m.d("nir", "A", s, s, hi, lo)) for s in ("LNRTCP", "HYBTCP")]
    out.append(Check(
        "§2.2", f"LNRTCP and HYBTCP retransmit aggressively: NIR above FGTCP's at the largest N ({hi}) and rising with N "
        f"(paired NIR differences above 0)",
        "; ".join(f"{s}: {_fmt([(n, m.nir('A', s, n)) for n in fg_n])}" for s in ("FGTCP", "LNRTCP", "HYBTCP")) + "; " + _diffs(agg + rise),
        all(above(d) for _, d in agg + rise), values={"id": "§2.2 s6", "diff": {k: [d.mean, d.low, d.high] for k, d in agg + rise}},
        quote="同一パケットがネットワーク上に流れる可能性が高くなり", location="§2.2 s6"))
    return out


def _section43(m: _Runs, model: str) -> list[Check]:
    """§4.3's orders in one model at every N ≥ 64, paired over the seeds."""
    big = [n for n in m.at_least(model, "AHTCP", LARGE) if all(m.has(model, s, n) for s in ("LNRTCP", "HYBTCP"))]
    near = [(f"N={n} −{s}", m.d("goodput_mbps", model, "AHTCP", s, n)) for n in big for s in ("LNRTCP", "HYBTCP")]
    ratios = "; ".join(f"N={n} /{s}: {m.g(model, 'AHTCP', n) / m.g(model, s, n):.3f}" for n in big for s in ("LNRTCP", "HYBTCP"))
    nir = [(f"N={n} −{s}", m.d("nir", model, "AHTCP", s, n)) for n in big for s in ("LNRTCP", "HYBTCP")]
    nir_means = "; ".join(f"N={n}: {m.nir(model, 'AHTCP', n):.3f} vs {m.nir(model, 'LNRTCP', n):.3f}, {m.nir(model, 'HYBTCP', n):.3f}" for n in big)
    out: list[Check] = []

    def nir_lower(figure: str, label: str, check_id: str, quote: str, location: str) -> Check:
        """The paper's "AHTCP's NIR is lower than LNRTCP's and HYBTCP's" in one model."""
        return Check(
            figure, f"model {label}: AHTCP's NIR is lower than LNRTCP's and HYBTCP's (every N ≥ {LARGE}: paired NIR difference's 95 % interval below 0)",
            f"{nir_means}; AHTCP − them: {_diffs(nir)}", bool(nir) and all(below(d) for _, d in nir),
            values={"id": check_id, "diff": {k: [d.mean, d.low, d.high] for k, d in nir}},
            quote=quote, location=location)

    if model == "A":
        fg = [(f"N={n}", m.d("goodput_mbps", "A", "AHTCP", "FGTCP", n)) for n in big if m.has("A", "FGTCP", n)]
        out.append(Check(
            "Fig. 3", f"model A: AHTCP's goodput is above FGTCP's (every N ≥ {LARGE}: paired difference, Mb/s, 95 % interval above 0)",
            ", ".join(f"N={n}: {m.g('A', 'AHTCP', n):.3g} vs {m.g('A', 'FGTCP', n):.3g} Mb/s" for n in big) + f"; AHTCP − FGTCP: {_diffs(fg)}",
            bool(fg) and all(above(d) for _, d in fg), values={"id": "§4.3 s5 above", "diff_mbps": {k: [d.mean, d.low, d.high] for k, d in fg}},
            quote="ネットワークモデル A での AHTCP は、FGTCP と比較するとグッドプットが向上しており", location="§4.3 s5"))
        out.append(Check(
            "Fig. 3", f"model A: AHTCP's goodput is slightly below LNRTCP's and HYBTCP's but nearly equal (every N ≥ {LARGE}: "
            "paired difference's 95 % interval below 0 and above −10 % of theirs)",
            f"{ratios}; AHTCP − them (Mb/s): {_diffs(near)}", bool(near) and all(slightly_below(d) for _, d in near),
            values={"id": "§4.3 s5 near", "diff_mbps": {k: [d.mean, d.low, d.high, d.ref] for k, d in near}},
            quote="LNRTCPやHYBTCPと比べても、多少低いがほぼ同様な値になっている", location="§4.3 s5"))
        out.append(nir_lower("Fig. 4", "A", "§4.3 s6", "一方、NIRは低く抑えられており、ネットワークに与える負荷が小さい。", "§4.3 s6"))
    else:
        out.append(Check(
            "Fig. 5", f"model B: AHTCP's goodput equals LNRTCP's and HYBTCP's (every N ≥ {LARGE}: paired difference's 95 % interval within ±10 % of theirs)",
            f"{ratios}; AHTCP − them (Mb/s): {_diffs(near)}", bool(near) and all(equal(d) for _, d in near),
            values={"id": "§4.3 s7 equal", "diff_mbps": {k: [d.mean, d.low, d.high, d.ref] for k, d in near}},
            quote="LNRTCPやHYBTCPと同等のグッドプットを記録しながらも", location="§4.3 s7"))
        out.append(nir_lower("Fig. 6", "B", "§4.3 s7 nir", "NIRを抑えることができている", "§4.3 s7"))
    return out


def _every_run(runs: pl.DataFrame) -> list[Check]:
    """§4.2 (NIR at least 1, exactly 1 without loss) and §4.3 s2 (the ceilings) on every run."""
    out: list[Check] = []
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
        min_nir >= 1.0 and exact, values={"id": "§4.2 s4", "min_nir": min_nir, "loss_free_runs": clean.height, "capped_runs": runs.height - done.height},
        quote="NIRの最小値は1となる", location="§4.2 s4"))
    worst = {mod: float(runs.filter(pl.col("model") == mod)["goodput_mbps"].max() or 0.0) for mod in CEILING_MBPS if runs.filter(pl.col("model") == mod).height}  # type: ignore[arg-type]
    out.append(Check(
        "§4.3", "no run exceeds the goodput ceiling (model A ≈ 970, model B ≈ 1,940 Mb/s)",
        "; ".join(f"model {k}: best run {v:.1f} of {CEILING_MBPS[k]:.1f} Mb/s" for k, v in worst.items()),
        all(v <= CEILING_MBPS[k] for k, v in worst.items()), values={"id": "§4.3 s2", "best_mbps": worst},
        quote="ネットワークモデル A で約970 Mbps、ネットワークモデル B で約1,940 Mbpsとなる。", location="§4.3 s2"))
    return out


def verdicts(result: Sequence[Check]) -> dict[str, Any]:
    """{finding id: passed} of the paper's findings in `result` (the maps' rows). §4.2's "exactly
    1 where nothing was lost" is None (not judged) on runs none of which lost nothing (a map of
    model B, where even N = 2 loses packets): the check itself fails there, for want of a run
    to judge, not for a NIR below 1 or above it without loss."""
    return {c.values["id"]: (None if c.values["id"] == "§4.2 s4" and not c.values["loss_free_runs"] and c.values["min_nir"] >= 1.0
                             else c.passed) for c in result if c.paper}
