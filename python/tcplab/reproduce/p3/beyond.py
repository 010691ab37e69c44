"""Beyond the slides, F10: what ImTCP-bg's RTT rule buys when the estimate is wrong.

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

__all__ = ["RULE_OFF", "bias", "f10"]

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
