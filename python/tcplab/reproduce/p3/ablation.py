"""F5 and F6: the search range from the confidence interval against a fixed range (the ablation
FINDINGS names). S3 gives the design's reasons:
「不必要に高い転送レートでパケットを送出することを避けられる」 (S3 L40) and
「計測精度を保ちながら必要なパケット数を減少させることができる」 (S3 L41).

Both arms start from the path's rate, `initial = "link"` with C = 100 Mb/s ([C/10, C]), so they
differ only in `imtcp.range`: "adaptive" (the CI, moved out of range by its width) or "fixed"
([C/10, C] for the whole run). `accuracy_udp.toml` otherwise as shipped, the judged seeds.
The fixed range also runs with 20 and 40 packets per stream (80 and 160 per measurement), to find
the packets it needs to match the adaptive range's error at 10.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p3.checks import _ci, errors, make
from tcplab.reproduce.p3.constants import STEADY_S
from tcplab.reproduce.p3.stats import combine, interval, order

__all__ = ["ARMS", "f5", "f6", "points"]

LINK = {"flows.0.tcp.imtcp.initial": "link", "flows.0.tcp.imtcp.link_rate": "100Mbps"}
"""Both arms' first range: [C/10, C] with C the bottleneck's 100 Mb/s."""
ARMS = {"adaptive/10": ("adaptive", 10), "fixed/10": ("fixed", 10), "fixed/20": ("fixed", 20), "fixed/40": ("fixed", 40)}
"""Arm → (range, packets per stream)."""


def points() -> list[tuple[str, dict[str, Any]]]:
    """The arms as (scenario, overrides), in ARMS' order."""
    return [("accuracy_udp", {**LINK, "flows.0.tcp.imtcp.range": r, "flows.0.tcp.imtcp.packets": n}) for r, n in ARMS.values()]


def _peak(run: Any) -> float:
    """The mean top of the probed range (the fastest stream gap's rate) over the results after
    STEADY_S, bit/s (NaN without one)."""
    m = run.get("meas") or {}
    st, hi = np.asarray(m.get("start_s", []), dtype=float), np.asarray(m.get("high_bps", []), dtype=float)
    k = st >= STEADY_S
    return float(np.mean(hi[k])) if k.any() else math.nan


def _median_error(run: Any) -> float:
    e = errors(run)
    return float(np.median(e)) if len(e) else math.nan


def f5(arms: Mapping[str, Sequence[Any]]) -> Check:
    """F5: the fastest rate probed is lower with the adaptive range than with the fixed one
    (per seed the mean top of the range; paired order)."""
    a, f = [_peak(r) for r in arms["adaptive/10"]], [_peak(r) for r in arms["fixed/10"]]
    status = order([y - x for x, y in zip(a, f, strict=True)])
    mb = lambda x: f"{x / 1e6:.1f} Mb/s"  # noqa: E731
    measured = f"mean top of the probed range: adaptive {_ci(a, mb)}, fixed [C/10, C] {_ci(f, mb)}"
    return make("F5", status, "the CI range avoids needlessly high probe rates: the fastest rate probed is lower than with a fixed range "
                "[C/10, C] (paired)", measured, {"peak_adaptive": a, "peak_fixed": f}, figure="F5 (S3)")


def f6(arms: Mapping[str, Sequence[Any]]) -> Check:
    """F6: at 10 packets per stream the adaptive range's median error is at most the fixed
    range's (paired: fixed − adaptive not below 0), and the fixed range needs more packets per
    stream to match it (its mean error at 10 above the adaptive one's mean, the smallest N of
    10, 20, 40 that matches reported)."""
    ea = [_median_error(r) for r in arms["adaptive/10"]]
    by_n = {n: [_median_error(r) for r in arms[f"fixed/{n}"]] for n in (10, 20, 40) if f"fixed/{n}" in arms}
    first = order([y - x for x, y in zip(ea, by_n[10], strict=True)])
    no_worse = "FAIL" if first == "FAIL" else "pass"
    target = interval(ea)[0]
    match = next((n for n in sorted(by_n) if interval(by_n[n])[0] <= target), None)
    needs_more = "pass" if match is None or match > 10 else "FAIL"
    status = combine(no_worse, needs_more) if not math.isnan(target) else "FAIL"
    pct = lambda x: f"{100 * x:.1f} %"  # noqa: E731
    measured = (f"median error: adaptive at 10 packets {_ci(ea, pct)}; fixed at " + ", ".join(f"{n} packets {_ci(v, pct)}" for n, v in by_n.items())
                + f"; fixed − adaptive at 10: {first}; the fixed range matches the adaptive error at "
                + (f"{match} packets per stream" if match is not None else "none of 10, 20, 40 packets"))
    return make("F6", status, "the CI range keeps accuracy with fewer packets: its error at 40 packets per measurement is no worse than the "
                "fixed range's, which needs more packets to match it", measured,
                {"error_adaptive": ea, "error_fixed": {str(n): v for n, v in by_n.items()}, "match_packets": match}, figure="F6 (S3)")
