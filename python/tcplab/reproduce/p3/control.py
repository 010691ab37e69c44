"""Block C: ImTCP-bg's rules read on every ACK of block D's runs (S9's cwnd figure).

The `cc_state` trace (`trace.cc_state`) shows the controller's own state after each event of the
sender: Ā, RTT_min, the cap Ā·RTT_min as it applies it, the ACK's RTT sample, the ACK and cut
counts with their rounds, the window before the last cut and the results taken. The checks are
FINDINGS' F24 (rule and binding), F25 and F26 (with F8, the smoothing, as its first part),
judged on `background.toml` (UDP cross traffic) and printed beside on `background_tcp.toml`.
The rows read are those after the controller acted outside fast recovery (an ACK taken or a
result fed); in recovery the connection sets the window, not the controller.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p3.checks import _ci, make
from tcplab.reproduce.p3.constants import STEADY_S

__all__ = ["BINDING_SHARE", "DELTA", "GAMMA", "HOOK", "f24", "f25", "f26", "figure", "keep", "rules"]

HOOK = "tcplab.reproduce.p3.control:keep"
GAMMA, DELTA = 0.125, 1.4
"""The slides' γ and δ (S7 L124), as the scenarios set them."""
BINDING_SHARE = 0.10
"""F24's binding half: the cap is the active limit (cwnd at the cap) for at least this share of
the steady time in every seed (FINDINGS, ours)."""
MSS = 1448
"""The background flow's segment size (FreeBSD 4.10 with timestamps on a 1,500-byte MTU): the
RTT cut's floor is two of them."""


def rules(frame: Mapping[str, np.ndarray], estimates: Sequence[float], end_s: float, gamma: float = GAMMA,
          delta: float = DELTA, mss: int = MSS) -> dict[str, Any]:
    """ImTCP-bg's rules on one flow's `cc_state` rows (`Result.cc_state`'s columns as arrays) and
    its measurement results in order (`estimates`, bit/s): counts of the rows each rule was read
    on and of those that broke it, the share of the steady time (STEADY_S to `end_s`) cwnd sat
    at the cap, and the cuts."""
    t, cw = np.asarray(frame["time_s"], dtype=float), np.asarray(frame["cwnd_bytes"], dtype=float)
    rec = np.asarray(frame["recovery"]) != 0
    v = {k: np.asarray(frame[k], dtype=float) for k in ("avail_bps", "rtt_min_s", "cap_bytes", "rtt_cur_s", "acks", "round", "cuts",
                                                       "cut_round", "cut_from_bytes", "results")}
    prev = {k: np.concatenate(([0.0], x[:-1])) for k, x in v.items()}
    ack = (v["acks"] > prev["acks"]) & ~rec
    fed = (v["results"] > prev["results"]) & ~rec
    acted = ack | fed
    capped = acted & np.isfinite(v["cap_bytes"])
    above_cap = int(np.sum(cw[capped] > v["cap_bytes"][capped]))
    # B1 (F8): Ā after the k-th result is the γ-smoothing of the first k results.
    smooth, a = [], None
    for e in estimates:
        a = e if a is None else (1 - gamma) * a + gamma * e
        smooth.append(a)
    k = np.flatnonzero(v["results"] > prev["results"])
    idx = v["results"][k].astype(int) - 1
    ok_k = idx < len(smooth)
    want = np.asarray(smooth, dtype=float)[idx[ok_k]] if len(smooth) else np.empty(0)
    b1_bad = int(np.sum(np.abs(v["avail_bps"][k[ok_k]] - want) > 1e-6 * np.maximum(1.0, want))) + int(np.sum(~ok_k))
    # B3 (F25): an ACK whose sample is above δ·RTT_min cuts, unless this round is cut already;
    # each cut leaves max(⌊cwnd·RTT_min/RTT_cur⌋, min(2 segments, cwnd)).
    sampled = ack & np.isfinite(v["rtt_cur_s"]) & np.isfinite(v["rtt_min_s"])
    trig = sampled & (v["rtt_cur_s"] > delta * v["rtt_min_s"])
    cut = v["cuts"] > prev["cuts"]
    missed = int(np.sum(trig & ~cut & (v["cut_round"] != v["round"])))
    ci = np.flatnonzero(cut)
    exact_cut = np.floor(v["cut_from_bytes"][ci] * v["rtt_min_s"][ci] / v["rtt_cur_s"][ci])
    floor = np.minimum(2 * mss, v["cut_from_bytes"][ci])
    inexact = int(np.sum(np.abs(cw[ci] - np.maximum(exact_cut, floor)) > mss)) + int(np.sum(~trig[ci]))
    # Binding (F24): time-weighted share of the steady time with cwnd at the cap.
    dt = np.diff(np.concatenate((t, [end_s])))
    steady = t >= STEADY_S
    at_cap = np.isfinite(v["cap_bytes"]) & (cw >= v["cap_bytes"]) & ~rec
    span = float(np.sum(dt[steady]))
    return {"acted": int(np.sum(capped)), "above_cap": above_cap, "at_cap_share": float(np.sum(dt[steady & at_cap]) / span) if span > 0 else math.nan,
            "results": int(len(k)), "b1_bad": b1_bad, "samples": int(np.sum(sampled)), "triggers": int(np.sum(trig)), "cuts": int(len(ci)),
            "missed": missed, "inexact": inexact}


