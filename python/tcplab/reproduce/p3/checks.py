"""Study 003's findings judged on the runs' kept data (`runs.keep`, one dict per seed), by the
criteria of dev/p3/FINDINGS.md (fixed before any run). Each function takes plain data so a test
can hand it a broken input."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p3.constants import (
    ACC_MEDIAN,
    ACC_P90,
    DROP_MAX,
    PACKET_BITS,
    PACKETS,
    RATIO_MIN,
    RECOVER_MEDIAN,
    RECOVER_TOL,
    STEADY_S,
)
from tcplab.reproduce.p3.stats import combine, interval, order, threshold

__all__ = ["QUOTES", "f14", "f2", "f24", "f15", "f20", "f21", "f27", "f28", "f29", "f30", "f31", "f7", "errors", "make", "recoveries"]

Run = Mapping[str, Any]

QUOTES: dict[str, tuple[str, str]] = {
    "F2": ("「TCP コネクションのデータ・ACKパケットを利用する」; 「余計な計測パケットを必要とせずに計測を行うことができる」", "S3 L34, L37"),
    "F5": ("「不必要に高い転送レートでパケットを送出することを避けられる」", "S3 L40"),
    "F6": ("「計測精度を保ちながら必要なパケット数を減少させることができる」", "S3 L41"),
    "F7": ("「利用可能帯域が急激に変化した場合など」; 「このような場合でも数回の計測で新たな利用可能帯域を発見できる」", "S3 L43–L44"),
    "F10": ("「ImTCP の計測結果が信頼できない場合がある」; 「RTT を用いた輻輳ウィンドウサイズの制御を併用する」", "S4 L60, L62"),
    "F14": ("「カーネルシステムのタイマ粒度が粗いため計測精度が低下」", "S6 L93"),
    "F15": ("「*HZ*=100 の場合 1.2Mbps まで計測可能」; 「*HZ*=100,000 の場合 1.2Gbps まで計測可能」", "S6 L95–L96"),
    "F18": ("「計測精度・実行速度を考慮して *HZ* を決定する必要がある」", "S6 L113"),
    "F20": ("「1 回の計測あたりのストリーム数 : 4, 1 ストリームあたりのパケット数 : 10」", "S7 L123"),
    "F21": ("「クロストラフィックがどちらの場合でも高い精度で計測することができる」", "S8 L141"),
    "F24": ("「輻輳ウィンドウサイズが ImTCP の計測結果を用いて設定された上限値によって抑えられている」", "S9 L151"),
    "F25": ("「RTT がしきい値を超えた場合に輻輳ウィンドウサイズを減少させている」", "S9 L152"),
    "F26": ("「ImTCP-bg のアルゴリズムに基づいて正しく動作している」", "S9 L153"),
    "F27": ("「TCP Reno を用いた場合得られたスループットが最も高い」", "S10 L165"),
    "F28": ("「空き帯域を大きく越えておりクロストラヒックのスループットも押し下げている」", "S10 L166"),
    "F29": ("「バックグラウンド転送を行っているとは言えない」", "S10 L167"),
    "F30": ("「ImTCP-bg, TCP-LP を用いた場合クロストラヒックのスループットをほとんど押し下げない」", "S10 L168"),
    "F31": ("「ImTCP-bg を用いた場合空き帯域に近いスループットを得られている」", "S10 L169"),
}


def make(fid: str, status: str, claim: str, measured: str, values: Mapping[str, Any], *, figure: str = "", paper: bool = True) -> Check:
    """A Check from a verdict string ("pass", "FAIL", "inconclusive", "not exercised")."""
    quote, place = QUOTES[fid]
    return Check(figure=figure or f"{fid} ({place.split()[0]})", claim=claim, measured=measured, passed=status == "pass",
                 paper=paper, values={"id": fid, "status": status, **values}, quote=quote, location=place,
                 exercised=status != "not exercised", inconclusive=status == "inconclusive")


def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f} %"


def _ci(values: Sequence[float], fmt: Any = _pct) -> str:
    m, lo, hi = interval(values)
    if math.isnan(m):
        return "none"
    if math.isinf(lo):
        return f"{fmt(m)} (one seed)"
    return f"{fmt(m)} [{fmt(lo)}, {fmt(hi)}]"


def errors(run: Run, from_s: float = STEADY_S) -> np.ndarray:
    """|Â − A|/A of each measurement that starts at or after `from_s` (A the truth over its
    span; spans whose truth is not positive are left out)."""
    m = run.get("meas") or {}
    st = np.asarray(m.get("start_s", []), dtype=float)
    est = np.asarray(m.get("estimate_bps", []), dtype=float)
    tr = np.asarray(m.get("truth_bps", []), dtype=float)
    k = (st >= from_s) & (tr > 0)
    return np.abs(est[k] - tr[k]) / tr[k]


def f21(runs: Sequence[Run], kind: str, rule: str = "ties-split", *, judged: bool = True) -> Check:
    """F21: per seed the median and 90th percentile of |Â − A|/A after STEADY_S; threshold
    claims on each across seeds (no result at all: FAIL, the estimator gave nothing)."""
    med, p90, count, bias = [], [], [], []
    for r in runs:
        e = errors(r)
        count.append(len(e))
        med.append(float(np.median(e)) if len(e) else math.nan)
        p90.append(float(np.percentile(e, 90)) if len(e) else math.nan)
        m = r.get("meas") or {}
        st, est, tr = (np.asarray(m.get(c, []), dtype=float) for c in ("start_s", "estimate_bps", "truth_bps"))
        k = (st >= STEADY_S) & (tr > 0)
        bias.append(float(np.mean((est[k] - tr[k]) / tr[k])) if k.any() else math.nan)
    if any(c == 0 for c in count):
        status = "FAIL"
    else:
        status = combine(threshold(med, ACC_MEDIAN), threshold(p90, ACC_P90))
    measured = (f"{kind} cross traffic, trend rule {rule}: median error {_ci(med)}, 90th pct {_ci(p90)}, signed mean {_ci(bias)};"
                f" results per seed {count} (after {STEADY_S:g} s)")
    return make("F21", status, f"accurate with {kind} cross traffic: median |Â−A|/A ≤ {ACC_MEDIAN:.0%}, 90th pct ≤ {ACC_P90:.0%} (ours)",
                measured, {"kind": kind, "rule": rule, "median": med, "p90": p90, "bias": bias, "results": count},
                figure=f"F21 (S8) {kind}, {rule}", paper=judged)


def recoveries(run: Run, steps: Sequence[float], end_s: float) -> list[dict[str, Any]]:
    """F7's events: for each step time whose new level's truth (median of the 100 ms truth bins
    from 1 s after the step to the next step) lies outside the search range of the last result
    before the step, the number of results started after the step until one is within
    RECOVER_TOL of its own truth (None: not within the level)."""
    m = run.get("meas") or {}
    t = np.asarray(m.get("time_s", []), dtype=float)
    st = np.asarray(m.get("start_s", []), dtype=float)
    est = np.asarray(m.get("estimate_bps", []), dtype=float)
    tr = np.asarray(m.get("truth_bps", []), dtype=float)
    lo, hi = np.asarray(m.get("low_bps", []), dtype=float), np.asarray(m.get("high_bps", []), dtype=float)
    bins = run.get("bins") or {}
    bt, btr = np.asarray(bins.get("time_s", []), dtype=float), np.asarray(bins.get("truth_bps", []), dtype=float)
    out = []
    bounds = [*steps, end_s]
    for i, s in enumerate(steps):
        nxt = bounds[i + 1]
        before = np.nonzero(t <= s)[0]
        level = btr[(bt > s + 1.0) & (bt <= nxt)]
        if not len(before) or not len(level):
            out.append({"step_s": s, "left_range": None, "count": None})
            continue
        j = before[-1]
        new = float(np.median(level))
        left = bool(new < lo[j] or new > hi[j])
        count = None
        after = np.nonzero((st >= s) & (st < nxt))[0]
        for n, k in enumerate(after, 1):
            if tr[k] > 0 and abs(est[k] - tr[k]) / tr[k] <= RECOVER_TOL:
                count = n
                break
        out.append({"step_s": s, "left_range": left, "range_bps": [float(lo[j]), float(hi[j])], "new_truth_bps": new,
                    "count": count, "results_in_level": int(len(after))})
    return out


def f7(runs: Sequence[Run], steps: Sequence[float], end_s: float, kind: str = "UDP", rule: str = "ties-split", *, judged: bool = True) -> Check:
    """F7: over the steps that leave the range (all seeds pooled), the median number of results
    to come within ±10 % of the new truth ≤ 5 (a step never recovered counts as infinite)."""
    ev = [e | {"seed": r.get("seed")} for r in runs for e in recoveries(r, steps, end_s)]
    left = [e for e in ev if e["left_range"]]
    unknown = sum(e["left_range"] is None for e in ev)
    if not left:
        return make("F7", "not exercised", f"after a step out of the range, the median results to find the new A (±{RECOVER_TOL:.0%}) ≤ {RECOVER_MEDIAN} (ours)",
                    f"{kind}, {rule}: no step left the search range ({unknown} of {len(ev)} steps had no result before them)",
                    {"kind": kind, "rule": rule, "events": ev}, figure=f"F7 (S3) {kind}, {rule}", paper=judged)
    counts = [e["count"] if e["count"] is not None else math.inf for e in left]
    med = float(np.median(counts))
    status = "pass" if med <= RECOVER_MEDIAN else "FAIL"
    never = sum(math.isinf(c) for c in counts)
    finite = [c for c in counts if not math.isinf(c)]
    measured = (f"{kind}, {rule}: {len(left)} steps left the range; results to recover median {med:g}, max {max(finite) if finite else 'n/a'},"
                f" never within the level {never}; distribution {sorted(counts)}; {unknown} steps had no result before them")
    return make("F7", status, f"after a step out of the range, the median results to find the new A (±{RECOVER_TOL:.0%}) ≤ {RECOVER_MEDIAN} (ours)",
                measured, {"kind": kind, "rule": rule, "events": ev, "median": med}, figure=f"F7 (S3) {kind}, {rule}", paper=judged)


def f20(runs: Sequence[Run]) -> Check:
    """F20: every result timed 4 × 10 = 40 stream packets (exact)."""
    pk = [p for r in runs for p in (r.get("meas") or {}).get("packets", [])]
    if not pk:
        return make("F20", "not exercised", f"every measurement uses 4 streams × 10 packets ({PACKETS})", "no result in any run", {"results": 0})
    bad = sum(p != PACKETS for p in pk)
    return make("F20", "pass" if bad == 0 else "FAIL", f"every measurement uses 4 streams × 10 packets ({PACKETS})",
                f"{len(pk)} results, {bad} with another packet count (values {sorted(set(pk))}); measurements voided by loss leave no row",
                {"results": len(pk), "other": bad})


def f14(by_hz: Mapping[int, Sequence[Run]]) -> Check:
    """F14: per seed the median |Â − A|/A at each HZ; each step up in HZ: the paired difference
    err(lower HZ) − err(higher HZ) must not be significantly negative (a significant increase
    of error with HZ is a FAIL; no increase anywhere and at least one significant decrease: pass)."""
    hz = sorted(by_hz)
    med = {h: [float(np.median(e)) if len(e := errors(r)) else math.nan for r in by_hz[h]] for h in hz}
    steps, statuses = [], []
    for a, b in zip(hz, hz[1:]):
        d = [x - y for x, y in zip(med[a], med[b])]
        s = order(d)
        statuses.append(s)
        steps.append(f"{a}→{b}: {s}")
    if any(all(math.isnan(x) for x in med[h]) for h in hz):
        status = "FAIL"
    elif "FAIL" in statuses:
        status = "FAIL"
    elif "pass" in statuses:
        status = "pass"
    else:
        status = "inconclusive"
    measured = "; ".join(f"HZ {h}: {_ci(med[h])}" for h in hz) + " — steps " + ", ".join(steps)
    return make("F14", status, "a coarse timer lowers accuracy: median error non-increasing with HZ (no significant increase; one significant decrease)",
                measured, {"median_error": {str(h): v for h, v in med.items()}, "steps": steps})


def f15(low: Sequence[Run], high: Sequence[Run], low_hz: int = 100, high_hz: int = 100_000) -> Check:
    """F15: at HZ 100 every estimate ≤ 1.2 Mb/s and flagged above the range; at HZ 100,000 no
    estimate clipped at 1.2 Gb/s (none at or above it, none flagged above with a range reaching it)."""
    rl, rh = PACKET_BITS * low_hz, PACKET_BITS * high_hz
    el = [x for r in low for x in (r.get("meas") or {}).get("estimate_bps", [])]
    fl = [x for r in low for x in (r.get("meas") or {}).get("flag", [])]
    eh = [x for r in high for x in (r.get("meas") or {}).get("estimate_bps", [])]
    hh = [(x, f) for r in high for x, f in zip((r.get("meas") or {}).get("high_bps", []), (r.get("meas") or {}).get("flag", []))]
    if not el or not eh:
        return make("F15", "FAIL", "HZ 100 measures up to 1.2 Mb/s, HZ 100,000 up to 1.2 Gb/s",
                    f"results: {len(el)} at HZ {low_hz}, {len(eh)} at HZ {high_hz}", {"low": len(el), "high": len(eh)})
    over = sum(x > rl * (1 + 1e-9) for x in el)
    not_above = sum(f != 1 for f in fl)
    clipped = sum(x >= rh * (1 - 1e-9) for x in eh) + sum(f == 1 and h >= rh * (1 - 1e-9) for h, f in hh)
    status = "pass" if over == 0 and not_above == 0 and clipped == 0 else "FAIL"
    measured = (f"HZ {low_hz}: {len(el)} results, largest {max(el) / 1e6:.3f} Mb/s (bound {rl / 1e6:g}), {over} above it, {not_above} not flagged above;"
                f" HZ {high_hz}: {len(eh)} results, largest {max(eh) / 1e6:.1f} Mb/s, {clipped} clipped at {rh / 1e9:g} Gb/s")
    return make("F15", status, "HZ 100 measures up to 1.2 Mb/s (every estimate ≤ 1.2 Mb/s, flagged above); HZ 100,000 up to 1.2 Gb/s (none clipped)",
                measured, {"largest_low_bps": max(el), "over": over, "not_above": not_above, "clipped": clipped})


# --- S10: background transfer ---------------------------------------------------------------

def _bg(runs: Sequence[Run]) -> list[float]:
    return [float(r["steady_bps"].get("bg", 0.0)) for r in runs]


def _cross(runs: Sequence[Run]) -> list[float]:
    return [float(sum(v for k, v in r["steady_bps"].items() if k != "bg")) for r in runs]


def free(alone: Sequence[Run]) -> list[float]:
    """C − the cross traffic's throughput alone, per seed."""
    return [float(r["capacity_bps"]) - c for r, c in zip(alone, _cross(alone))]


