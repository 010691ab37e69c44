"""Beyond the slides. F10: what ImTCP-bg's RTT rule buys when the estimate is wrong; and LEDBAT's
latecomer advantage beside the slides' controllers.

The slides add the RTT rule because 「ImTCP の計測結果が信頼できない場合がある」 and answer
「RTT を用いた輻輳ウィンドウサイズの制御を併用する」 (S4 L60, L62). FINDINGS F10 fixed the test
before the runs: where the estimate is biased high, the cross traffic should carry more with the
rule on than with it off (paired by seed). Block D's ImTCP-bg runs are the rule-on side; the same
scenarios and seeds with `imtcp_bg.rtt_rule = false` the other. The estimate's bias is read from
the same runs (each result against the truth over its span), per cross-traffic kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p3.checks import _ci, _cross, _mbps, make
from tcplab.reproduce.p3.constants import STEADY_S
from tcplab.reproduce.p3.stats import interval, order

__all__ = ["DELAYED_ACKS", "bg_delayed_acks", "delayed_acks", "LATE_BUFFERS", "LATE_CCS", "RULE_OFF", "bias", "f10", "late_share", "latecomer", "latecomer_points"]

RULE_OFF = {"flows.0.tcp.imtcp_bg.rtt_rule": False}
"""ImTCP-bg with its RTT rule off (the cap alone, Reno below it)."""


def bias(run: Any) -> float:
    """The mean signed error (Â − A)/A of a run's results after STEADY_S (NaN without one)."""
    m = run.get("meas") or {}
    st = np.asarray(m.get("start_s", []), dtype=float)
    est = np.asarray(m.get("estimate_bps", []), dtype=float)
    tr = np.asarray(m.get("truth_bps", []), dtype=float)
    k = (st >= STEADY_S) & (tr > 0)
    return float(np.mean((est[k] - tr[k]) / tr[k])) if k.any() else float("nan")


def f10(rule_on: Sequence[Any], rule_off: Sequence[Any], kind: str) -> Check:
    """F10 beside `kind` cross traffic: the estimate's bias in the rule-on runs, and the cross
    traffic's throughput with the rule on minus off, paired by seed. Not exercised unless the
    bias's 95 % interval lies above 0 (the claim speaks of a wrong estimate); then the order
    claim on the paired differences decides (pass, FAIL, inconclusive)."""
    b = [bias(r) for r in rule_on]
    _, lo, _ = interval(b)
    on, off = _cross(rule_on), _cross(rule_off)
    diff = [x - y for x, y in zip(on, off, strict=True)]
    bg_on = [float(r["steady_bps"].get("bg", 0.0)) for r in rule_on]
    bg_off = [float(r["steady_bps"].get("bg", 0.0)) for r in rule_off]
    biased = not np.isnan(lo) and lo > 0
    status = order(diff) if biased else "not exercised"
    pct = lambda x: f"{100 * x:+.1f} %"  # noqa: E731
    measured = (f"{kind}: estimate bias {_ci(b, pct)} ({'high' if biased else 'not shown high'}); cross traffic with the rule on "
                f"{_ci(on, _mbps)}, off {_ci(off, _mbps)}, on − off {_ci(diff, _mbps)}; ImTCP-bg itself on {_ci(bg_on, _mbps)}, "
                f"off {_ci(bg_off, _mbps)}")
    return make("F10", status, "where the estimate reads high, the RTT rule protects the cross traffic: its throughput with the rule on > off "
                "(paired; ours)", measured, {"kind": kind, "bias": b, "cross_on": on, "cross_off": off, "bg_on": bg_on, "bg_off": bg_off},
                figure=f"F10 (S4, beyond) {kind}", paper=False)


# --- LEDBAT's latecomer ---------------------------------------------------------------------

LATE_START_S = 90.0
"""When the latecomer starts: after the first flow has built its queue to LEDBAT's TARGET
(100 ms). LEDBAT has no slow start (RFC 6817's pseudo-code; `tcp/cc/ledbat.rs`), so alone on the
100 Mb/s path the first flow's window grows about one segment per RTT: 844 segments and an RTT of
104 ms at 89 s (seed 1, measured)."""
LATE_END_S = 600.0
"""The runs' length; the shares are read over the last LATE_WINDOW_S."""
LATE_WINDOW_S = 100.0
LATE_BUFFERS = (1_000, 3_000)
"""The bottleneck buffer (packets): 120 ms at 100 Mb/s, just above TARGET, and 360 ms, deep enough
for the latecomer's target to sit on top of the first flow's queue without a loss."""
LATE_CCS = ("ledbat", "reno", "tcp-lp", "imtcp-bg")


