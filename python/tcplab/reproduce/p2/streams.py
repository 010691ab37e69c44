"""Per-stream readings of study 002's traces, computed in the sweep worker beside `measures`:
what the paper read off its tcpdump figures (Figs. 9–10) and argued in §5 — the window at each
stream's first loss, how long a window takes to regrow after a loss, slow-start growth per RTT,
whether an RTO follows a failed fast recovery, how long an imbalance between two streams lasts,
and (from a capture) the peaks of outstanding data against the sender's cwnd.

Inputs are a run's polars traces: `cwnd` (time_s, flow, cwnd_bytes, inflight_bytes), `events`
(time_s, flow, kind_name), `throughput` (time_s, flow, bytes) and `capture` (tap rows: time_s,
flow, dir, seq, ack, len, window). Times in seconds, windows in bytes.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

__all__ = ["imbalance_episodes", "outstanding_vs_cwnd", "stream_dynamics"]

LOSS_KINDS = ("fast_retransmit", "timeout")
"""The events that mark a loss detected by the sender (a recovery entered, or the RTO fired)."""

IMBALANCE = 2.0
"""Two streams are imbalanced in a throughput bin when one moved at least this many times the
other's bytes (F31, FINDINGS.md)."""


def _per_flow(t: pl.DataFrame, flow: int) -> pl.DataFrame:
    """`flow`'s rows in time order; of an events trace, only its data sender's (`end` 0)."""
    if "end" in t.columns:
        t = t.filter(pl.col("end") == 0)
    return t.filter(pl.col("flow") == flow).sort("time_s", maintain_order=True)


def stream_dynamics(cwnd: pl.DataFrame, events: pl.DataFrame, flows: Sequence[int], finish_s: Sequence[float],
                    rtt_s: float) -> dict[str, list[Any]]:
    """Per stream (in `flows` order, `finish_s` its end or the run's end): `first_loss_s` and
    `cwnd_first_loss` (the last cwnd before the first loss event; None without a loss),
    `loss_events` (fast retransmits + RTOs), `ss_growth` (slow-start growth factor per `rtt_s`:
    the window's geometric growth from its first value to its last before the first loss, None
    when it grew less than 4×), `regrow_s` (for each loss, the time until cwnd is back at its
    value before the loss, when that happens before the next loss and the stream's end) with
    `regrow_censored` (losses whose regrowth did not complete), and `rto_after_fr` (RTOs that
    fired while a fast recovery was still open: fast retransmit failed to repair) against
    `rtos`."""
    out: dict[str, list[Any]] = {k: [] for k in ("first_loss_s", "cwnd_first_loss", "loss_events", "ss_growth", "regrow_s",
                                               "regrow_censored", "rto_after_fr", "rtos")}
    for f, end in zip(flows, finish_s, strict=True):
        c = _per_flow(cwnd, f)
        ct, cw = c["time_s"].to_numpy(), c["cwnd_bytes"].to_numpy().astype(float)
        ev = _per_flow(events, f).filter(pl.col("kind_name").is_in([*LOSS_KINDS, "recovery_exit"]))
        et, ek = ev["time_s"].to_list(), ev["kind_name"].to_list()
        losses = [t for t, k in zip(et, ek, strict=True) if k in LOSS_KINDS]
        out["loss_events"].append(len(losses))
        # RTOs during an open fast recovery (fast retransmit entered, no recovery exit yet).
        open_fr, rtos, failed = False, 0, 0
        for k in ek:
            if k == "fast_retransmit":
                open_fr = True
            elif k == "recovery_exit":
                open_fr = False
            elif k == "timeout":
                rtos += 1
                failed += open_fr
                open_fr = False
        out["rtos"].append(rtos)
        out["rto_after_fr"].append(failed)
        before = lambda t: float(cw[np.searchsorted(ct, t, side="left") - 1]) if np.searchsorted(ct, t, side="left") > 0 else math.nan  # noqa: E731
        if losses:
            t1 = losses[0]
            out["first_loss_s"].append(t1)
            w1 = before(t1)
            out["cwnd_first_loss"].append(None if math.isnan(w1) else w1)
            k = int(np.searchsorted(ct, t1, side="left"))
            grow = cw[k - 1] / cw[0] if k > 1 and cw[0] > 0 else 0.0
            span = ct[k - 1] - ct[0] if k > 1 else 0.0
            out["ss_growth"].append(grow ** (rtt_s / span) if grow >= 4 and span > 0 else None)
        else:
            out["first_loss_s"].append(None)
            out["cwnd_first_loss"].append(None)
            out["ss_growth"].append(None)
        regrow: list[float] = []
        censored = 0
        for i, t in enumerate(losses):
            w = before(t)
            nxt = losses[i + 1] if i + 1 < len(losses) else end
            k = int(np.searchsorted(ct, t, side="right"))
            back = np.nonzero(cw[k:] >= w)[0]
            if math.isnan(w) or not back.size or ct[k + back[0]] >= nxt:
                censored += 1
            else:
                regrow.append(float(ct[k + back[0]] - t))
        out["regrow_s"].append(regrow)
        out["regrow_censored"].append(censored)
    return out


