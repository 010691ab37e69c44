"""Study 002's per-stream findings (F11, F21, F26, F28–F31): judged on the trace readings the
worker took (`streams`, through `measures.run_measures`), with the noise rule of `checks`."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from tcplab.reproduce.p2.constants import MSS, NIC_SHIPPED, ORDER_SHARE
from tcplab.reproduce.p2.noise import level, order

__all__ = ["STREAM_JUDGES", "also", "f12_detail", "spearman", "worst_loss"]

Verdict = tuple[bool, str, dict[str, Any]]


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (ties share their mean rank); NaN for fewer than 3 pairs or a
    constant side."""
    if len(x) < 3:
        return math.nan
    rx = pl.Series(x, dtype=pl.Float64).rank("average").to_numpy()
    ry = pl.Series(y, dtype=pl.Float64).rank("average").to_numpy()
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _rows(t: pl.DataFrame, **where: Any) -> pl.DataFrame:
    for k, v in where.items():
        t = t.filter(pl.col(k) == v)
    return t.sort("seed")


def _fla142(data: dict[str, Any], p: float, rtt_ms: int = 200, ack: str = "delayed") -> pl.DataFrame:
    return _rows(data["fla"], servers=4, disks=2, loss=p, rtt_ms=rtt_ms, nic=NIC_SHIPPED, ack=ack)


def worst_loss(data: dict[str, Any]) -> float:
    """The path loss the lossy findings are judged at: the largest mapped (decided before the
    runs); `also` prints the other lossy points beside it."""
    return max(data["plan"]["fla_losses"])


def also(data: dict[str, Any], judge: Callable[[dict[str, Any], float], Verdict]) -> Verdict:
    """`judge` at the largest mapped path loss (decided before the runs), with its verdict and
    text at every other lossy point appended (reported, not judged: a mapped unknown's other
    values, which may flip the finding)."""
    p = worst_loss(data)
    ok, text, values = judge(data, p)
    for q in sorted(x for x in data["plan"]["fla_losses"] if 0 < x < p):
        ok_q, text_q, _ = judge(data, q)
        text += f". [At p={q:g}, reported: {'holds' if ok_q else 'does not hold'}: {text_q}]"
    return ok, text, values


def _f11_at(data: dict[str, Any], p: float) -> Verdict:
    t = _rows(data["traced"], loss=p)
    shares = [sum(w) / sum(n) if sum(n) else math.nan for w, n in zip(t["out_within"].to_list(), t["out_cwnd_windows"].to_list(), strict=True)]
    classes = {"recovery": 0, "rwnd": 0, "cwnd": 0, "other": 0}
    for run in t["out_classes"].to_list():
        for stream in run:
            for k in classes:
                classes[k] += stream[k]
    gaps = [g for run in t["out_median_gap"].to_list() for g in run if not math.isnan(g)]
    if any(math.isnan(s) for s in shares):
        return False, f"a run without one cwnd-limited RTT window: {shares}", {}
    ok = statistics.median(shares) >= 0.9 and sum(s >= 0.9 for s in shares) / len(shares) >= ORDER_SHARE
    total = sum(classes.values())
    return ok, (f"1×2×1 at p={p:g}, a tap at each sender's NIC: peak outstanding within 5 % of cwnd in a median "
                f"{statistics.median(shares):.1%} of the cwnd-limited RTT windows (need ≥ 90 % in ≥ 80 % of seeds; median gap "
                f"{statistics.median(gaps):.2%}); the exceptions: of {total:,} RTT windows, {classes['recovery']:,} in recovery, "
                f"{classes['rwnd']:,} held by the receive window, {classes['other']:,} held by the application/disks"), {"shares": shares, "classes": classes}


def _f11(data: dict[str, Any]) -> Verdict:
    return also(data, _f11_at)


def f12_detail(t: pl.DataFrame) -> tuple[bool, str]:
    """Whether most RTOs fired during an open fast recovery (fast retransmit failed to repair),
    with the counts."""
    rtos = sum(sum(v) for v in t["s_rtos"].to_list())
    failed = sum(sum(v) for v in t["s_rto_after_fr"].to_list())
    return failed > rtos / 2, f"{failed} of {rtos} RTOs fired during an open fast recovery (need most)"


def _mathis_mbps(p: float, rtt_s: float) -> tuple[float, float]:
    """Mathis et al. (1997): MSS/RTT·C/√p with C = √(3/2) (an ACK per segment) and √(3/4) (one
    per two segments), Mb/s."""
    base = MSS * 8 / rtt_s / math.sqrt(p) / 1e6
    return base * math.sqrt(1.5), base * math.sqrt(0.75)


def _within(a: float, b: float, tol: float = 0.3) -> bool:
    return (a == b == 0) or (min(a, b) > 0 and max(a, b) / min(a, b) <= 1 + tol)


