"""Study 000, one run at a time: run a shipped scenario and measure, per run, what the paper's
findings are about (first loss time and order, fairness and utilisation, the gaps' persistence
and shrinking, the first loser's rate, the send order and its gap per round).

The reproduction (`study`) and the map of the unknowns (`map`) share these, so both judge a
run by the same rules; the map's runs measure through `map_stats`, a per-run metric hook of the
sweep runner.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from tcplab import analysis
from tcplab.reproduce.p0.constants import (
    BOTTLENECK,
    FIRST_LOSS_PAPER_S,
    FIRST_LOSS_TOLERANCE_S,
    INFINITE_SSTHRESH_SEGMENTS,
    ROUND_IDLE_S,
    RTT_S,
    SCENARIOS,
    STAGGERED_RATE_MBPS,
)
from tcplab.reproduce.scenarios import queue_override, scenario_value
from tcplab.result import Result
from tcplab.run import run

__all__ = [
    "bottleneck_buffer_path",
    "cached_ssthresh",
    "first_loss_order",
    "first_loss_s",
    "judge",
    "map_stats",
    "repeated_run_overrides",
    "round_stats",
    "run_overrides",
    "run_p0",
    "run_stats",
    "shipped_buffer",
    "start_order",
]


def bottleneck_buffer_path(name: str = "simultaneous") -> str:
    """The override path of the bottleneck buffer in shipped scenario `name`, found by the
    queue's name (`queue(sw_recv->sw_1g)`, `links.6.queue_a` in `simultaneous.toml`)."""
    return queue_override(SCENARIOS / f"{name}.toml", BOTTLENECK)


def shipped_buffer() -> str:
    """The bottleneck buffer the shipped scenarios use (e.g. "500pkts")."""
    return str(scenario_value(SCENARIOS / "simultaneous.toml", bottleneck_buffer_path()))


def run_overrides(duration_s: float) -> dict[str, Any]:
    """The overrides of every run of the study: its simulated duration, and no pcap files."""
    return {"run.duration": f"{duration_s:g}s", "taps.0.pcap": False}


def run_p0(name: str, seed: int, duration_s: float, overrides: dict[str, Any] | None = None) -> Result:
    """Run shipped p0 scenario `name` for `duration_s` with `overrides` (no pcap files)."""
    o = run_overrides(duration_s)
    o.update(overrides or {})
    return run(SCENARIOS / f"{name}.toml", seed=seed, overrides=o)


def first_loss_order(result: Result) -> list[int]:
    """Flows in the order of their first loss (fast retransmit or timeout)."""
    ev = result.trace("events").filter(pl.col("kind_name").is_in(["fast_retransmit", "timeout"]))
    first = ev.group_by("flow").agg(pl.col("time_s").min()).sort("time_s", "flow")
    return first["flow"].to_list()


def first_loss_s(result: Result) -> float:
    """Time of the run's first loss (a fast retransmit or a timeout of any flow), s; NaN when
    nothing was lost."""
    ev = result.trace("events").filter(pl.col("kind_name").is_in(["fast_retransmit", "timeout"]))
    return float(ev["time_s"].min()) if len(ev) else math.nan


def start_order(result: Result) -> list[int]:
    """Flows in the order they started (their SYNs, hence their first-RTT data, go out so)."""
    return result.flows.sort("start_s", "id")["id"].to_list()


def _means_mbps(result: Result, start_s: float, end_s: float) -> list[float]:
    """Per-flow mean goodput over [start_s, end_s], Mb/s, by flow id."""
    bins = analysis.throughput_bins(result.trace("throughput"), None, start_s=start_s, end_s=end_s)
    return (
        bins.group_by("flow")
        .agg(mbps=pl.col("bytes").sum() * 8 / (pl.col("end_s") - pl.col("start_s")).sum() / 1e6)
        .sort("flow")["mbps"]
        .to_list()
    )


def _bin_edge(t: float) -> float:
    """`t` moved to the nearest edge of the 300 ms throughput bins, s."""
    return round(t / RTT_S) * RTT_S


