"""The per-run measures of study 002, computed in the sweep worker (`run_measures`, a sweep
hook) from a run's summary and its throughput trace.

Rates follow the paper's definition unless named otherwise: bytes of the file moved over the
time taken, iSCSI and TCP/IP headers excluded (「転送データ量を所要時間で割った平均転送レートとし、
iSCSI や TCP/IP のヘッダ・オーバーヘッドは含まない値を記す」, §4 s1). A stream's file bytes are
its delivered bytes less its PDU headers, counted from the milestones (one `command` per SCSI
command: its data bytes).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import polars as pl

from tcplab.reproduce.p2.constants import L2_EXTRA_BYTES, MSS, STRAGGLER
from tcplab.reproduce.p2.streams import imbalance_episodes, outstanding_vs_cwnd, stream_dynamics

__all__ = ["run_measures"]


def _cv(values: list[float]) -> float:
    """Coefficient of variation (population standard deviation over the mean)."""
    m = statistics.fmean(values)
    return statistics.pstdev(values) / m if m > 0 and len(values) > 1 else 0.0


def run_measures(result: Any, bottleneck: str | None = None, bin_s: float = 1.0, streams: str = "dr.",
                 rtt_s: float | str | None = None) -> dict[str, Any]:
    """Measures of one run. `bottleneck` names the queue whose IP bytes give the line's rate;
    `bin_s` is the bin of the average/peak ratio (the throughput trace's bins summed to it);
    `streams` is the name prefix of the Data Reservoir's streams (other flows, cross traffic,
    count only in the bottleneck's rates).

    Columns: `agg_mbps` (file bytes over the time from the first stream's start to the last
    stream's finish, or to the run's end when not all finished), `finished` (streams done),
    `stream_mbps` and `stream_finish_s` (per stream, its file bytes over its own time),
    `stream_cv`, `tail` (stragglers: streams finishing after 1.2 × the median completion),
    `last_over_median`, `retx_rate` (retransmitted over sent data segments), `timeouts`,
    `avg_over_peak` (the aggregate's mean over its transfer over its largest `bin_s` bin, both
    with headers as the trace counts them), `peak_l2_mbps`, `ip_mbps` and `l2_mbps` (the
    bottleneck's IP bytes, and with 14 bytes per packet, over the transfer), `others_mbps`
    (the summed goodput of every other flow, when there is one).

    With `rtt_s` (the path's base RTT, or "srtt-min": the smallest smoothed RTT the streams'
    cwnd trace shows, a few hundred µs above the base) and the run's `cwnd` and `events` traces, the per-stream
    readings of `streams.stream_dynamics` (prefixed `s_`; the regrowth times pooled as `regrow_s`) and the imbalance episodes
    (`imbalance_s`); with a `capture` trace too, each stream's outstanding data against its cwnd
    (`out_within`, `out_cwnd_windows`, `out_classes`, `out_median_gap`, `acks_per_data`)."""
    flows = result.flows.filter(pl.col("name").str.starts_with(streams))
    if not flows.height:
        raise ValueError(f"no flow named {streams}*: the Data Reservoir's streams")
    end = float(result.summary["sim_time_s"])
    starts = flows["start_s"].to_list()
    finish = [f if f is not None else math.nan for f in flows["finish_s"].to_list()]
    done = [f for f in finish if not math.isnan(f)]
    span_end = max(done) if len(done) == len(finish) else end
    t0 = min(starts)
    milestones = result.traces.get("milestones")
    if milestones is None:
        raise ValueError("study 002's measures need the milestones trace (trace.milestones = true): the file bytes each stream moved")
    file_bytes = milestones.filter(pl.col("kind_name") == "command").group_by("flow").agg(pl.col("bytes").sum())
    per_flow = dict(zip(file_bytes["flow"].to_list(), file_bytes["bytes"].to_list(), strict=True))
    ids = flows["id"].to_list()
    moved = [float(per_flow.get(i, 0)) for i in ids]
    stream_time = [(f if not math.isnan(f) else end) - s for f, s in zip(finish, starts, strict=True)]
    stream_mbps = [b * 8 / t / 1e6 if t > 0 else 0.0 for b, t in zip(moved, stream_time, strict=True)]
    times = [f - s for f, s in zip(finish, starts, strict=True) if not math.isnan(f)]
    median = statistics.median(times) if times else math.nan
    tail = sum(1 for t in times if t > STRAGGLER * median) if times else 0
    sent = float(flows["segments_sent"].sum())
    out: dict[str, Any] = {
        "agg_mbps": sum(moved) * 8 / (span_end - t0) / 1e6 if span_end > t0 else 0.0,
        "finished": len(done),
        "streams": len(finish),
        "span_s": span_end - t0,
        "stream_mbps": stream_mbps,
        "stream_finish_s": [None if math.isnan(f) else f for f in finish],
        "stream_cv": _cv(stream_mbps),
        "tail": tail,
        "last_over_median": max(times) / median if times and median > 0 else math.nan,
        "retx_rate": float(flows["retransmits"].sum()) / sent if sent else 0.0,
        "timeouts": int(flows["timeouts"].sum()),
        "stream_timeouts": flows["timeouts"].to_list(),
    }
    others = result.flows.filter(~pl.col("name").str.starts_with(streams))
    if others.height:
        # Everything else on the path (cross traffic, a competing flow): its goodput, summed.
        out["others_mbps"] = float(others["goodput_bps"].sum()) / 1e6
    tp = result.traces.get("throughput")
    if tp is not None:
        tp = tp.filter(pl.col("flow").is_in(ids))
    if tp is not None and tp.height:
        bins = (tp.with_columns(((pl.col("time_s") - 1e-9) / bin_s).floor().alias("bin"))
                .filter(pl.col("time_s") <= span_end + 1e-9).group_by("bin").agg(pl.col("bytes").sum()).sort("bin"))
        rates = [b * 8 / bin_s for b in bins["bytes"].to_list()]
        whole = [r for k, r in zip(bins["bin"].to_list(), rates, strict=True) if (k + 1) * bin_s <= span_end]
        # The peak is a whole bin inside the transfer (a transfer shorter than one bin has none).
        peak = max(whole, default=0.0)
        total = float(tp.filter(pl.col("time_s") <= span_end + bin_s)["bytes"].sum())
        out["avg_over_peak"] = total * 8 / (span_end - t0) / peak if peak > 0 else math.nan
        # The peak bin with 14 L2 bytes per 1500-byte packet of payload + 52 bytes of headers.
        out["peak_l2_mbps"] = peak / 1e6 * (1448 + 52 + L2_EXTRA_BYTES) / 1448
    if rtt_s is not None:
        out |= _dynamics(result, flows, finish, end, rtt_s, bin_s)
    if bottleneck is not None:
        q = result.queues.filter(pl.col("name") == bottleneck)
        if q.height:
            ip = float(q["bytes_transmitted"][0])
            pkts = float(q["departed"][0])
            out["ip_mbps"] = ip * 8 / (span_end - t0) / 1e6
            out["l2_mbps"] = (ip + L2_EXTRA_BYTES * pkts) * 8 / (span_end - t0) / 1e6
    return out


def _dynamics(result: Any, flows: pl.DataFrame, finish: list[float], end: float, rtt_s: float | str, bin_s: float) -> dict[str, Any]:
    """The trace readings of `run_measures` (its docstring)."""
    cwnd, events = result.traces.get("cwnd"), result.traces.get("events")
    if cwnd is None or events is None:
        raise ValueError("study 002's stream readings need the cwnd and events traces (trace.cwnd, trace.events = true)")
    ids = flows["id"].to_list()
    if rtt_s == "srtt-min":
        sampled = cwnd.filter(pl.col("flow").is_in(ids) & (pl.col("srtt_s") > 0))["srtt_s"]
        if not sampled.len():
            raise ValueError("no RTT sample in the cwnd trace: the streams never got an ACK")
        rtt_s = float(sampled.min())
    elif not isinstance(rtt_s, (int, float)) or rtt_s <= 0:
        raise ValueError(f"rtt_s: {rtt_s!r} is neither a positive number of seconds nor 'srtt-min'")
    ends = [end if math.isnan(f) else f for f in finish]
    out: dict[str, Any] = {"rtt_s": rtt_s}
    d = stream_dynamics(cwnd, events, ids, ends, rtt_s)
    regrow = d.pop("regrow_s")
    out |= {f"s_{k}": v for k, v in d.items()}
    # The run's regrowth times pooled over its streams (a list of floats: stores keep it flat).
    out["regrow_s"] = [float(x) for stream in regrow for x in stream]
    out["s_ss_growth"] = [None if g is None else float(g) for g in d["ss_growth"]]
    tp = result.traces.get("throughput")
    if tp is not None:
        out["imbalance_s"] = imbalance_episodes(tp, ids, flows["start_s"].to_list(), ends, bin_s)
    capture = result.traces.get("capture")
    if capture is not None:
        per = [outstanding_vs_cwnd(capture, cwnd, events, f, rtt_s, MSS) for f in ids]
        out["out_within"] = [p["within"] for p in per]
        out["out_cwnd_windows"] = [p["cwnd_windows"] for p in per]
        out["out_classes"] = [p["classes"] for p in per]
        out["out_median_gap"] = [p["median_gap"] for p in per]
        out["acks_per_data"] = [p["acks_per_data"] for p in per]
    return out


def copy_measures(result: Any, flow: str = "copy", bin_s: float = 1.0) -> dict[str, Any]:
    """Fig. 3's conventional copy (`fs_copy.toml`): the copy flow's delivered bytes in `bin_s`
    bins (the throughput trace, headers excluded as the trace counts payload) — `peak_mbps` (its
    largest whole bin inside the transfer), `avg_mbps` (all its bytes over its time, start to
    finish or to the run's end) and `avg_over_peak`; `finish_s`."""
    flows = result.flows.filter(pl.col("name") == flow)
    if flows.height != 1:
        raise ValueError(f"no flow named {flow!r}: the copy")
    fid = flows["id"][0]
    t0 = float(flows["start_s"][0])
    fin = flows["finish_s"][0]
    end = float(fin) if fin is not None else float(result.summary["sim_time_s"])
    tp = result.traces.get("throughput")
    if tp is None:
        raise ValueError("the copy's measures need the throughput trace (trace.throughput_interval)")
    tp = tp.filter(pl.col("flow") == fid)
    bins = (tp.with_columns(((pl.col("time_s") - 1e-9) / bin_s).floor().alias("bin"))
            .group_by("bin").agg(pl.col("bytes").sum()).sort("bin"))
    whole = [b * 8 / bin_s for k, b in zip(bins["bin"].to_list(), bins["bytes"].to_list(), strict=True) if (k + 1) * bin_s <= end]
    peak = max(whole, default=0.0)
    avg = float(flows["bytes_delivered"][0]) * 8 / (end - t0) if end > t0 else 0.0
    return {"peak_mbps": peak / 1e6, "avg_mbps": avg / 1e6, "avg_over_peak": avg / peak if peak > 0 else math.nan,
            "finish_s": None if fin is None else float(fin)}