def _f21(data: dict[str, Any]) -> Verdict:
    comet = _rows(data["comet"], reading="shipped", rtt_ms=200)
    path = data["path"]
    c_to = statistics.fmean(comet["timeouts"].to_list())
    c_rx = statistics.median(comet["retx_rate"].to_list())
    c_agg = statistics.median(comet["agg_mbps"].to_list())
    texts, ok0, dyn0 = [], False, False
    for p in sorted(set(path["loss"].to_list())):
        t = _rows(path, loss=p)
        to, rx, agg = statistics.fmean(t["timeouts"].to_list()), statistics.median(t["retx_rate"].to_list()), statistics.median(t["agg_mbps"].to_list())
        dyn = _within(to, c_to) and _within(rx, c_rx)
        ok = dyn and _within(agg, c_agg)
        if p == 0:
            ok0, dyn0 = ok, dyn
        texts.append(f"path loss {p:g}: RTOs {to:.2f}, retransmitted {rx:.2e}, {agg:.1f} Mb/s "
                     f"({'matches' if ok else 'RTOs and retransmissions match, the rate differs' if dyn else 'differs'})")
    hi, lo = _mathis_mbps(7 / 65536, 0.2)
    return ok0, (f"1×1×1, 1 GB, 200 ms: Comet Drop (loss 7/65536): RTOs per stream {c_to:.2f} (mean), retransmitted {c_rx:.2e} "
                 f"(median), {c_agg:.1f} Mb/s; the SC2002 path model at {'; '.join(texts)} — all three within ±30 % needed at the "
                 f"shipped path loss 0 (A13; the RTOs and retransmission rate alone {'match' if dyn0 else 'differ'} there). "
                 f"Mathis at p = 7/65536, 200 ms: {lo:.1f}–{hi:.1f} Mb/s per stream"), {"comet_rtos": c_to, "comet_retx": c_rx, "comet_mbps": c_agg}


def _f26_at(data: dict[str, Any], p: float) -> Verdict:

    def rho(rtt_ms: int) -> tuple[float, int]:
        t = _fla142(data, p, rtt_ms)
        xs, ys = [], []
        for w, fin in zip(t["s_cwnd_first_loss"].to_list(), t["stream_finish_s"].to_list(), strict=True):
            for a, b in zip(w, fin, strict=True):
                if a is not None and b is not None:
                    xs.append(a)
                    ys.append(b)
        return spearman(xs, ys), len(xs)

    r200, n200 = rho(200)
    r20, n20 = rho(20)
    ok = r200 <= -0.5 and abs(r20) < abs(r200)
    return ok, (f"1×4×2 at p={p:g}, Spearman ρ(cwnd at the first loss, completion time) pooled over seeds: {r200:.2f} at 200 ms "
                f"({n200} streams; need ≤ −0.5), {r20:.2f} at 20 ms ({n20} streams; need a smaller |ρ|)"), {"rho_200": r200, "rho_20": r20}


def _f26(data: dict[str, Any]) -> Verdict:
    return also(data, _f26_at)


def _first_loss_gaps(t: pl.DataFrame) -> list[float]:
    """Per run: the median gap between two streams' first-loss times, in units of the run's RTT
    (NaN when fewer than two streams lost)."""
    out = []
    for first, rtt in zip(t["s_first_loss_s"].to_list(), t["rtt_s"].to_list(), strict=True):
        ts = sorted(x for x in first if x is not None)
        gaps = [abs(a - b) / rtt for i, a in enumerate(ts) for b in ts[i + 1:]]
        out.append(statistics.median(gaps) if gaps else math.nan)
    return out


def _loss_rate_rho(t: pl.DataFrame) -> float:
    xs, ys = [], []
    for ev, rate, fin in zip(t["s_loss_events"].to_list(), t["stream_mbps"].to_list(), t["stream_finish_s"].to_list(), strict=True):
        for e, r, f in zip(ev, rate, fin, strict=True):
            if f:
                xs.append(e / f)
                ys.append(r)
    return spearman(xs, ys)


def _f28(data: dict[str, Any]) -> Verdict:
    p = worst_loss(data)
    drop, rand = _fla142(data, 0.0), _fla142(data, p)
    rho0, rhop = _loss_rate_rho(drop), _loss_rate_rho(rand)
    gaps = _first_loss_gaps(drop)
    share = sum(g >= 1 for g in gaps if not math.isnan(g)) / len(gaps)
    ok = not math.isnan(rho0) and abs(rho0) < 0.3 and share >= ORDER_SHARE
    lossless = sum(math.isnan(g) for g in gaps)
    # Not exercised when no run at path loss 0 had two streams lose (the claim is about when
    # congestion losses hit the streams; with none there is nothing to judge).
    exercised = lossless < len(gaps)
    return ok and exercised, (("NOT EXERCISED: no run at path loss 0 had two streams with an overflow loss; " if not exercised else "")
                              + f"1×4×2 at 200 ms, overflow losses only (path loss 0): ρ(loss events/s, stream rate) {rho0:.2f} (need |ρ| < 0.3); "
                f"median gap between the streams' first losses ≥ 1 RTT in {share:.0%} of seeds (need ≥ 80 %; gaps in RTTs "
                f"{[round(g, 2) for g in gaps]}{f', {lossless} runs with < 2 lossy streams' if lossless else ''}); with random loss "
                f"p={p:g}, reported: ρ {rhop:.2f}"), {"rho_droptail": rho0, "rho_random": rhop, "gaps_rtt": gaps, "exercised": exercised}