def _mbps(x: float) -> str:
    return f"{x / 1e6:.2f} Mb/s"


def f27(bg: Mapping[str, Sequence[Run]], kind: str) -> Check:
    """F27: Reno's throughput above TCP-LP's and ImTCP-bg's, paired across seeds."""
    reno = _bg(bg["reno"])
    s = [order([a - b for a, b in zip(reno, _bg(bg[c]))]) for c in ("tcp-lp", "imtcp-bg")]
    measured = f"{kind}: " + ", ".join(f"{c} {_ci(_bg(bg[c]), _mbps)}" for c in bg) + f"; Reno − TCP-LP: {s[0]}, Reno − ImTCP-bg: {s[1]}"
    return make("F27", combine(*s), "Reno's throughput is the highest (Reno > TCP-LP and Reno > ImTCP-bg, paired)", measured,
                {c: _bg(bg[c]) for c in bg}, figure=f"F27 (S10) {kind}")


def f28(bg: Mapping[str, Sequence[Run]], alone: Sequence[Run], kind: str) -> Check:
    """F28: Reno's throughput above the free bandwidth, and the cross traffic with Reno below
    its throughput alone, both paired."""
    reno, fr = _bg(bg["reno"]), free(alone)
    cw, ca = _cross(bg["reno"]), _cross(alone)
    s1 = order([a - b for a, b in zip(reno, fr)])
    s2 = order([a - b for a, b in zip(ca, cw)])
    ratio = [a / b if b > 0 else math.nan for a, b in zip(reno, fr)]
    measured = (f"{kind}: Reno {_ci(reno, _mbps)} against free {_ci(fr, _mbps)} ({s1}; ratio {_ci(ratio, lambda x: f'{x:.2f}')});"
                f" cross alone {_ci(ca, _mbps)}, with Reno {_ci(cw, _mbps)} ({s2})")
    return make("F28", combine(s1, s2), "Reno exceeds the free bandwidth and pushes the cross traffic down (both paired)", measured,
                {"reno": reno, "free": fr, "cross_with": cw, "cross_alone": ca}, figure=f"F28 (S10) {kind}")