def keep(result: Any, measured: str = "bg") -> dict[str, Any]:
    """The hook: `rules` on the measured flow, and its series thinned to one row per 10 ms
    (time, cwnd, cap, RTT sample, RTT_min) with every cut's time, for the figure; JSON text in
    the column `data`."""
    frame = result.cc_state(measured)
    cols = {c: frame[c].to_numpy() for c in frame.columns if c not in ("flow_name",)}
    m = result.trace("measurements")
    fid = next(f["id"] for f in result.summary["flows"] if f["name"] == measured)
    est = m.filter(m["flow"] == fid)["estimate_bps"].to_list() if m.height else []
    end = float(result.summary["sim_time_s"])
    out: dict[str, Any] = rules(cols, est, end)
    t = cols["time_s"]
    keepi = np.unique(np.floor(t / 0.01).astype(int), return_index=True)[1] if len(t) else []
    prev_cuts = np.concatenate(([0.0], cols["cuts"][:-1]))
    nan = lambda x: [None if not math.isfinite(y) else float(y) for y in x]  # noqa: E731
    out["series"] = {"time_s": t[keepi].tolist(), "cwnd_bytes": cols["cwnd_bytes"][keepi].tolist(), "cap_bytes": nan(cols["cap_bytes"][keepi]),
                     "rtt_cur_s": nan(cols["rtt_cur_s"][keepi]), "rtt_min_s": nan(cols["rtt_min_s"][keepi]),
                     "cut_s": t[cols["cuts"] > prev_cuts].tolist()}
    out["steady_bps"] = {f["name"]: f["goodput_bps"] for f in result.summary["flows"]}
    return {"data": json.dumps(out)}


def _sum(runs: Sequence[Any], key: str) -> int:
    return int(sum(r[key] for r in runs))


def f24(runs: Sequence[Any], kind: str, ablation: str = "", *, judged: bool = True) -> Check:
    """F24: rule (no row after the controller acted with cwnd above the cap) and binding (cwnd
    at the cap ≥ BINDING_SHARE of the steady time in every seed). A broken rule: FAIL; the rule
    held but the cap never binding that much: not exercised; both: pass."""
    shares = [r["at_cap_share"] for r in runs]
    acted, above = _sum(runs, "acted"), _sum(runs, "above_cap")
    binding = bool(runs) and all(s >= BINDING_SHARE for s in shares)
    status = "FAIL" if above or not acted else ("pass" if binding else "not exercised")
    pct = lambda x: f"{100 * x:.1f} %"  # noqa: E731
    measured = (f"{kind}: {acted} rows after an ACK or a result with the cap defined, {above} with cwnd above it; cwnd at the cap "
                f"{_ci(shares, pct)} of the steady time (per seed {[round(100 * s, 1) for s in shares]} %; need ≥ {BINDING_SHARE:.0%} "
                f"in every seed)" + (f"; {ablation}" if ablation else ""))
    return make("F24", status, f"cwnd is held down by the cap Ā·RTT_min: never above it after an ACK or a result (exact), and at "
                f"it ≥ {BINDING_SHARE:.0%} of the steady time in every seed (ours)", measured,
                {"kind": kind, "acted": acted, "above_cap": above, "at_cap_share": shares}, figure=f"F24 (S9) {kind}", paper=judged)