def _regrow_slope(t: pl.DataFrame, rtts: Sequence[int]) -> tuple[list[float], dict[int, float], dict[int, float]]:
    """Per seed, the log-log slope of the median loss-to-regrowth time against RTT; the median
    regrowth time and the censored share per RTT, pooled."""
    per_seed: dict[int, dict[int, float]] = {}
    med, cens = {}, {}
    for rtt in rtts:
        part = t.filter(pl.col("rtt_ms") == rtt)
        pooled, censored, total = [], 0, 0
        for seed, times, c in zip(part["seed"].to_list(), part["regrow_s"].to_list(), part["s_regrow_censored"].to_list(), strict=True):
            pooled += times
            censored += sum(c)
            total += sum(c) + len(times)
            if times:
                per_seed.setdefault(seed, {})[rtt] = statistics.median(times)
        med[rtt] = statistics.median(pooled) if pooled else math.nan
        cens[rtt] = censored / total if total else math.nan
    slopes = []
    for by_rtt in per_seed.values():
        xs = [r for r in rtts if r in by_rtt]
        if len(xs) >= 3:
            slopes.append(float(np.polyfit(np.log(xs), np.log([by_rtt[r] for r in xs]), 1)[0]))
    return slopes, med, cens


def _f29(data: dict[str, Any]) -> Verdict:
    t = _rows(data["comet"], reading="shipped").filter(pl.col("rtt_ms") > 0)
    rtts = sorted(set(t["rtt_ms"].to_list()))
    slopes, med, cens = _regrow_slope(t, rtts)
    if not slopes:
        return False, "no seed regrew its window after a loss at three RTTs or more", {}
    m = statistics.median(slopes)
    ok = m >= 0.9
    rows = ", ".join(f"{r} ms: {med[r]:.2f} s ({cens[r]:.0%} censored)" for r in rtts)
    return ok, (f"1×1×1 through Comet Drop (loss 7/65536): time from a loss back to the pre-loss cwnd, median {rows}; log-log slope "
                f"against RTT per seed: median {m:.2f} (need ≥ 0.9: at least linear within the fit's noise; a regrowth cut short "
                f"by the next loss is censored, not counted)"), {"slopes": slopes}


def _f30_at(data: dict[str, Any], p: float) -> Verdict:
    traced = _rows(data["traced"], loss=p)
    ratio = statistics.median([x for run in traced["acks_per_data"].to_list() for x in run])
    dl, ev = _fla142(data, p, ack="delayed"), _fla142(data, p, ack="every")
    g = lambda t: [statistics.fmean([x for x in v if x is not None] or [math.nan]) for v in t["s_ss_growth"].to_list()]  # noqa: E731
    ok_g, t_g = order(g(ev), g(dl))
    ok_t, t_t = order(dl["last_over_median"].to_list(), ev["last_over_median"].to_list())
    ok = ratio < 0.75 and ok_g and ok_t
    return ok, (f"ACKs per data segment at the senders' NICs (1×2×1, p={p:g}): median {ratio:.3f} (need < 0.75, nearer the delayed "
                f"ACK's 0.5 than one per segment's 1.0); 1×4×2 at p={p:g}, slow-start growth per RTT with an ACK per segment above "
                f"delayed ACK: {t_g}; straggler tail (last/median completion) with delayed ACK above an ACK per segment: {t_t}"),\
        {"acks_per_data": ratio}


def _f30(data: dict[str, Any]) -> Verdict:
    return also(data, _f30_at)


def _persistence(t: pl.DataFrame) -> list[float]:
    """Per run, the median length (s) of its imbalance episodes; 0 when none arose."""
    return [statistics.median(v) if v else 0.0 for v in t["imbalance_s"].to_list()]