def _tcp(cc: str) -> dict[str, Any]:
    """A flow's tcp table for `cc` as block D sets it (ImTCP-bg on ImTCP's stage)."""
    t: dict[str, Any] = {"cc": cc, "variant": "imtcp" if cc == "imtcp-bg" else "none", "delack_segments": 1}
    if cc == "imtcp-bg":
        t["imtcp"] = {"streams": 4, "packets": 10}
    return t


def latecomer_points(ccs: Sequence[str] = LATE_CCS, buffers: Sequence[int] = LATE_BUFFERS) -> list[tuple[str, dict[str, Any], str, int]]:
    """(scenario, overrides, controller, buffer): `background.toml` with its UDP CBR replaced by a
    second flow of the same controller from `xs` starting at LATE_START_S, 8 MB socket buffers
    (no window binds), LATE_END_S long."""
    return [("background", {"flows.0.tcp": _tcp(cc), "flows.1": {"name": "late", "src": "xs", "dst": "xr", "start": f"{LATE_START_S:g}s", "tcp": _tcp(cc)},
                            "defaults.tcp.sndbuf": "8MB", "defaults.tcp.rcvbuf": "8MB", "queue(r1->dn)": f"{q}pkts",
                            "run.duration": f"{LATE_END_S:g}s"}, cc, q) for cc in ccs for q in buffers]


def late_share(run: Any, window_s: float = LATE_WINDOW_S) -> float:
    """The latecomer's share of the two flows' bits over the run's last `window_s` (NaN when
    neither sent)."""
    b = run.get("bins") or {}
    t = np.asarray(b.get("time_s", []), dtype=float)
    if not len(t) or "late" not in b or "bg" not in b:
        return float("nan")
    k = t > t[-1] - window_s
    late, first = float(np.sum(np.asarray(b["late"])[k])), float(np.sum(np.asarray(b["bg"])[k]))
    return late / (late + first) if late + first > 0 else float("nan")


def latecomer(by_cc: dict[str, dict[int, Sequence[Any]]]) -> list[Check]:
    """LEDBAT's latecomer advantage at each buffer: the latecomer's share over the last window
    above one half (paired over seeds: share − ½ > 0), the other controllers' shares beside."""
    out = []
    for q, runs in sorted(by_cc.get("ledbat", {}).items()):
        share = [late_share(r) for r in runs]
        status = order([s - 0.5 for s in share])
        others = "; ".join(f"{cc} {_ci([late_share(r) for r in by_cc[cc][q]], lambda x: f'{x:.2f}')}" for cc in by_cc if cc != "ledbat")
        measured = (f"buffer {q} pkts: the LEDBAT latecomer's share over {LATE_END_S - LATE_WINDOW_S:g}–{LATE_END_S:g} s "
                    f"{_ci(share, lambda x: f'{x:.2f}')}; the same pair with {others}")
        out.append(Check(figure=f"LEDBAT latecomer (beyond), buffer {q} pkts",
                         claim="a LEDBAT flow that starts while another holds the queue at TARGET takes more than half (the latecomer "
                               "advantage: its base delay includes the first flow's queue)",
                         measured=measured, passed=status == "pass", paper=False,
                         values={"id": "latecomer", "status": status, "buffer": q, "share": share,
                                 "others": {cc: [late_share(r) for r in by_cc[cc][q]] for cc in by_cc if cc != "ledbat"}},
                         quote="", location="Rossi et al., ICCCN 2010; draft-irtf-iccrg-ledbat-plus-plus (periodic slowdowns against it)",
                         exercised=True, inconclusive=status == "inconclusive"))
    return out


# --- Block E: delayed ACKs -------------------------------------------------------------------

DELAYED_ACKS = {"flows.0.tcp.delack_segments": 2, "flows.0.tcp.imtcp.delayed_ack": "warn"}
"""The ImTCP flow's receiver ACKing every second segment (FreeBSD 4.10's delayed ACK, as the
profile sets it), which the stage refuses unless told to run anyway (`imtcp.delayed_ack`)."""


