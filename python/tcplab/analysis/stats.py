"""Statistics across runs and orderings: confidence intervals over seeds, rank agreement,
and study 001's network-load ratio NIR."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import polars as pl

__all__ = ["mean_ci", "nir", "p_sru", "rank_agreement", "t_quantile"]


def nir(packets_sent: float, packets_needed: float) -> float:
    """NIR (study 001): packets sent by all servers / packets needed with no loss (≥ 1 when
    every needed packet was sent; larger means more retransmission load)."""
    if not packets_needed > 0:
        raise ValueError(f"packets_needed must be positive, got {packets_needed}")
    if packets_sent < 0:
        raise ValueError(f"packets_sent must be non-negative, got {packets_sent}")
    return packets_sent / packets_needed


def p_sru(n_servers: int, sru_bytes: int, mss: int) -> int:
    """Packets needed to move one SRU from each of `n_servers` servers with no loss (study
    001): P_SRU = N · ceil(SRU / MSS), with SRU and MSS in bytes (MSS = payload per segment)."""
    if n_servers < 0 or sru_bytes < 0 or mss <= 0:
        raise ValueError(f"bad arguments: n_servers={n_servers}, sru_bytes={sru_bytes}, mss={mss}")
    return n_servers * -(-sru_bytes // mss)


def rank_agreement(
    order_a: Sequence[Hashable], order_b: Sequence[Hashable], method: str = "kendall"
) -> float:
    """Agreement of two orderings of the same items (e.g. flows in first-RTT send order and
    in first-loss order), from −1 (reversed) through 0 to 1 (identical).

    Each argument lists distinct items, first to last; only items present in both are
    compared (at least 2). `method="kendall"`: Kendall's tau, (concordant − discordant pairs)
    / (n(n−1)/2). `method="spearman"`: Spearman's rho, 1 − 6·Σd² / (n(n²−1)) with d the
    difference in rank.
    """
    for name, order in (("order_a", order_a), ("order_b", order_b)):
        if len(set(order)) != len(order):
            raise ValueError(f"{name} repeats an item: {list(order)}")
    in_b = set(order_b)
    common = [x for x in order_a if x in in_b]
    n = len(common)
    if n < 2:
        raise ValueError(f"the orderings share {n} item(s); need at least 2")
    rank_a = {x: i for i, x in enumerate(common)}
    rank_b = {x: i for i, x in enumerate(x for x in order_b if x in rank_a)}
    if method == "kendall":
        score = 0
        for i in range(n):
            for j in range(i + 1, n):
                # common is in order_a's order, so the pair is concordant when b agrees.
                score += 1 if rank_b[common[i]] < rank_b[common[j]] else -1
        return score / (n * (n - 1) / 2)
    if method == "spearman":
        d2 = sum((rank_a[x] - rank_b[x]) ** 2 for x in common)
        return 1 - 6 * d2 / (n * (n * n - 1))
    raise ValueError(f"method must be 'kendall' or 'spearman', got {method!r}")


def mean_ci(
    df: pl.DataFrame, by: str | Sequence[str], value: str, level: float = 0.95
) -> pl.DataFrame:
    """Mean of `value` per group of `by` with a Student-t confidence interval (e.g. over seeds
    for each point of a sweep).

    Null and NaN values are ignored. Returns the `by` columns, n, mean, std (sample standard
    deviation, ddof 1), half_width (t_{(1+level)/2, n−1} · std / √n), ci_low and ci_high,
    sorted by `by`. std, half_width and the interval are null for a group with n = 1.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    keys = [by] if isinstance(by, str) else list(by)
    clash = set(keys) & set(MEAN_CI_COLUMNS)
    if clash:
        raise ValueError(f"group column(s) {sorted(clash)} clash with the output columns; rename")
    clean = df.filter(pl.col(value).is_not_null() & pl.col(value).cast(pl.Float64).is_not_nan())
    groups = (
        clean.group_by(keys)
        .agg(
            n=pl.len().cast(pl.Int64),
            mean=pl.col(value).cast(pl.Float64).mean(),
            std=pl.col(value).cast(pl.Float64).std(ddof=1),
        )
        .sort(keys)
    )
    q = (1 + level) / 2
    t = [t_quantile(q, n - 1) if n > 1 else None for n in groups["n"]]
    return (
        groups.with_columns(t=pl.Series(t, dtype=pl.Float64))
        .with_columns(
            std=pl.when(pl.col("n") > 1).then(pl.col("std")),
            half_width=pl.col("t") * pl.col("std") / pl.col("n").cast(pl.Float64).sqrt(),
        )
        .with_columns(
            ci_low=pl.col("mean") - pl.col("half_width"),
            ci_high=pl.col("mean") + pl.col("half_width"),
        )
        .drop("t")
    )


MEAN_CI_COLUMNS = ("n", "mean", "std", "half_width", "ci_low", "ci_high")
"""The statistics columns `mean_ci` adds after the group columns."""


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t distribution with `df` degrees of freedom (df > 0).

    Inverts the CDF, written with the regularized incomplete beta function, by bisection
    (accurate to about 1e-12 relative).
    """
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if not df > 0:
        raise ValueError(f"df must be positive, got {df}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1 - p, df)
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return (lo + hi) / 2


def _t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for t ≥ 0: 1 − I_{df/(df+t²)}(df/2, 1/2) / 2."""
    return 1 - 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1 - math.exp(log_front) * _betacf(b, a, 1 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h