def _spread(means: list[float]) -> float:
    """(max − min) / mean of per-flow rates: 0 when equal."""
    m = sum(means) / len(means) if means else 0.0
    return (max(means) - min(means)) / m if m > 0 else math.nan


def run_stats(result: Result, window: tuple[float, float]) -> dict[str, Any]:
    """What a run says about the paper's findings (window: the averaging span, s).

    jain, util (goodput / 1 Gb/s), means_mbps (per flow) over the window; first_loss_s and
    first_loss_order; start_order; kendall_tau (send order against reversed loss order) and
    exact_reverse (losses in exactly the reverse of the send order); first_loser_slowest (the
    first flow to lose has the lowest mean); spread_early and spread_late ((max − min)/mean
    over the first and last third of the window); jain_end (over the window's last 10 s).
    """
    w0, w1 = window
    fair = analysis.jain_over_time(result.trace("throughput"), None, w0, w1)
    means = _means_mbps(result, w0, w1)
    losses = first_loss_order(result)
    starts = start_order(result)
    tau = analysis.rank_agreement(starts, list(reversed(losses))) if len(losses) >= 2 else math.nan
    third = (w1 - w0) / 3
    end = analysis.jain_over_time(result.trace("throughput"), None, _bin_edge(max(w0, w1 - 10.0)), w1)
    slowest = min(range(len(means)), key=lambda i: means[i]) if means else -1
    return {
        "jain": fair.overall,
        "util": sum(means) / 1000.0,
        "means_mbps": means,
        "first_loss_s": first_loss_s(result),
        "first_loss_order": losses,
        "start_order": starts,
        "kendall_tau": tau,
        "exact_reverse": len(losses) == len(starts) and losses == list(reversed(starts)),
        "first_loser_slowest": bool(losses) and losses[0] == slowest,
        "spread_early": _spread(_means_mbps(result, w0, _bin_edge(w0 + third))),
        "spread_late": _spread(_means_mbps(result, _bin_edge(w1 - third), w1)),
        "jain_end": end.overall,
        "timeouts": int(result.flows["timeouts"].sum()),
        "fast_retransmits": int(result.flows["fast_retransmits"].sum()),
        "wall_s": result.summary["wall_time_s"],
    }


def map_stats(result: Result, window: list[float]) -> dict[str, Any]:
    """`run_stats` over `window` as a per-run metric hook of the sweep runner: the map's runs
    measure in the worker, from the traces, and the sweep store keeps the measures (so the
    map resumes, on a local pool or a Dask cluster)."""
    w0, w1 = window
    return run_stats(result, (w0, w1))


def judge(stats: dict[str, Any], staggered: dict[str, Any]) -> dict[str, bool]:
    """Which findings a seed bears out (keys of `FINDINGS`), from the stats of its
    simultaneous and its staggered run."""
    t = stats["first_loss_s"]
    persists = stats["jain_end"] < 0.95
    lo, hi = STAGGERED_RATE_MBPS
    return {
        "first_loss": not math.isnan(t) and abs(t - FIRST_LOSS_PAPER_S) <= FIRST_LOSS_TOLERANCE_S,
        "exact_reverse": bool(stats["exact_reverse"]),
        "unfair": stats["jain"] < 0.95,
        "persists": persists,
        "shrinks": persists and stats["spread_late"] < stats["spread_early"],
        "first_loser_slowest": bool(stats["first_loser_slowest"]),
        "staggered_fair": staggered["jain"] >= 0.98 and all(lo <= m <= hi for m in staggered["means_mbps"]),
        "staggered_full": staggered["util"] >= 0.95,
    }