def f29(c28: Check, kind: str) -> Check:
    """F29: holds iff F28 holds."""
    st = c28.status
    return make("F29", st, "so Reno is not a background transfer (iff F28)", f"{kind}: follows F28 ({st})", {}, figure=f"F29 (S10) {kind}")


def f30(bg: Mapping[str, Sequence[Run]], alone: Sequence[Run], kind: str) -> Check:
    """F30: the cross traffic's drop with ImTCP-bg and with TCP-LP ≤ 5 %, and each below Reno's (paired)."""
    ca = _cross(alone)
    drop = {c: [1 - w / a if a > 0 else math.nan for w, a in zip(_cross(bg[c]), ca)] for c in bg}
    parts, text = [], []
    for c in ("imtcp-bg", "tcp-lp"):
        a = threshold(drop[c], DROP_MAX)
        b = order([x - y for x, y in zip(drop["reno"], drop[c])])
        parts += [a, b]
        text.append(f"{c} drop {_ci(drop[c])} (≤ {DROP_MAX:.0%}: {a}; < Reno's: {b})")
    measured = f"{kind}: Reno drop {_ci(drop['reno'])}; " + "; ".join(text)
    return make("F30", combine(*parts), f"ImTCP-bg and TCP-LP barely lower the cross traffic (drop ≤ {DROP_MAX:.0%} (ours), each < Reno's, paired)",
                measured, {"drop": drop}, figure=f"F30 (S10) {kind}")


