"""Study 002's noise rule, decided before the runs (FINDINGS.md, "How seed noise is judged"): an
order holds in ≥ 80 % of the seeds with the medians further apart than the larger IQR; a level
holds with the median in its band and the band wider than the IQR."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np

from tcplab.reproduce.p2.constants import ORDER_SHARE

__all__ = ["iqr", "level", "order"]


def iqr(v: Sequence[float]) -> float:
    q1, q3 = np.percentile(np.asarray(v, dtype=float), [25, 75])
    return float(q3 - q1)


def order(above: Sequence[float], below: Sequence[float]) -> tuple[bool, str]:
    """"`above` above `below`", paired by seed: holds in at least 80 % of the seeds and the
    medians differ by more than the larger inter-quartile range."""
    share = sum(a > b for a, b in zip(above, below, strict=True)) / len(above)
    ma, mb = statistics.median(above), statistics.median(below)
    gap, noise = ma - mb, max(iqr(above), iqr(below))
    ok = share >= ORDER_SHARE and gap > noise
    why = "" if ok else (" (not in enough seeds)" if share < ORDER_SHARE else " (not separated: gap within the IQR)")
    return ok, f"{ma:.3g} vs {mb:.3g} (median), above in {share:.0%} of seeds, gap {gap:.3g}, IQR {noise:.3g}{why}"


def level(values: Sequence[float], lo: float, hi: float) -> tuple[bool, str]:
    """A level in [lo, hi]: the median inside and the band wider than the seeds' IQR."""
    m, q = statistics.median(values), iqr(values)
    ok = lo <= m <= hi and (hi - lo) > q
    why = "" if ok else (" (outside the band)" if not lo <= m <= hi else " (too noisy to judge)")
    return ok, f"median {m:.3g} (IQR {q:.3g}) against [{lo:g}, {hi:g}]{why}"