def _f31_at(data: dict[str, Any], p: float) -> Verdict:
    a200, a20 = _fla142(data, p, 200), _fla142(data, p, 20)
    s200, s20 = _persistence(a200), _persistence(a20)
    ok_l, t_l = level(s200, 5.0, math.inf)
    ok_o, t_o = order(s200, s20)
    arose = sum(bool(v) for v in a200["imbalance_s"].to_list()) / a200.height
    return ok_l and ok_o, (f"1×4×2 at p={p:g}: how long two streams' 1 s rates stay ≥ 2× apart (median episode per run): at 200 ms "
                           f"{t_l} (imbalance arose in {arose:.0%} of runs); 200 ms longer than 20 ms: {t_o}"), {"persist_200": s200, "persist_20": s20}


def _f31(data: dict[str, Any]) -> Verdict:
    return also(data, _f31_at)


def _spread_ratio(t: pl.DataFrame) -> list[float]:
    """Per run: the slowest stream's completion time over the fastest's."""
    return [max(f) / min(f) for f in t["stream_finish_s"].to_list() if f and None not in f]


def _f25_at(data: dict[str, Any], p: float) -> Verdict:
    free = _fla142(data, p)
    coupled = _rows(data["coupled"], loss=p, mode="decp")
    ok, text = order(free["stream_cv"].to_list(), coupled["stream_cv"].to_list())
    lia = _rows(data["coupled"], loss=p, mode="lia")
    _, t_lia = order(free["stream_cv"].to_list(), lia["stream_cv"].to_list()) if lia.height else (False, "not run")
    return ok, (f"1×4×2 at 200 ms, p={p:g}, per-stream rate CV independent above coordinated toward the mean: {text} "
                f"(RFC 6356's coupled increase, reported: {t_lia})"), {}


def _f25(data: dict[str, Any]) -> Verdict:
    return also(data, _f25_at)


CONTENDED_LINE, SHIPPED_LINE = "100Mbps", "599.04Mbps"
"""F35's competing-flow lines (`runs.COMPETING_LINES`): judged where the flows contend."""

F35_MODES = {"decp": "equalised toward the mean (DECP-like)", "lia": "RFC 6356's coupled increase"}
"""F35's joint window controls, by `mode` (`runs.COORDINATION`)."""


def _f35_mode(data: dict[str, Any], p: float, mode: str) -> tuple[bool, str]:
    """F35's three conditions for one joint control at path loss `p`."""
    free = _fla142(data, p)
    coupled = _rows(data["coupled"], loss=p, mode=mode)
    if not coupled.height:
        return False, f"{F35_MODES[mode]}: not run"
    ok_r, t_r = order(_spread_ratio(free), _spread_ratio(coupled))
    ok_a, t_a = order(coupled["avg_over_peak"].to_list(), free["avg_over_peak"].to_list())
    agg = (statistics.median(free["agg_mbps"].to_list()), statistics.median(coupled["agg_mbps"].to_list()))
    comp = data["competing"]

    def beside(line: str, m: str) -> list[float]:
        return _rows(comp, line=line, mode=m)["others_mbps"].to_list()

    c_free, c_coupled = beside(CONTENDED_LINE, "independent"), beside(CONTENDED_LINE, mode)
    took_more, t_c = order(c_free, c_coupled) if c_free and c_coupled else (True, "no contended runs to judge")
    ok = ok_r and ok_a and not took_more
    shipped = [beside(SHIPPED_LINE, m) for m in ("independent", mode)]
    on_shipped = (f"on the line as shipped, which they do not fill, {statistics.median(shipped[0]):.1f} and {statistics.median(shipped[1]):.1f}"
                  if all(shipped) else "the line as shipped not run (--quick)")
    return ok, (f"{F35_MODES[mode]} ({'meets all three' if ok else 'misses'}): slowest/fastest completion independent above "
                f"coordinated: {t_r}; average/peak coordinated above independent: {t_a}; aggregate {agg[0]:.1f} → {agg[1]:.1f} Mb/s; "
                f"a competing bulk TCP flow on the SC2002 path with its line at {CONTENDED_LINE} gets "
                f"{statistics.median(c_free) if c_free else float('nan'):.1f} Mb/s beside independent streams and "
                f"{statistics.median(c_coupled) if c_coupled else float('nan'):.1f} beside coordinated ones (need: not less — "
                f"independent above coordinated must not hold: {t_c}); {on_shipped}")


def _f35_at(data: dict[str, Any], p: float) -> Verdict:
    """Holds when one of the joint controls meets all three conditions; each one's printed."""
    results = [_f35_mode(data, p, m) for m in F35_MODES]
    return any(ok for ok, _ in results), f"1×4×2 at 200 ms, p={p:g}, joint window control against independent streams — " + "; ".join(
        t for _, t in results), {}


def _f35(data: dict[str, Any]) -> Verdict:
    return also(data, _f35_at)


STREAM_JUDGES = {"F11": _f11, "F21": _f21, "F25": _f25, "F35": _f35, "F26": _f26, "F28": _f28, "F29": _f29, "F30": _f30, "F31": _f31}
"""The per-stream findings' judges, by id (merged into `checks.JUDGES`)."""