def delayed_acks(with_delack: Sequence[Any], every: Sequence[Any], kind: str) -> Check:
    """Block E: the median |Â − A|/A per seed with delayed ACKs against the same seeds with an
    ACK per segment (block A's runs, default trend rule); the claim (ours, from the stage's
    design: it times each stream packet by its own ACK) is that delayed ACKs raise the error,
    judged as an order on the paired differences."""
    from tcplab.reproduce.p3.checks import errors

    def med(r: Any) -> float:
        e = errors(r)
        return float(np.median(e)) if len(e) else float("nan")

    def signed(r: Any) -> float:
        return bias(r)

    d, e = [med(r) for r in with_delack], [med(r) for r in every]
    status = order([x - y for x, y in zip(d, e, strict=True)])
    counts = [len((r.get("meas") or {}).get("time_s", [])) for r in with_delack]
    pct = lambda x: f"{100 * x:.1f} %"  # noqa: E731
    spct = lambda x: f"{100 * x:+.1f} %"  # noqa: E731
    measured = (f"{kind}: median error with delayed ACKs {_ci(d, pct)} (signed mean {_ci([signed(r) for r in with_delack], spct)}, "
                f"{min(counts, default=0)}–{max(counts, default=0)} results per seed), with an ACK per segment {_ci(e, pct)} "
                f"(signed {_ci([signed(r) for r in every], spct)})")
    return Check(figure=f"block E (beyond): delayed ACKs, {kind}", claim="ACKing every second segment raises ImTCP's error (paired; ours)",
                 measured=measured, passed=status == "pass", paper=False,
                 values={"id": "delayed-acks", "status": status, "kind": kind, "median_delayed": d, "median_every": e},
                 quote="", location="issue 35: ImTCP needs one ACK per segment; show what delayed ACKs do to the estimate",
                 exercised=True, inconclusive=status == "inconclusive")


def bg_delayed_acks(with_delack: Sequence[Any], every: Sequence[Any], alone: Sequence[Any], kind: str,
                    rule_off: Sequence[Any] = ()) -> Check:
    """Block E for ImTCP-bg: block D's ImTCP-bg runs with the receiver ACKing every second
    segment against the same seeds with an ACK per segment. The claim (ours, from block E: the
    estimate then reads high, so the cap Ā·RTT_min is too high to hold the window) is that the
    cross traffic loses more with delayed ACKs, judged as an order on the paired drops; the
    estimate's bias, the number of results and ImTCP-bg's throughput are printed beside, and
    with `rule_off` (the same runs with the RTT rule off) its throughput and results then."""
    from tcplab.reproduce.p3.checks import _bg

    ca = _cross(alone)
    drop = lambda runs: [1 - w / a if a > 0 else float("nan") for w, a in zip(_cross(runs), ca, strict=True)]  # noqa: E731
    d, e = drop(with_delack), drop(every)
    status = order([x - y for x, y in zip(d, e, strict=True)])
    pct = lambda x: f"{100 * x:.1f} %"  # noqa: E731
    spct = lambda x: f"{100 * x:+.1f} %"  # noqa: E731
    measured = (f"{kind}: the cross traffic's drop with delayed ACKs {_ci(d, pct)}, with an ACK per segment {_ci(e, pct)}; "
                f"ImTCP-bg {_ci(_bg(with_delack), _mbps)} against {_ci(_bg(every), _mbps)}; its estimate's bias "
                f"{_ci([bias(r) for r in with_delack], spct)} against {_ci([bias(r) for r in every], spct)}, from "
                f"{[len((r.get('meas') or {}).get('time_s', [])) for r in with_delack]} results per seed")
    if rule_off:
        measured += (f"; with delayed ACKs and the RTT rule off ImTCP-bg {_ci(_bg(rule_off), _mbps)}, its estimate's bias "
                     f"{_ci([bias(r) for r in rule_off], spct)} from {[len((r.get('meas') or {}).get('time_s', [])) for r in rule_off]} results per seed")
    return Check(figure=f"block E (beyond): ImTCP-bg with delayed ACKs, {kind}",
                 claim="with delayed ACKs ImTCP-bg lowers the cross traffic more than with an ACK per segment (paired; ours)",
                 measured=measured, passed=status == "pass", paper=False,
                 values={"id": "bg-delayed-acks", "status": status, "kind": kind, "drop_delayed": d, "drop_every": e},
                 quote="", location="issue 35: ImTCP needs one ACK per segment; what delayed ACKs do to ImTCP-bg",
                 exercised=True, inconclusive=status == "inconclusive")
