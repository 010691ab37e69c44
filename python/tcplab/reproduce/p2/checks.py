"""Study 002's findings beside the measurements: every finding of FINDINGS.md (shipped beside the
scenarios) as a `Check` with its sentence and place read from that file, judged by the noise
rule decided before the runs (`order`, `level`). A finding whose mechanism tcplab lacks is a
failing check that says what is missing; a setup sentence is not a check (`SETUP`)."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p2.checks_streams import STREAM_JUDGES, also, f12_detail, worst_loss
from tcplab.reproduce.p2.constants import COMET_NAMED, COMET_READINGS, NIC_SHIPPED, ORDER_SHARE, POS_IP_MBPS, STUDY
from tcplab.reproduce.p2.noise import iqr, level, order
from tcplab.reproduce.scenarios import study_dir

__all__ = ["CALIBRATIONS", "SETUP", "checks", "findings_table", "fla_delayed", "level", "order"]

SETUP = ("F5", "F6", "F7")
"""Findings that fix a scenario's set-up (roles, paths, IPv6 as a header size): no check."""

CALIBRATIONS = ("F18",)
"""Findings FINDINGS.md reports without judging (a number that calibrates an unknown): shown as
checks beyond the verdict (`paper=False`)."""

MISSING: dict[str, str] = {}
"""Findings whose mechanism is not built, with the reason (none today)."""


def findings_table() -> dict[str, dict[str, str]]:
    """FINDINGS.md's rows by id: quote (without corner brackets), place, gist, criterion, kind."""
    text = (study_dir(STUDY) / "FINDINGS.md").read_text(encoding="utf-8")
    rows: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        m = re.match(r"\| (F\d+) \| 「(.*?)」 \| (.*?) \| (.*?) \| (.*?) \| (.*?) \| (.*?) \| (.*?) \|$", line)
        if m:
            rows[m[1]] = {"quote": m[2], "place": m[3], "gist": m[4], "measure": m[5], "criterion": m[6], "figure": m[7], "kind": m[8]}
    return rows


def _col(t: pl.DataFrame, col: str, **where: Any) -> list[float]:
    for k, v in where.items():
        t = t.filter(pl.col(k) == v)
    return t.sort("seed")[col].to_list()


def checks(data: dict[str, Any]) -> list[Check]:
    """Every finding of the paper, in FINDINGS.md's order."""
    rows = findings_table()
    made: dict[str, tuple[bool, str, dict[str, Any]]] = {}
    for fid, judge in JUDGES.items():
        made[fid] = judge(data)
    out = []
    for fid, r in rows.items():
        if fid in SETUP:
            continue
        claim = f"{fid}: {r['gist']} — {r['criterion']}"
        if fid in made:
            ok, measured, values = made[fid]
        else:
            ok, measured, values = False, f"NOT RUN: {MISSING.get(fid, 'no check yet')}", {}
        out.append(Check(f"Fig. {r['figure']}" if r["figure"] not in ("", "—") else r["place"], claim, measured, ok,
                         paper=fid not in CALIBRATIONS, values=values, quote=r["quote"], location=r["place"],
                         exercised=values.get("exercised", True)))
    return out


def fla_delayed(data: dict[str, Any]) -> pl.DataFrame:
    """The FLA runs with Linux 2.4's delayed ACK (the ones with an ACK per segment are F30's)."""
    t = data["fla"]
    return t.filter(pl.col("ack") == "delayed") if "ack" in t.columns else t


