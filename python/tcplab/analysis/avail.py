"""The true available bandwidth of a link, from the `link_usage` trace.

The `link_usage` trace (`trace.link_usage = { links = [...], interval = "10ms" }`) holds, per
watched link direction (`pipe`, `pipe_name`) and flow, the IP bytes whose serialization on it
ended in each interval (t − Δ, t] (time_s = t, the interval's end; a row only where a flow
had bytes). The available bandwidth seen by a measured flow is what the other flows leave:

    A(t) = C − Σ_{f ≠ measured} bytes_f(t) · 8 / Δ        (bit/s, IP bytes)

with C the link's IP-byte rate for 1,500-byte packets: its line rate × 1500 / (the line
bytes of a 1,500-byte packet), its `framing` (or AAL5 cells) included, as the run summary's
`link_usage` table reports it (`link_capacity`). A is in IP bits per second, as a
measurement tool that counts its probes' IP bytes reports it. A packet is counted in the
interval its serialization ends in, so an interval may hold up to one packet more or less
than its share of a steady stream: A is exact to about one packet per interval, and can
fall a packet's worth below 0 or rise above C.

A path's available bandwidth is its tight link's: per interval the least A over the links it
crosses (`path_truth`), so the tight link may move during a run.

`rebin_truth` averages A over arbitrary spans [t0, t1) (each measurement's own), weighting
each interval by its overlap with the span; a span that cuts an interval takes that
interval's share in proportion, as if its bytes were spread evenly in it, so pick Δ well
below the spans.

Times in seconds, rates in bits per second.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from tcplab.analysis._frames import EPS, flow_id, require

if TYPE_CHECKING:
    from tcplab.result import Result

__all__ = ["available_bandwidth", "link_capacity", "path_truth", "rebin_truth", "truth"]

USAGE_COLUMNS = ("time_s", "pipe", "flow", "bytes")
"""Columns of the `link_usage` trace."""

TRUTH_COLUMNS = ["start_s", "end_s", "cross_bytes", "cross_bps", "measured_bps", "avail_bps"]
"""Columns `available_bandwidth` returns, one row per interval."""


def _summary(source: Result | Mapping[str, Any]) -> Mapping[str, Any]:
    """The run summary of a Result, or `source` itself when it is one."""
    return source if isinstance(source, Mapping) else source.summary


def _watched(summary: Mapping[str, Any], link: int | str) -> Mapping[str, Any]:
    """The summary's entry for watched link `link` (a name, or the trace's pipe id)."""
    usage = summary.get("link_usage")
    if not usage:
        raise ValueError(
            "the run did not record the link_usage trace: set "
            'trace.link_usage = { links = ["a->b"], interval = "10ms" } in the scenario'
        )
    links = usage["links"]
    key = "name" if isinstance(link, str) else "pipe"
    for entry in links:
        if entry[key] == link:
            return entry
    names = ", ".join(f"{e['pipe']}: {e['name']!r}" for e in links)
    raise ValueError(f"link {link!r} is not watched by trace.link_usage (watched: {names})")


def link_capacity(source: Result | Mapping[str, Any], link: int | str) -> float:
    """C of watched link `link` (a name such as "r1->dn", or its pipe id), bit/s: the IP-byte
    rate it carries when full of 1,500-byte packets, its framing included (the summary's
    `link_usage.links[].ip_rate_bps`). `source` is a Result or its summary dict.

    ValueError when the trace was not recorded, the link is not watched, or it has no rate
    (an emulator direction without a rate limit).
    """
    entry = _watched(_summary(source), link)
    if entry.get("ip_rate_bps") is None:
        raise ValueError(
            f"link {entry['name']!r} has no rate limit: its capacity is unbounded "
            "(pass capacity_bps)"
        )
    return float(entry["ip_rate_bps"])


def _pipe_id(usage: pl.DataFrame, link: int | str) -> int:
    """The pipe id of `link` in the trace (a name is looked up in `pipe_name`)."""
    if not isinstance(link, str):
        return int(link)
    if "pipe_name" not in usage.columns:
        raise ValueError(f"link {link!r} given by name but the frame has no pipe_name column")
    ids = usage.filter(pl.col("pipe_name") == link)["pipe"].unique().to_list()
    if not ids:
        names = sorted(usage["pipe_name"].unique().drop_nulls().to_list())
        raise ValueError(f"no link named {link!r} in the link_usage trace (have: {names})")
    return int(ids[0])


def _measured_ids(
    usage: pl.DataFrame, measured: int | str | Iterable[int | str] | None
) -> list[int]:
    """The flow ids of `measured` (None: no flow is measured)."""
    if measured is None:
        return []
    if isinstance(measured, (int, str)):
        measured = [measured]
    return [flow_id(usage, f) for f in measured]


def available_bandwidth(
    usage: pl.DataFrame,
    link: int | str,
    capacity_bps: float,
    *,
    interval_s: float,
    measured: int | str | Iterable[int | str] | None = None,
    end_s: float | None = None,
) -> pl.DataFrame:
    """The available bandwidth of one link per interval of the `link_usage` trace.

    `link`: the pipe id, or its name when the frame has `pipe_name`; `capacity_bps`: C (see
    `link_capacity`); `interval_s`: the trace's interval Δ; `measured`: the flow or flows
    (ids, or names when the frame has `flow_name`) whose bytes do not count against A (None:
    every flow counts). Every interval from 0 to `end_s` gets a row (none of a flow's bytes:
    A = C); `end_s` defaults to the end of the link's last row and must be a whole number of
    intervals.

    Returns one row per interval, in time order: start_s, end_s, cross_bytes (IP bytes of
    the other flows), cross_bps, measured_bps (the measured flows' own) and avail_bps
    (C − cross_bps).
    """
    require(usage, USAGE_COLUMNS, "link_usage trace")
    if not interval_s > 0:
        raise ValueError(f"interval_s must be positive, got {interval_s}")
    if not (capacity_bps > 0 and math.isfinite(capacity_bps)):
        raise ValueError(f"capacity_bps must be a positive finite rate, got {capacity_bps}")
    pipe = _pipe_id(usage, link)
    skip = _measured_ids(usage, measured)
    rows = usage.filter(pl.col("pipe") == pipe)
    index = np.rint(rows["time_s"].to_numpy() / interval_s).astype(np.int64)
    off_grid = np.abs(rows["time_s"].to_numpy() / interval_s - index) > 1e-6
    if off_grid.any() or (index < 1).any():
        at = rows["time_s"].to_numpy()[off_grid | (index < 1)][0]
        raise ValueError(f"row at {at} s is not at the end of an interval of {interval_s} s")
    if end_s is None:
        if rows.is_empty():
            raise ValueError(f"no rows for link {link!r}: pass end_s to cover the run")
        bins = int(index.max())
    else:
        bins = round(end_s / interval_s)
        if bins < 1 or abs(end_s / interval_s - bins) > 1e-6:
            raise ValueError(
                f"end_s = {end_s} is not a positive whole number of intervals of {interval_s} s"
            )
        if len(index) and index.max() > bins:
            raise ValueError(f"the trace has rows after end_s = {end_s}")
    is_measured = np.isin(rows["flow"].to_numpy(), skip)
    bytes_ = rows["bytes"].to_numpy().astype(np.float64)
    cross = np.bincount(index[~is_measured] - 1, weights=bytes_[~is_measured], minlength=bins)
    own = np.bincount(index[is_measured] - 1, weights=bytes_[is_measured], minlength=bins)
    ends = np.arange(1, bins + 1) * interval_s
    cross_bps = cross * 8.0 / interval_s
    return pl.DataFrame(
        {
            "start_s": ends - interval_s,
            "end_s": ends,
            "cross_bytes": cross.astype(np.uint64),
            "cross_bps": cross_bps,
            "measured_bps": own * 8.0 / interval_s,
            "avail_bps": capacity_bps - cross_bps,
        }
    )


def _spans(spans: pl.DataFrame | Sequence[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """(t0, t1) arrays of `spans`: a frame with t0_s and t1_s (or start_s and end_s) columns,
    or a sequence of pairs."""
    if isinstance(spans, pl.DataFrame):
        for a, b in (("t0_s", "t1_s"), ("start_s", "end_s")):
            if a in spans.columns and b in spans.columns:
                return spans[a].to_numpy().astype(float), spans[b].to_numpy().astype(float)
        raise ValueError(
            f"spans frame needs t0_s and t1_s columns (have: {', '.join(spans.columns)})"
        )
    pairs = np.asarray(list(spans), dtype=float)
    if pairs.size == 0:
        return np.empty(0), np.empty(0)
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise ValueError("spans must be (t0, t1) pairs")
    return pairs[:, 0], pairs[:, 1]


def rebin_truth(
    truth: pl.DataFrame, spans: pl.DataFrame | Sequence[tuple[float, float]]
) -> pl.DataFrame:
    """The truth averaged over each span [t0, t1) (`truth`: `available_bandwidth`'s frame).

    Each interval counts by its overlap with the span, so a span that cuts an interval takes
    its share in proportion. Returns one row per span, in the order given: t0_s, t1_s,
    cross_bps and avail_bps (time-weighted means over the span). ValueError for a span with
    t1 ≤ t0 or one outside the intervals the truth covers.
    """
    require(truth, ("start_s", "end_s", "cross_bps", "avail_bps"), "truth")
    t0, t1 = _spans(spans)
    truth = truth.sort("start_s")
    starts, ends = truth["start_s"].to_numpy(), truth["end_s"].to_numpy()
    if len(starts) == 0:
        raise ValueError("the truth is empty")
    if np.any(np.abs(starts[1:] - ends[:-1]) > EPS * np.maximum(1.0, ends[:-1])):
        raise ValueError("the truth's intervals are not contiguous")
    edges = np.concatenate(([starts[0]], ends))
    lo, hi = edges[0] - EPS * max(1.0, abs(edges[0])), edges[-1] + EPS * max(1.0, edges[-1])
    for a, b in zip(t0, t1, strict=True):
        if not b > a:
            raise ValueError(f"span [{a}, {b}) is empty: t1 must be after t0")
        if a < lo or b > hi:
            raise ValueError(f"span [{a}, {b}) is outside the truth's [{edges[0]}, {edges[-1]}] s")
    out = {"t0_s": t0, "t1_s": t1}
    for column in ("cross_bps", "avail_bps"):
        # The integral of a piecewise-constant rate is piecewise linear between the edges.
        integral = np.concatenate(([0.0], np.cumsum(truth[column].to_numpy() * (ends - starts))))
        out[column] = (np.interp(t1, edges, integral) - np.interp(t0, edges, integral)) / (t1 - t0)
    return pl.DataFrame(out)


def truth(
    result: Result,
    link: int | str,
    *,
    measured: int | str | Iterable[int | str] | None = None,
    spans: pl.DataFrame | Sequence[tuple[float, float]] | None = None,
    capacity_bps: float | None = None,
) -> pl.DataFrame:
    """The available bandwidth of watched link `link` in a run: `available_bandwidth` with C,
    Δ and the run's end (its whole intervals) from the result's summary, re-binned to `spans`
    when given (`rebin_truth`). `capacity_bps` overrides C (needed for a link without a rate).
    """
    summary = result.summary
    entry = _watched(summary, link)
    capacity = link_capacity(summary, entry["pipe"]) if capacity_bps is None else capacity_bps
    interval = float(summary["link_usage"]["interval_s"])
    bins = math.floor(float(summary["sim_time_s"]) / interval + 1e-9)
    if bins < 1:
        raise ValueError(
            f"the run ({summary['sim_time_s']} s) is shorter than one interval ({interval} s)"
        )
    usage = result.trace("link_usage")
    ids = {f["name"]: f["id"] for f in summary["flows"]}
    if isinstance(measured, (int, str)):
        measured = [measured]
    chosen = []
    for f in measured or []:
        if isinstance(f, str) and f not in ids:
            raise ValueError(f"no flow named {f!r} (flows: {', '.join(ids)})")
        chosen.append(ids[f] if isinstance(f, str) else int(f))
    table = available_bandwidth(
        usage, entry["pipe"], capacity, interval_s=interval, measured=chosen, end_s=bins * interval
    )
    return table if spans is None else rebin_truth(table, spans)


def path_truth(
    result: Result,
    links: Sequence[int | str],
    *,
    measured: int | str | Iterable[int | str] | None = None,
    spans: pl.DataFrame | Sequence[tuple[float, float]] | None = None,
) -> pl.DataFrame:
    """The available bandwidth of a path through the watched `links` (one or more): per
    interval the least of the links' `truth` (so the tight link may change from one interval to
    the next), re-binned to `spans` when given. Columns as `truth`'s, plus `tight` (the index
    in `links` of the link that set each interval's value; the first on a tie); cross_bps,
    cross_bytes and measured_bps are that link's. With spans: t0_s, t1_s, cross_bps,
    avail_bps (time-weighted over each span)."""
    if isinstance(links, (str, int)) or not len(links):
        raise ValueError("links must be a non-empty sequence of watched links")
    tables = [truth(result, link, measured=measured) for link in links]
    avail = np.vstack([t["avail_bps"].to_numpy() for t in tables])
    tight = np.argmin(avail, axis=0)
    pick = lambda c: np.choose(tight, [t[c].to_numpy() for t in tables])  # noqa: E731
    table = tables[0].with_columns(
        pl.Series("cross_bytes", pick("cross_bytes")),
        pl.Series("cross_bps", pick("cross_bps")),
        pl.Series("measured_bps", pick("measured_bps")),
        pl.Series("avail_bps", avail.min(axis=0)),
        pl.Series("tight", tight.astype(np.int64)),
    )
    return table if spans is None else rebin_truth(table, spans)