def f31(bg: Mapping[str, Sequence[Run]], alone: Sequence[Run], kind: str) -> Check:
    """F31: ImTCP-bg's throughput / free ≥ 0.8, and |1 − ratio| below TCP-LP's (paired)."""
    fr = free(alone)
    ratio = {c: [t / f if f > 0 else math.nan for t, f in zip(_bg(bg[c]), fr)] for c in bg}
    a = threshold(ratio["imtcp-bg"], RATIO_MIN, at_most=False)
    b = order([abs(1 - y) - abs(1 - x) for x, y in zip(ratio["imtcp-bg"], ratio["tcp-lp"])])
    f2 = lambda x: f"{x:.2f}"  # noqa: E731
    measured = f"{kind}: ratio to free — " + ", ".join(f"{c} {_ci(ratio[c], f2)}" for c in bg) + f"; ImTCP-bg ≥ {RATIO_MIN}: {a}; nearer 1 than TCP-LP: {b}"
    return make("F31", combine(a, b), f"ImTCP-bg's throughput is close to the free bandwidth (ratio ≥ {RATIO_MIN} (ours), nearer 1 than TCP-LP's, paired)",
                measured, {"ratio": ratio}, figure=f"F31 (S10) {kind}")


def f24(capped: Sequence[Run], uncapped: Sequence[Run], kind: str = "UDP") -> Check:
    """F24, its "binding" half only: the ImTCP-bg run with the cap against the same seed with
    `imtcp_bg.cap = false`. Identical cwnd traces in every seed: the cap never held the window
    down ("not exercised"). Otherwise the cap acted; whether cwnd ≤ ⌊Ā·RTT_min⌋ on every ACK
    (the exact rule) is not checked from these traces, so the verdict is "inconclusive"."""
    same = [a.get("cwnd_sha1") == b.get("cwnd_sha1") and a.get("cwnd_sha1") is not None for a, b in zip(capped, uncapped)]
    tp = [(a["steady_bps"].get("bg", 0.0), b["steady_bps"].get("bg", 0.0)) for a, b in zip(capped, uncapped)]
    measured = (f"{kind}: cwnd trace with the cap identical to the one without in {sum(same)} of {len(same)} seeds;"
                f" throughput with / without the cap {_ci([a for a, _ in tp], _mbps)} / {_ci([b for _, b in tp], _mbps)}")
    status = "not exercised" if all(same) else "inconclusive"
    return make("F24", status, "cwnd is held down by the cap Ā·RTT_min (binding half: the cap changes the window; the per-ACK rule is not checked)",
                measured, {"identical": same}, figure=f"F24 (S9) {kind}")


