"""Study 001's noise criterion: an order between two schemes judged by the paired difference
over the seeds, with its 95 % Student-t interval. Decided before the runs (README, "How the
checks judge noise"):

- "X above Y" holds when the interval of mean(X − Y) lies above 0; "X below Y" when it lies
  below 0. An interval that straddles 0 does not show the order (a tie inside the noise
  fails "above" and "below" alike).
- "slightly below but nearly equal" (§4.3 s5) holds when the interval lies below 0 and its
  lower end is at least −10 % of Y's mean (the ±10 % written for "ほぼ同様" / "同等" before the
  first full run).
- "equal" (同等, §4.3 s7) holds when the whole interval lies within ±10 % of Y's mean.

The runs of one seed are paired (the same seed draws the same servers' jitter in every
scheme, so the pairs share what the seed sets). With one pair there is no interval, and
no order is shown.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import polars as pl

from tcplab.analysis.stats import t_quantile

__all__ = ["CONFIDENCE", "NEAR", "Diff", "above", "below", "equal", "paired", "slightly_below"]

CONFIDENCE = 0.95
"""The two-sided confidence of the interval."""

NEAR = 0.10
"""The tolerance of "nearly equal" and "equal", as a fraction of the reference scheme's mean."""


@dataclasses.dataclass(frozen=True)
class Diff:
    """The paired difference a − b over the seeds: its mean, the 95 % t-interval (`low`,
    `high`; NaN with fewer than two pairs), the pairs, and b's mean (the scale of "near")."""

    mean: float
    low: float
    high: float
    pairs: int
    ref: float

    def text(self, fmt: str = ".3g") -> str:
        """"+12.3 [+4.5, +20.1]" (the mean and the interval)."""
        if math.isnan(self.low):
            return f"{self.mean:+{fmt}} [no interval, {self.pairs} pair]"
        return f"{self.mean:+{fmt}} [{self.low:+{fmt}}, {self.high:+{fmt}}]"


def paired(runs: pl.DataFrame, value: str, a: tuple[str, str, int], b: tuple[str, str, int], *,
           scale_b: float = 1.0) -> Diff:
    """a − scale_b·b of `value` per seed, over the seeds both (model, scheme, servers) points
    ran (runs with a null value — a NIR of reads that did not complete — are left out)."""

    def side(point: tuple[str, str, int]) -> pl.DataFrame:
        model, scheme, n = point
        return runs.filter((pl.col("model") == model) & (pl.col("scheme") == scheme) & (pl.col("servers") == n)
                           & pl.col(value).is_not_null()).select("seed", pl.col(value).cast(pl.Float64))

    both = side(a).join(side(b), on="seed", suffix="_b")
    if both.height == 0:
        raise KeyError(f"no seed in common between {a} and {b}")
    d = (both[value] - scale_b * both[f"{value}_b"]).to_list()
    ref = float(both[f"{value}_b"].mean())  # type: ignore[arg-type]
    n = len(d)
    mean = sum(d) / n
    if n < 2:
        return Diff(mean, float("nan"), float("nan"), n, ref)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    half = t_quantile((1 + CONFIDENCE) / 2, n - 1) * sd / math.sqrt(n)
    return Diff(mean, mean - half, mean + half, n, ref)


def above(d: Diff) -> bool:
    """a above b: the interval lies above 0."""
    return not math.isnan(d.low) and d.low > 0


def below(d: Diff) -> bool:
    """a below b: the interval lies below 0."""
    return not math.isnan(d.high) and d.high < 0


def slightly_below(d: Diff) -> bool:
    """a slightly below b but nearly equal: below 0, and not below −NEAR of b's mean."""
    return below(d) and d.low >= -NEAR * abs(d.ref)


def equal(d: Diff) -> bool:
    """a equal to b: the whole interval within ±NEAR of b's mean."""
    return not math.isnan(d.low) and -NEAR * abs(d.ref) <= d.low and d.high <= NEAR * abs(d.ref)


JUDGES: dict[str, Callable[[Diff], bool]] = {"above": above, "below": below, "slightly below": slightly_below, "equal": equal}
"""The judgements by name."""