def _f1(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    t = data["sc_full"]
    ip, l2 = t["ip_mbps"].to_list(), t["l2_mbps"].to_list()
    ok = statistics.median(ip) >= 0.91 * POS_IP_MBPS and statistics.median(l2) >= 550
    what = data["sc_full_label"]
    return ok, f"{what}: IP {statistics.median(ip):.1f} Mb/s ({statistics.median(ip) / POS_IP_MBPS:.1%} of {POS_IP_MBPS:.2f}), L2 {statistics.median(l2):.1f} Mb/s (need ≥ 543 and ≥ 550)", {"ip_mbps": ip, "l2_mbps": l2}


def _copy_map(data: dict[str, Any]) -> str:
    """The copy's average/peak at every mapped position of the destination's file (medians)."""
    t = data["copy"]
    return ", ".join(f"{p:g}: {statistics.median(_col(t, 'avg_over_peak', dst_position=p)):.3f}"
                     for p in sorted(set(t["dst_position"].to_list())))


def _f2(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    copy = _col(data["copy"], "avg_over_peak", dst_position=0.0)
    reservoir = _col(data["local"], "avg_over_peak", placement="sequential")
    ok_o, t_o = order(reservoir, copy)
    ok_l, t_l = level(copy, 0.0, 0.8)
    peak = statistics.median(_col(data["copy"], "peak_mbps", dst_position=0.0))
    avg = statistics.median(_col(data["copy"], "avg_mbps", dst_position=0.0))
    return ok_o and ok_l, (f"1 GB netcat copy over GbE through page caches, both files at the disks' outer edge (shipped): peak "
                           f"{peak:.1f}, average {avg:.1f} Mb/s; 1×4×2 above the copy: {t_o}; copy below 0.8: {t_l}. Mapped, "
                           f"the destination's file at position (0 outer … 1 inner) → average/peak: {_copy_map(data)}"), {"avg_over_peak": copy}


def _f10_at(data: dict[str, Any], p: float) -> tuple[bool, str, dict[str, Any]]:
    v4 = _col(fla_delayed(data), "agg_mbps", servers=4, disks=2, rtt_ms=200, nic=NIC_SHIPPED, loss=p)
    v6 = _col(data["ipv6"], "agg_mbps", loss=p)
    if not v4 or not v6:
        return False, f"1×4×2 at 200 ms, p={p:g}: no runs to compare", {}
    m4, m6 = statistics.median(v4), statistics.median(v6)
    noise = max(iqr(v4), iqr(v6))
    ok = abs(m4 - m6) < noise
    return ok, (f"1×4×2 at 200 ms, p={p:g}, the same path: IPv4 (MSS 1460) {m4:.1f} Mb/s, IPv6 (40-byte headers, MSS 1440) "
                f"{m6:.1f} Mb/s (median); difference {m4 - m6:+.2f} against the seeds' IQR {noise:.2f}"
                + ("" if ok else " (the protocol alone separates them)")), {"ipv4_mbps": v4, "ipv6_mbps": v6}


def _f10(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    return also(data, _f10_at)


def _f3(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    v = _col(data["local"], "avg_over_peak", placement="sequential")
    ok, text = level(v, 0.9, 1.0)
    copy = _col(data["copy"], "avg_over_peak", dst_position=0.0)
    ok_o, t_o = order(v, copy)
    return ok and ok_o, (f"1×4×2 local, average/peak of 1 s bins: {text}; above the copy of Fig. 3 (shipped): {t_o}; "
                         f"the copy mapped: {_copy_map(data)}"), {"avg_over_peak": v}


def _f8(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    t, p = fla_delayed(data), worst_loss(data)
    base = dict(servers=4, disks=2, rtt_ms=200, nic=NIC_SHIPPED)
    a0, ap = _col(t, "agg_mbps", loss=0.0, **base), _col(t, "agg_mbps", loss=p, **base)
    spread = lambda v: iqr(v) / statistics.median(v)  # noqa: E731
    r0, rp = _col(t, "retx_rate", loss=0.0, **base), _col(t, "retx_rate", loss=p, **base)
    ok_retx, text = order(rp, r0)
    ok = spread(ap) > spread(a0) and ok_retx
    return ok, f"1×4×2: spread (IQR/median) {spread(a0):.3f} at p=0, {spread(ap):.3f} at p={p:g}; retransmission rate {text}", {"spread": [spread(a0), spread(ap)], "retx_0": r0, "retx_p": rp}


def _f9(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    return also(data, _f9_at)


def _f9_at(data: dict[str, Any], p: float) -> tuple[bool, str, dict[str, Any]]:
    t = fla_delayed(data)
    base = dict(servers=4, disks=2, rtt_ms=200, nic=NIC_SHIPPED)
    tails = _col(t, "tail", loss=p, **base)
    lom = _col(t, "last_over_median", loss=p, **base)
    ap0, app = _col(t, "avg_over_peak", loss=0.0, **base), _col(t, "avg_over_peak", loss=p, **base)
    share = sum(1 <= k <= 2 for k in tails) / len(tails)
    ok_lom, t_lom = level(lom, 1.2, math.inf)
    ok_ap, t_ap = order(ap0, app)
    ok = share >= ORDER_SHARE and ok_lom and ok_ap
    return ok, (f"1×4×2 at p={p:g}: 1–2 stragglers in {share:.0%} of seeds (tails {tails}); last/median {t_lom}; "
                f"average/peak loss-free above lossy: {t_ap}"), {"tails": tails, "last_over_median": lom}


def _f12(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    return also(data, _f12_at)


def _f12_at(data: dict[str, Any], p: float) -> tuple[bool, str, dict[str, Any]]:
    t = fla_delayed(data)
    to = _col(t, "timeouts", loss=p, servers=2, disks=1, rtt_ms=200, nic=NIC_SHIPPED)
    share = sum(x >= 1 for x in to) / len(to)
    part = t.filter((pl.col("loss") == p) & (pl.col("servers") == 2) & (pl.col("disks") == 1) & (pl.col("rtt_ms") == 200) & (pl.col("nic") == NIC_SHIPPED))
    most, detail = f12_detail(part)
    return share >= ORDER_SHARE and most, f"1×2×1 at p={p:g}: ≥ 1 RTO in {share:.0%} of seeds (RTOs {to}); {detail}", {"timeouts": to}


def _f13(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    return also(data, _f13_at)


def _f13_at(data: dict[str, Any], p: float) -> tuple[bool, str, dict[str, Any]]:
    t = fla_delayed(data)
    fin = t.filter((pl.col("loss") == p) & (pl.col("servers") == 2) & (pl.col("disks") == 1) & (pl.col("rtt_ms") == 200) & (pl.col("nic") == NIC_SHIPPED)).sort("seed")["stream_finish_s"].to_list()
    ratios = [max(f) / min(f) for f in fin if None not in f]
    if not ratios:
        return False, "1×2×1: no run finished both streams", {}
    ok, text = level(ratios, 1.2, 1.7)
    return ok, f"1×2×1 at p={p:g}, slow/fast completion: {text} (paper 100/70 = 1.43)", {"ratios": ratios}


def _scaling(data: dict[str, Any]) -> tuple[list[int], list[float], list[float]]:
    t = data["sc"]
    js = sorted(set(t["servers"].to_list()))
    med = [statistics.median(_col(t, "ip_mbps", servers=j)) for j in js]
    spread = [(lambda v: iqr(v) / statistics.median(v))(_col(t, "ip_mbps", servers=j)) for j in js]
    return js, med, spread


def _knee(js: list[int], med: list[float]) -> tuple[float, int | None]:
    base = [(j, m) for j, m in zip(js, med, strict=True) if j <= 4]
    slope = sum(j * m for j, m in base) / sum(j * j for j, _ in base)
    knee = next((j for j, m in zip(js, med, strict=True) if m < 0.85 * slope * j), None)
    return slope, knee


def _f15(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    js, med, _ = _scaling(data)
    slope, knee = _knee(js, med)
    if knee is None:
        return False, f"no knee: every point within 15 % of the line ({slope:.1f} Mb/s per server)", {"servers": js, "ip_mbps": med}
    util = med[js.index(knee)] / POS_IP_MBPS
    ok = 8 <= knee <= 16 and 0.5 <= util <= 0.8
    return ok, f"line {slope:.1f} Mb/s per server (j ≤ 4); knee at j = {knee} (need 8–16), utilisation there {util:.2f} (need 0.5–0.8); medians {', '.join(f'{j}: {m:.0f}' for j, m in zip(js, med, strict=True))}", {"servers": js, "ip_mbps": med, "knee": knee}


def _f16(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    js, med, spread = _scaling(data)
    slope, knee = _knee(js, med)
    if knee is None or knee == js[-1]:
        return False, f"no point past a knee (knee {knee})", {}
    k = js.index(knee)
    before = (med[k - 1] - med[0]) / (js[k - 1] - js[0]) if k > 1 else slope
    after = (med[-1] - med[k]) / (js[-1] - js[k])
    hi = [s for j, s in zip(js, spread, strict=True) if j >= 16]
    lo = [s for j, s in zip(js, spread, strict=True) if j <= 8]
    ok = after < before / 2 and statistics.fmean(hi) > statistics.fmean(lo)
    return ok, f"gain per server {before:.1f} Mb/s before the knee, {after:.1f} after (need < half); spread (IQR/median) {statistics.fmean(lo):.3f} at j ≤ 8, {statistics.fmean(hi):.3f} at j ≥ 16", {"spread": spread}


def _shared(data: dict[str, Any]) -> tuple[list[int], list[list[float]], list[float]]:
    """The 1×26×2 rate (file bytes) per seed with no cross traffic (Fig. 11's j = 26 runs) and
    with each number of cross flows."""
    sc, sh = data["sc"], data["shared"]
    alone = _col(sc, "agg_mbps", servers=max(sc["servers"].to_list()))
    ns = sorted(set(sh["cross"].to_list()))
    return ns, [_col(sh, "agg_mbps", cross=n) for n in ns], alone


def _f14(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    ns, shared, alone = _shared(data)
    spread = lambda v: iqr(v) / statistics.median(v)  # noqa: E731
    s_alone, s_shared = spread(alone), [spread(v) for v in shared]
    ok = all(x > s_alone for x in s_shared)
    return ok, (f"1×26×2 seed spread (IQR/median) alone {s_alone:.3f}; with cross traffic "
                + ", ".join(f"{n} flows {x:.3f}" for n, x in zip(ns, s_shared, strict=True)) + " (above at every mapped amount needed)"), {"alone": s_alone, "shared": s_shared}


def _f18(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    from tcplab.reproduce.p2.constants import SHARED_MBPS
    ns, shared, _ = _shared(data)
    meds = [statistics.median(v) for v in shared]
    near = [n for n, m in zip(ns, meds, strict=True) if abs(m / SHARED_MBPS - 1) <= 0.1]
    text = ", ".join(f"{n} cross flows: {m:.1f} Mb/s" for n, m in zip(ns, meds, strict=True))
    return bool(near), (f"1×26×2 beside bulk TCP cross traffic: {text}; within ±10 % of 224.8 at {near or 'no mapped amount'} "
                        "(a calibration of the unknown cross traffic, not a test of the model)"), {"cross": ns, "mbps": meds}


def _f20(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    t = data["comet"]
    ratios: dict[str, list[float]] = {}
    present = set(t["reading"].to_list())
    for r in (r for r in COMET_READINGS if r in present):  # --quick runs some readings only
        a0, a200 = _col(t, "agg_mbps", reading=r, rtt_ms=0), _col(t, "agg_mbps", reading=r, rtt_ms=200)
        ratios[r] = [b / a for a, b in zip(a0, a200, strict=True)]
    ok, text = level(ratios[COMET_NAMED], 0.23, 0.33)
    others = "; ".join(f"{COMET_READINGS[r]['label']}: {statistics.median(v):.3f}" for r, v in ratios.items() if r != COMET_NAMED)
    return ok, f"200 ms / 0 ms, {COMET_READINGS[COMET_NAMED]['label']}: {text}. Other readings (medians): {others}", {"ratios": ratios}


def _f4(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    t, d = data["local"], data["disk_only"]
    seq, scat = _col(t, "agg_mbps", placement="sequential"), _col(t, "agg_mbps", placement="scattered")
    ok, text = order(seq, scat)
    d_seq = statistics.median(_col(d, "agg_mbps", placement="sequential", file_position=0.0))
    d_scat = statistics.median(_col(d, "agg_mbps", placement="scattered"))
    return ok, (f"1×4×2 local over GbE (Fig. 4), 1 GB, sequential above scattered: {text}; gain "
                f"{statistics.median(seq) / statistics.median(scat):.2f}×. With the disks the limit (1×1×2 on 10 Gb/s, reported): "
                f"{d_seq:.0f} against {d_scat:.0f} Mb/s, {d_seq / d_scat:.2f}×"), {"sequential": seq, "scattered": scat}


def _f19(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    base, lim = data["comet"], data["comet_limit"]
    free0, free20 = _col(base, "agg_mbps", reading="shipped", rtt_ms=0), _col(base, "agg_mbps", reading="shipped", rtt_ms=20)
    free200 = _col(base, "agg_mbps", reading="shipped", rtt_ms=200)
    texts, explains = [], []
    for limit in sorted(set(lim["limit"].to_list()), key=lambda x: -float(x.removesuffix("Mbps"))):
        held0, held20 = _col(lim, "agg_mbps", limit=limit, rtt_ms=0), _col(lim, "agg_mbps", limit=limit, rtt_ms=20)
        held200 = _col(lim, "agg_mbps", limit=limit, rtt_ms=200)
        dip, t_dip = order(free0, held0)
        kept = abs(statistics.median(held20) / statistics.median(free20) - 1) <= 0.1
        ratio = statistics.median([b / a for a, b in zip(held0, held200, strict=True)])
        if dip and kept:
            explains.append(limit)
        texts.append(f"{limit}: 0 ms {statistics.median(held0):.0f} Mb/s ({'dips' if dip else 'no dip'}: {t_dip}), 20 ms "
                     f"{statistics.median(held20):.1f} against {statistics.median(free20):.1f} ({'kept' if kept else 'cut'}), F20's "
                     f"200/0 ms ratio {ratio:.3f}")
    free_ratio = statistics.median([b / a for a, b in zip(free0, free200, strict=True)])
    return bool(explains), (f"1×1×1 through Comet Drop (comet.toml), unlimited: 0 ms {statistics.median(free0):.0f} Mb/s, 20 ms "
                            f"{statistics.median(free20):.1f} (ratio 200/0 ms {free_ratio:.3f}); with a processing limit of " + "; ".join(texts)
                            + f" — the limit explains the 0 ms point alone at {explains or 'no mapped value'}"), {"explains": explains}


def _f22(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    t = data["disk_only"]
    t = t.filter(pl.col("placement") == "sequential") if "placement" in t.columns else t
    outer, inner = statistics.median(_col(t, "agg_mbps", file_position=0.0)), statistics.median(_col(t, "agg_mbps", file_position=1.0))
    need_o, need_i = math.ceil(POS_IP_MBPS / outer), math.ceil(POS_IP_MBPS / inner)
    ok = 4 * inner >= POS_IP_MBPS
    return ok, (f"one disk server's two disks alone: {outer:.0f} Mb/s (outer edge), {inner:.0f} Mb/s (inner); "
                f"{need_o} (outer) / {need_i} (inner) servers match {POS_IP_MBPS:.2f} Mb/s, so FLA's 1×4×2 does"), {"outer_mbps": outer, "inner_mbps": inner}


def _f23(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    t = data["sc"]
    j = max(t["servers"].to_list())
    v = [x / POS_IP_MBPS for x in _col(t, "ip_mbps", servers=j)]
    ok, text = level(v, 0.9, 1.0)
    return ok, f"1×{j}×2 at p = 0, IP rate over the bottleneck / {POS_IP_MBPS:.2f}: {text}", {"share": v}


def _f24(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    return also(data, _f24_at)


def _f24_at(data: dict[str, Any], p: float) -> tuple[bool, str, dict[str, Any]]:
    t = fla_delayed(data)
    base = dict(servers=4, disks=2, nic=NIC_SHIPPED)
    c0, cp = _col(t, "stream_cv", loss=0.0, rtt_ms=200, **base), _col(t, "stream_cv", loss=p, rtt_ms=200, **base)
    c20 = _col(t, "stream_cv", loss=p, rtt_ms=20, **base)
    ok1, t1 = order(cp, c0)
    ok2, t2 = order(cp, c20)
    return ok1 and ok2, f"1×4×2 per-stream rate CV, p={p:g} above p=0 at 200 ms: {t1}; 200 ms above 20 ms at p={p:g}: {t2}", {"cv_0": c0, "cv_p": cp, "cv_20ms": c20}


def _f27(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    w = POS_IP_MBPS * 1e6 * 0.2 / 8 / 1448
    ca_rtts = w  # W/2 → W at +1 segment per 2 RTTs (one ACK per two segments, +1 per cwnd ACKs)
    ss_rtts = math.log(w / 2) / math.log(1.5)
    ok = ca_rtts > 100 * ss_rtts
    return ok, f"W = BDP = {w:,.0f} segments: congestion avoidance regrows W/2 → W in {ca_rtts:,.0f} RTTs ({ca_rtts * 0.2 / 60:.0f} min), slow start 2 → W in {ss_rtts:.0f} RTTs (arithmetic of the linux-2.4.18 rules; not read from a trace)", {"ca_rtts": ca_rtts, "ss_rtts": ss_rtts}


def _f32(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    t = fla_delayed(data)
    base = dict(loss=0.0, nic=NIC_SHIPPED)
    s200 = [statistics.fmean(v) for v in _col(t, "stream_mbps", servers=4, disks=2, rtt_ms=200, **base)]
    s20 = [statistics.fmean(v) for v in _col(t, "stream_mbps", servers=4, disks=2, rtt_ms=20, **base)]
    a111, a142 = _col(t, "agg_mbps", servers=1, disks=1, rtt_ms=200, **base), _col(t, "agg_mbps", servers=4, disks=2, rtt_ms=200, **base)
    ok1, t1 = order(s20, s200)
    ok2, t2 = order(a142, a111)
    sp = lambda v: iqr(v) / statistics.median(v)  # noqa: E731
    ok3 = sp(a142) < sp(a111)
    return ok1 and ok2 and ok3, f"per-stream rate 20 ms above 200 ms: {t1}; aggregate 1×4×2 above 1×1×1: {t2}; spread {sp(a111):.3f} → {sp(a142):.3f}", {}


def _f33(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    t = data["sc_full"]
    pk = t["peak_l2_mbps"].to_list()
    return statistics.median(pk) >= 550, f"{data['sc_full_label']}: peak 1 s bin at L2 {statistics.median(pk):.1f} Mb/s (need ≥ 550; §7 calls 550 a peak, §4.2 an average)", {"peak_l2_mbps": pk}


def _f34(data: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    return also(data, _f34_at)


def _f34_at(data: dict[str, Any], p: float) -> tuple[bool, str, dict[str, Any]]:
    t = fla_delayed(data)
    cv = _col(t, "stream_cv", loss=p, servers=4, disks=2, rtt_ms=200, nic=NIC_SHIPPED)
    ok, text = level(cv, 0.2, math.inf)
    return ok, f"1×4×2 at p={p:g}, per-stream rate CV: {text}", {"cv": cv}


JUDGES: dict[str, Callable[[dict[str, Any]], tuple[bool, str, dict[str, Any]]]] = {
    "F1": _f1, "F2": _f2, "F3": _f3, "F10": _f10, "F4": _f4, "F8": _f8, "F9": _f9, "F12": _f12, "F13": _f13, "F15": _f15, "F16": _f16, "F17": _f1,
    "F14": _f14, "F18": _f18, "F19": _f19, "F20": _f20, "F22": _f22, "F23": _f23, "F24": _f24, "F27": _f27, "F32": _f32, "F33": _f33, "F34": _f34,
    **STREAM_JUDGES,
}