def imbalance_episodes(throughput: pl.DataFrame, flows: Sequence[int], starts: Sequence[float], finish_s: Sequence[float],
                       bin_s: float) -> list[float]:
    """Lengths (s) of the episodes in which two streams' bin rates differ by `IMBALANCE`× or more,
    over every pair of streams, counted only in bins where both are under way (after both
    started, before either finished): an episode starts at the first such bin and lasts while
    the ratio stays at or above `IMBALANCE`."""
    bins: dict[int, dict[float, int]] = {f: {} for f in flows}
    for f in flows:
        t = _per_flow(throughput, f)
        for ti, b in zip(t["time_s"].to_list(), t["bytes"].to_list(), strict=True):
            bins[f][round(ti / bin_s)] = b
    lengths: list[float] = []
    for a in range(len(flows)):
        for b in range(a + 1, len(flows)):
            lo = math.ceil(max(starts[a], starts[b]) / bin_s) + 1
            hi = math.floor(min(finish_s[a], finish_s[b]) / bin_s)
            run = 0
            for k in range(lo, hi + 1):
                x, y = bins[flows[a]].get(k, 0), bins[flows[b]].get(k, 0)
                if max(x, y) >= IMBALANCE * min(x, y) and max(x, y) > 0:
                    run += 1
                elif run:
                    lengths.append(run * bin_s)
                    run = 0
            if run:
                lengths.append(run * bin_s)
    return lengths


def outstanding_vs_cwnd(capture: pl.DataFrame, cwnd: pl.DataFrame, events: pl.DataFrame, flow: int, rtt_s: float,
                        mss: int, tolerance: float = 0.05) -> dict[str, Any]:
    """tcptrace's outstanding data (highest sequence sent − highest ACK, as a capture beside the
    sender sees them) read per `rtt_s` window against the sender's cwnd (F11). Each window is
    classed: `recovery` (a fast retransmit, RTO or open recovery in it), `rwnd` (the advertised
    window below the cwnd), `cwnd` (the sender filled its window: inflight within 2 `mss` of
    cwnd at some change in the window), else `other` (the application or disk held it back).
    Returns the counts per class, `within` (cwnd-limited windows whose peak outstanding is within
    `tolerance` of the window's largest cwnd), `acks_per_data` (ACK packets over data packets
    seen) and the median relative gap."""
    cap = capture.filter(pl.col("flow") == flow).sort("time_s", maintain_order=True)
    data = cap.filter((pl.col("dir") == 0) & (pl.col("len") > 0))
    acks = cap.filter(pl.col("dir") == 1)
    if not data.height or not acks.height:
        raise ValueError(f"flow {flow}: the capture holds no data or no ACKs")
    dt = data["time_s"].to_numpy()
    top = np.maximum.accumulate((data["seq"] + data["len"]).to_numpy().astype(float))
    at = acks["time_s"].to_numpy()
    acked = np.maximum.accumulate(acks["ack"].to_numpy().astype(float))
    j = np.searchsorted(at, dt, side="right") - 1
    outstanding = top - np.where(j >= 0, acked[np.maximum(j, 0)], 1.0)
    win = np.floor(dt / rtt_s).astype(int)
    c = _per_flow(cwnd, flow)
    ct, cw, inflight = c["time_s"].to_numpy(), c["cwnd_bytes"].to_numpy().astype(float), c["inflight_bytes"].to_numpy().astype(float)
    ev = _per_flow(events, flow).filter(pl.col("kind_name").is_in([*LOSS_KINDS, "recovery_exit"]))
    # Recovery intervals: from a fast retransmit or RTO to the recovery's exit (an RTO's to the
    # next cwnd back at 0.5 of its value is not tracked: a window with an RTO is a recovery one).
    spans, start = [], None
    for t, k in zip(ev["time_s"].to_list(), ev["kind_name"].to_list(), strict=True):
        if k == "fast_retransmit":
            start = t if start is None else start
        elif k == "recovery_exit" and start is not None:
            spans.append((start, t))
            start = None
        elif k == "timeout":
            spans.append((t, t + rtt_s))
            start = None
    if start is not None:
        spans.append((start, math.inf))
    adv_t, adv_w = acks["time_s"].to_numpy(), acks["window"].to_numpy().astype(float)
    classes = {"recovery": 0, "rwnd": 0, "cwnd": 0, "other": 0}
    gaps: list[float] = []
    within = 0
    ws, first = np.unique(win, return_index=True)
    peaks = np.maximum.reduceat(outstanding, first)
    for w, peak in zip(ws.tolist(), peaks.tolist(), strict=True):
        t0, t1 = w * rtt_s, (w + 1) * rtt_s
        k0 = max(int(np.searchsorted(ct, t0, side="right")) - 1, 0)
        k1 = int(np.searchsorted(ct, t1, side="left"))
        cmax = float(cw[k0:max(k1, k0 + 1)].max())
        fmax = float(inflight[k0:max(k1, k0 + 1)].max())
        a0, a1 = np.searchsorted(adv_t, t0), np.searchsorted(adv_t, t1)
        adv = float(adv_w[a0:a1].min()) if a1 > a0 else math.inf
        if any(s < t1 and e > t0 for s, e in spans):
            classes["recovery"] += 1
        elif adv < cmax:
            classes["rwnd"] += 1
        elif fmax >= cmax - 2 * mss:
            classes["cwnd"] += 1
            gap = abs(peak - cmax) / cmax
            gaps.append(gap)
            within += gap <= tolerance
        else:
            classes["other"] += 1
    return {"classes": classes, "within": within, "cwnd_windows": classes["cwnd"],
            "median_gap": statistics.median(gaps) if gaps else math.nan,
            "acks_per_data": acks.height / data.height}