def round_stats(result: Result) -> dict[str, Any]:
    """The send order and gap per round (Figs. 6–8) from a run's TAPEE capture, up to the
    first retransmission: send_orders (flows by their first packet, per round), order_kept
    (every round's order is the first round's), gaps_s (first minus last stream of the first
    round, per round), first_round_spread_s."""
    cap = result.trace("capture")
    first_rtx = cap.filter(pl.col("retransmit") == 1)["time_s"].min()
    limit = float(first_rtx) if first_rtx is not None else math.inf  # type: ignore[arg-type]
    rounds = analysis.send_rounds(cap, ROUND_IDLE_S).filter(pl.col("start_s") < limit)
    n = int(rounds.group_by("flow").agg(pl.len())["len"].min())
    orders = [
        rounds.filter(pl.col("round") == k).sort("start_s", "flow")["flow"].to_list() for k in range(n)
    ]
    first, last = orders[0][0], orders[0][-1]
    gaps = analysis.send_gap_per_round(cap, first, last, ROUND_IDLE_S).filter(pl.col("round") < n)
    return {
        "send_orders": orders,
        "order_kept": all(o == orders[0] for o in orders),
        "rounds_before_loss": n,
        "gaps_s": gaps["gap_s"].to_list(),
        "first_round_spread_s": float(gaps["gap_s"][0]),
    }




def cached_ssthresh(cwnd: int, ssthresh: int, ca_open: bool, cached: int = 0, backoff: int = 0) -> int:
    """The ssthresh metric (segments; 0 = none) Linux 2.6.16's `tcp_update_metrics` leaves in
    the route cache when a connection closes with `cwnd` and `ssthresh` (segments), in the Open
    congestion state or not, over a cached metric `cached` (EVIDENCE.md §2):

    - nothing is saved while the retransmission timer is backed off (`icsk_backoff`);
    - slow start not finished (ssthresh ≥ 0xFFFF): an existing metric is raised to cwnd/2;
    - congestion avoidance in the Open state with cwnd > ssthresh: max(cwnd/2, ssthresh);
    - otherwise an existing metric is raised to ssthresh.

    The next connection to the same host starts with it as its ssthresh (`tcp_init_metrics`),
    unless BIC's `initial_ssthresh` is set, which `bictcp_init` applies afterwards.
    """
    if backoff > 0:
        return cached
    if ssthresh >= INFINITE_SSTHRESH_SEGMENTS:
        return cwnd >> 1 if cached and (cwnd >> 1) > cached else cached
    if cwnd > ssthresh and ca_open:
        return max(cwnd >> 1, ssthresh)
    return ssthresh if cached and ssthresh > cached else cached


def repeated_run_overrides(result: Result, mss: int) -> dict[str, Any]:
    """Per-flow overrides that start a second run as the testbed's next iperf run would: each
    stream's ssthresh from the route cache its first run left (`cached_ssthresh`, from the
    run's last cwnd trace row; Open unless a loss came after the last recovery exit). `mss`
    is the segment size in bytes the cwnd trace counts in."""
    cw = result.trace("cwnd").sort("time_s").group_by("flow", maintain_order=True).last()
    ev = result.trace("events")
    out: dict[str, Any] = {}
    for row in cw.iter_rows(named=True):
        f = row["flow"]
        mine = ev.filter(pl.col("flow") == f)
        last_loss = mine.filter(pl.col("kind_name").is_in(["fast_retransmit", "timeout"]))["time_s"].max()
        last_exit = mine.filter(pl.col("kind_name") == "recovery_exit")["time_s"].max()
        ca_open = last_loss is None or (last_exit is not None and last_exit >= last_loss)  # type: ignore[operator]
        cwnd = int(row["cwnd_bytes"]) // mss
        unset = row["ssthresh_bytes"] is None  # null: unlimited (Result's cwnd trace)
        ssthresh = INFINITE_SSTHRESH_SEGMENTS if unset else min(int(row["ssthresh_bytes"]) // mss, INFINITE_SSTHRESH_SEGMENTS)
        metric = cached_ssthresh(cwnd, ssthresh, ca_open)
        if metric:
            out[f"flows.{f}.tcp.initial_ssthresh"] = f"{metric * mss}B"
    return out