def f25(runs: Sequence[Any], kind: str, *, judged: bool = True) -> Check:
    """F25: every ACK whose sample is above δ·RTT_min cuts cwnd by RTT_min/RTT_cur (at most
    once per round; exact within one segment); at least one trigger in every run, else not
    exercised."""
    trig, cuts, missed, inexact = (_sum(runs, k) for k in ("triggers", "cuts", "missed", "inexact"))
    every = bool(runs) and all(r["triggers"] > 0 for r in runs)
    status = "FAIL" if missed or inexact else ("pass" if every else "not exercised")
    measured = (f"{kind}: {_sum(runs, 'samples')} ACKs with an RTT sample, {trig} above δ·RTT_min (δ = {DELTA}), per seed "
                f"{[r['triggers'] for r in runs]}; {cuts} cuts, {missed} triggers not cut in a round not yet cut, {inexact} cuts off "
                f"max(⌊cwnd·RTT_min/RTT_cur⌋, 2 segments) by more than a segment")
    return make("F25", status, "when an ACK's RTT exceeds δ·RTT_min, cwnd is cut to cwnd·RTT_min/RTT_cur (at most once per round, "
                "exact within a segment; a trigger in every run)", measured,
                {"kind": kind, "triggers": trig, "cuts": cuts, "missed": missed, "inexact": inexact}, figure=f"F25 (S9) {kind}", paper=judged)


def f26(runs: Sequence[Any], c24: Check, c25: Check, kind: str, *, judged: bool = True) -> Check:
    """F26: F8 (Ā exact to the γ-smoothing of the results, after every result), F24 and F25 all
    pass; a part not exercised is named and the conjunction is not exercised."""
    results, bad = _sum(runs, "results"), _sum(runs, "b1_bad")
    f8 = "FAIL" if bad or not results else "pass"
    parts = {"F8": f8, "F24": c24.status, "F25": c25.status}
    if "FAIL" in parts.values():
        status = "FAIL"
    elif all(p == "pass" for p in parts.values()):
        status = "pass"
    else:
        status = "not exercised"
    measured = (f"{kind}: F8 {f8} ({results} results, {bad} with Ā off the γ = {GAMMA} smoothing of the results by more than 10⁻⁶), "
                f"F24 {c24.status}, F25 {c25.status}")
    return make("F26", status, "ImTCP-bg behaves as its algorithm says: F8 (the smoothing), F24 and F25 all pass", measured,
                {"kind": kind, "parts": parts}, figure=f"F26 (S9) {kind}", paper=judged)


def figure(runs: Sequence[Any], kind: str) -> Any:
    """The first run's cwnd against the cap, and its RTT samples against δ·RTT_min, with the
    RTT cuts marked (S9's figure)."""
    from tcplab.reproduce.figures import new_figure

    if not runs:
        return None
    r = runs[0]
    s = r["series"]
    t = np.asarray(s["time_s"])
    f = lambda key, scale: np.asarray([np.nan if x is None else x * scale for x in s[key]])  # noqa: E731
    fig, (top, bottom) = new_figure(2)
    top.plot(t, np.asarray(s["cwnd_bytes"]) / MSS, lw=0.7, label="cwnd")
    top.plot(t, f("cap_bytes", 1 / MSS), lw=0.7, label="cap Ā·RTT_min")
    for x in s["cut_s"]:
        top.axvline(x, color="r", lw=0.3, alpha=0.4)
    top.set_ylabel("segments")
    top.set_title(f"ImTCP-bg beside {kind} cross traffic (seed {r['seed']}): cwnd, the cap, and the RTT cuts (red)")
    top.legend(fontsize=7)
    bottom.plot(t, f("rtt_cur_s", 1e3), lw=0.5, label="RTT sample")
    bottom.plot(t, f("rtt_min_s", 1e3 * DELTA), lw=0.7, label="δ·RTT_min")
    bottom.set_xlabel("time (s)")
    bottom.set_ylabel("ms")
    bottom.legend(fontsize=7)
    return fig