def _flow(run: Run, name: str) -> Mapping[str, Any]:
    return next(f for f in run["flows"] if f["name"] == name)


def f2(imtcp: Sequence[Run], plain: Sequence[Run], flow: str = "imtcp") -> Check:
    """F2: the ImTCP flow and the same seed without the stage (variant "none") move the same
    bytes with no loss; the ImTCP run must have measured, and must put exactly as many segments
    and IP bytes on the bottleneck as the plain run (any extra probe packet shows). A seed with a
    retransmission in either run has no common loss pattern: it is left out (none left: not
    exercised)."""
    rows = []
    for a, b in zip(imtcp, plain):
        fa, fb = _flow(a, flow), _flow(b, flow)
        rows.append({"seed": a.get("seed"), "results": len((a.get("meas") or {}).get("time_s", [])),
                     "segments": (fa["segments_sent"], fb["segments_sent"]), "wire_bytes": (a["link_bytes"].get(flow, 0), b["link_bytes"].get(flow, 0)),
                     "retransmits": (fa["retransmits"], fb["retransmits"])})
    used = [r for r in rows if r["retransmits"] == (0, 0)]
    if not used:
        return make("F2", "not exercised", "no extra packets: segments and bytes on the wire equal to the same transfer without the stage (exact)",
                    f"every seed lost a packet ({len(rows)} seeds)", {"rows": rows})
    bad = [r for r in used if r["segments"][0] != r["segments"][1] or r["wire_bytes"][0] != r["wire_bytes"][1] or r["results"] == 0]
    r0 = used[0]
    measured = (f"{len(used)} loss-free seeds: segments {r0['segments'][0]} / {r0['segments'][1]}, IP bytes on the bottleneck"
                f" {r0['wire_bytes'][0]} / {r0['wire_bytes'][1]} (ImTCP / without the stage, first seed), ImTCP results per seed"
                f" {[r['results'] for r in used]}; {len(bad)} seeds differ or measured nothing")
    return make("F2", "FAIL" if bad else "pass", "no extra packets: segments and bytes on the wire equal to the same transfer without the stage (exact)",
                measured, {"rows": rows})
