"""The verdict rules of dev/p3/FINDINGS.md "How a criterion meets seed noise": one number per
seed, then the mean and its 95 % t-interval across seeds."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["combine", "interval", "order", "threshold"]

_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
"""Student's t, 97.5th percentile, for 1..30 degrees of freedom (1.96 beyond)."""


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high) of the 95 % t-interval of `values` (NaNs dropped); one value: the
    interval is unbounded (−inf, inf); none: all NaN."""
    v = [x for x in values if not math.isnan(x)]
    if not v:
        return (math.nan, math.nan, math.nan)
    m = sum(v) / len(v)
    if len(v) < 2:
        return (m, -math.inf, math.inf)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
    t = _T975[len(v) - 2] if len(v) - 1 <= len(_T975) else 1.96
    h = t * sd / math.sqrt(len(v))
    return (m, m - h, m + h)


def order(diffs: Sequence[float]) -> str:
    """An order claim on paired per-seed differences (claimed side: > 0): "pass" if the
    interval lies above 0, "FAIL" if below, else "inconclusive" (also with no values)."""
    _, lo, hi = interval(diffs)
    if math.isnan(lo):
        return "inconclusive"
    if lo > 0:
        return "pass"
    if hi < 0:
        return "FAIL"
    return "inconclusive"


def threshold(values: Sequence[float], bound: float, *, at_most: bool = True) -> str:
    """A threshold claim (value ≤ bound, or ≥ with `at_most` False): "pass" if the interval lies
    within the bound, "FAIL" if beyond it, else "inconclusive"."""
    _, lo, hi = interval(values)
    if math.isnan(lo):
        return "inconclusive"
    if not at_most:
        lo, hi, bound = -hi, -lo, -bound
    if hi <= bound:
        return "pass"
    if lo > bound:
        return "FAIL"
    return "inconclusive"


def combine(*statuses: str) -> str:
    """The conjunction of verdicts: FAIL if any fails, pass if all pass, else inconclusive."""
    if "FAIL" in statuses:
        return "FAIL"
    if all(s == "pass" for s in statuses):
        return "pass"
    return "inconclusive"
