"""Reproduce study 000 (parallel BIC streams on a long fat pipe, and the staggered start).

`reproduce(out, quick=False)` runs the shipped scenarios of `scenarios/p0_parallel_bic/`
over several seeds, writes the equivalents of the paper's Figs. 4–10 plus a buffer-sensitivity
figure into `out/`, and `out/report.md`, which sets each finding of the paper beside the
measured result with pass/fail. `checks(...)` returns the same verdicts for tests.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from tcplab import analysis, plots
from tcplab.reproduce.figures import new_figure, write_figures
from tcplab.reproduce.findings import Check
from tcplab.reproduce.report import Report, write_results_json
from tcplab.reproduce.scenarios import queue_override, scenario_value, study_dir
from tcplab.result import Result
from tcplab.run import run

__all__ = ["BOTTLENECK", "RTT_S", "SCENARIOS", "Check", "Plan", "bottleneck_buffer_path",
           "checks", "experiment", "reproduce", "shipped_buffer", "write_report"]

SCENARIOS = study_dir("p0_parallel_bic")
"""The shipped scenario directory (inside the installed package)."""

RTT_S = 0.300
"""Base round-trip time of the testbed (2 × 150 ms), seconds."""

BOTTLENECK = "sw_recv->sw_1g"
"""Name of the bottleneck queue (the 1 Gb/s egress towards the receivers)."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run: seeds, simulated duration, the averaging window (whole 300 ms bins),
    the buffer sweep and the length of the header captures."""

    seeds: tuple[int, ...]
    duration_s: float
    window: tuple[float, float]
    buffers: tuple[int, ...]
    capture_s: float

    @staticmethod
    def make(quick: bool) -> Plan:
        """The full plan (the paper's 100 s) or the quick one (30 s, fewer seeds)."""
        if quick:
            return Plan((1, 2, 3), 30.0, (9.9, 29.7), (100, 500, 1000), 8.0)
        return Plan((1, 2, 3, 4, 5), 100.0, (9.9, 99.9), (20, 50, 100, 200, 500, 1000), 15.0)


def bottleneck_buffer_path(name: str = "simultaneous") -> str:
    """The override path of the bottleneck buffer in shipped scenario `name`, found by the
    queue's name (`links.6.queue_a` in `simultaneous.toml`)."""
    return queue_override(SCENARIOS / f"{name}.toml", BOTTLENECK)


def shipped_buffer() -> str:
    """The bottleneck buffer the shipped scenarios use (e.g. "500pkts")."""
    return str(scenario_value(SCENARIOS / "simultaneous.toml", bottleneck_buffer_path()))


def _run(name: str, seed: int, duration_s: float, overrides: dict[str, Any] | None = None) -> Result:
    """Run a shipped p0 scenario for `duration_s` with `overrides`."""
    # No pcap files: the figures need the capture trace of a few seconds only.
    o: dict[str, Any] = {"run.duration": f"{duration_s:g}s", "taps.0.pcap": False}
    o.update(overrides or {})
    return run(SCENARIOS / f"{name}.toml", seed=seed, overrides=o)


def _window_stats(result: Result, window: tuple[float, float]) -> dict[str, Any]:
    """Jain index and utilisation of the bottleneck over `window`, per-stream means."""
    fair = analysis.jain_over_time(result.trace("throughput"), None, window[0], window[1])
    bins = analysis.throughput_bins(result.trace("throughput"), None, start_s=window[0], end_s=window[1])
    means = (
        bins.group_by("flow")
        .agg(mbps=pl.col("bytes").sum() * 8 / (pl.col("end_s") - pl.col("start_s")).sum() / 1e6)
        .sort("flow")["mbps"]
        .to_list()
    )
    return {"jain": fair.overall, "util": sum(means) / 1000.0, "means_mbps": means}


def _first_loss_order(result: Result) -> list[int]:
    """Flows in the order of their first loss (fast retransmit or timeout)."""
    ev = result.trace("events").filter(pl.col("kind_name").is_in(["fast_retransmit", "timeout"]))
    first = ev.group_by("flow").agg(pl.col("time_s").min()).sort("time_s", "flow")
    return first["flow"].to_list()


def _first_loss_s(result: Result) -> float:
    """Time of the run's first loss (a fast retransmit or a timeout of any flow), s; NaN when
    nothing was lost."""
    ev = result.trace("events").filter(pl.col("kind_name").is_in(["fast_retransmit", "timeout"]))
    return float(ev["time_s"].min()) if len(ev) else math.nan


def _start_order(result: Result) -> list[int]:
    """Flows in the order they started (their SYNs, hence their first-RTT data, go out so)."""
    return result.flows.sort("start_s", "id")["id"].to_list()


def _later_lose_first(result: Result) -> float:
    """Kendall tau between first-RTT send order and *reversed* first-loss order (1: the last
    to send is the first to lose, exactly)."""
    losses = _first_loss_order(result)
    if len(losses) < 2:
        return math.nan
    return analysis.rank_agreement(_start_order(result), list(reversed(losses)))


def experiment(plan: Plan, progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Run everything the report needs; returns plain data (results and per-run stats)."""
    out: dict[str, Any] = {"plan": dataclasses.asdict(plan)}
    for name in ("simultaneous", "staggered", "decp", "harmonizer"):
        rows = []
        for seed in plan.seeds:
            progress(f"{name} seed {seed}")
            r = _run(name, seed, plan.duration_s)
            st = _window_stats(r, plan.window)
            st.update(
                seed=seed,
                timeouts=int(r.flows["timeouts"].sum()),
                fast_retransmits=int(r.flows["fast_retransmits"].sum()),
                later_lose_first=_later_lose_first(r),
                first_loss_order=_first_loss_order(r),
                first_loss_s=_first_loss_s(r),
                start_order=_start_order(r),
                wall_s=r.summary["wall_time_s"],
            )
            rows.append(st)
            if seed == plan.seeds[0]:
                out[f"{name}_result"] = r
        out[name] = rows
    rows = []
    for seed in plan.seeds:
        progress(f"staggered CUBIC seed {seed}")
        r = _run("staggered", seed, plan.duration_s, {"defaults.tcp.profile": "linux-modern", "defaults.tcp.cc": "cubic"})
        st = _window_stats(r, plan.window)
        st.update(seed=seed)
        rows.append(st)
    out["cubic_staggered"] = rows
    rows = []
    buffer_path = bottleneck_buffer_path("simultaneous")
    for buf in plan.buffers:
        for seed in plan.seeds:
            progress(f"buffer {buf} seed {seed}")
            r = _run("simultaneous", seed, plan.duration_s, {buffer_path: f"{buf}pkts"})
            st = _window_stats(r, plan.window)
            st.update(seed=seed, buffer_pkts=buf)
            rows.append(st)
    out["buffers"] = rows
    # Header captures of the first seconds (TAPEE), for Figs. 6–8 and 10.
    for name in ("simultaneous", "staggered"):
        progress(f"{name} capture")
        r = _run(name, plan.seeds[0], plan.capture_s, {"taps.0.trace": True})
        out[f"{name}_capture"] = r
    return out


def _gap_growth(capture: pl.DataFrame, flows: pl.DataFrame) -> pl.DataFrame:
    """Send-time gap per RTT between the first and the last stream of the first RTT."""
    order = flows.sort("start_s", "id")["id"].to_list()
    return analysis.send_gap_per_rtt(capture, RTT_S, order[0], order[-1])


def checks(data: dict[str, Any]) -> list[Check]:
    """The paper's findings, each set beside the measurement."""
    sim, stag, decp, harm = data["simultaneous"], data["staggered"], data["decp"], data["harmonizer"]
    win = data["plan"]["window"]
    res: list[Check] = []
    unfair = [r for r in sim if r["jain"] < 0.95]
    res.append(
        Check(
            "Fig. 4",
            f"Simultaneous start: the streams diverge and stay apart ({win[0]:g}–{win[1]:g} s)",
            "Jain " + ", ".join(f"{r['jain']:.3f}" for r in sim) + f" (< 0.95 in {len(unfair)}/{len(sim)} seeds)",
            len(unfair) * 2 > len(sim),
            values={"jain": [r["jain"] for r in sim], "unfair_seeds": len(unfair)},
            quote="その後は, どのストリームもほぼ一定の値を保っている.序盤 でついた速度格差が保存されている. […] 少なくとも 100 秒の範囲内 では解消されていない.",
            location="§4.1 ¶1 (Fig. 4)",
        )
    )
    taus = [r["later_lose_first"] for r in sim if not math.isnan(r["later_lose_first"])]
    exact = sum(1 for t in taus if t == 1.0)
    res.append(
        Check(
            "Figs. 5–7",
            "Streams that send later in the first RTT lose first (the paper: losses 3, 1, 2, 0 "
            "are the exact reverse of the send order 0, 2, 1, 3, τ = +1; checked here: mean τ > 0)",
            (
                "Kendall τ(send order, reversed first-loss order) = "
                + ", ".join(f"{t:+.2f}" for t in taus)
                + f"; mean {np.mean(taus):+.2f}; the exact reverse (τ = +1) in {exact}/{len(taus)} seeds"
            )
            if taus
            else "no losses",
            bool(taus) and float(np.mean(taus)) > 0,
            values={"kendall_tau": taus, "exact_reverse_seeds": exact},
            quote="stream0,2,1,3の順にパケットを送出して いる.図6のパケット送出順がそのまま保存されて いる. […] 実際、図5はstream3,1,2, 0の順にロスが発生している事を示している.",
            location="§4.1 ¶4 (Fig. 7), with ¶2 (Fig. 5)",
        )
    )
    gaps = _gap_growth(data["simultaneous_capture"].trace("capture"), data["simultaneous_capture"].flows)
    early = gaps.filter(pl.col("rtt_index") <= 1)["gap_s"]
    late = gaps.filter(pl.col("rtt_index").is_between(8, 12))["gap_s"]
    g0 = float(early.mean()) if len(early) else math.nan
    g1 = float(late.mean()) if len(late) else math.nan
    res.append(
        Check(
            "Fig. 8",
            "The send-time gap between the first and last stream grows over the early RTTs",
            f"{g0 * 1e3:.2f} ms in RTTs 0–1 → {g1 * 1e3:.2f} ms in RTTs 8–12",
            not math.isnan(g1) and g1 > 3 * g0 > 0,
            values={"gap_s_rtts_0_1": g0, "gap_s_rtts_8_12": g1},
            quote="そのためストリーム間の送 出時間差が拡大されながら保存される.",
            location="§4.1 ¶5 (Fig. 8)",
        )
    )
    first_rtt = g0
    res.append(
        Check(
            "Fig. 6",
            "In the first RTT the streams start sending ~2 ms apart",
            f"{first_rtt * 1e3:.2f} ms between the first and last stream (start skew up to 2 ms)",
            0.2e-3 < first_rtt < 3e-3,
            values={"gap_s_rtts_0_1": first_rtt},
            quote="最も早い stream 0 と最も遅い stream 3 で は約 2ms の差が生じている.",
            location="§4.1 ¶3 (Fig. 6)",
        )
    )
    res.append(
        Check(
            "Fig. 9",
            "Staggered start (i·RTT/4): every run fair (Jain ≥ 0.98)",
            "Jain " + ", ".join(f"{r['jain']:.4f}" for r in stag),
            all(r["jain"] >= 0.98 for r in stag),
            values={"jain": [r["jain"] for r in stag]},
            quote="4 つのストリームがほぼ 250Mbps で安定して いる. […] 何回か実験を繰り返したが,全て同 様の結果になった.",
            location="§4.2 ¶3 (Fig. 9)",
        )
    )
    res.append(
        Check(
            "Fig. 9",
            "Staggered start: the 1 Gb/s link used close to 100 % (≥ 95 %)",
            "goodput / 1 Gb/s " + ", ".join(f"{r['util']:.3f}" for r in stag),
            all(r["util"] >= 0.95 for r in stag),
            values={"utilisation": [r["util"] for r in stag]},
            quote="1Gbpsのボトルネックリンク帯域を公平かつ 100%に近い効率で使用している.",
            location="§4.2 ¶3 (Fig. 9)",
        )
    )
    cub = data["cubic_staggered"]
    for figure, claim, rows in (
        ("§5", "DECP-like cooperative window control makes simultaneous starts fair", decp),
        ("§5", "A Stream-Harmonizer-like gateway (delaying the fast streams) makes simultaneous starts fair", harm),
        ("not in the paper", "Staggered start under CUBIC (linux-modern profile) is fair too", cub),
    ):
        res.append(_fairness_check(figure, claim, rows))
    return res


def _fairness_check(figure: str, claim: str, rows: list[dict[str, Any]]) -> Check:
    """A comparison beyond the paper: every run fair (Jain ≥ 0.98); the measurement also
    reports utilisation."""
    measured = "Jain " + ", ".join(f"{r['jain']:.4f}" for r in rows)
    measured += "; utilisation " + ", ".join(f"{r['util']:.3f}" for r in rows)
    values = {"jain": [r["jain"] for r in rows], "utilisation": [r["util"] for r in rows]}
    return Check(figure, claim, measured, all(r["jain"] >= 0.98 for r in rows), paper=False, values=values)


def _figure_first_rtt(capture: pl.DataFrame, title: str) -> Any:
    """Fig. 6/10: each stream's data packets in one RTT window, as a raster."""
    order = analysis.send_order_per_rtt(capture, RTT_S)
    fig, (ax,) = new_figure()
    data = capture.filter((pl.col("dir") == 0) & (pl.col("len") > 0))
    t0 = float(order["window_start_s"].min())
    for k, idx in enumerate((0, 8)):
        w0 = t0 + idx * RTT_S
        part = data.filter(pl.col("time_s").is_between(w0, w0 + RTT_S, closed="left"))
        for f in sorted(part["flow"].unique().to_list()):
            pts = part.filter(pl.col("flow") == f)
            ax.plot((pts["time_s"] - w0) * 1e3, np.full(pts.height, f + 0.3 * k), "|", ms=6, label=f"stream{f}, RTT {idx}")
    ax.set_xlabel("time since the start of the RTT window (ms)")
    ax.set_ylabel("stream (RTT 0 on the line, RTT 8 just above)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    return fig


def write_report(data: dict[str, Any], out: Path) -> list[Check]:
    """Write the figures and report.md into `out`; return the checks."""
    out.mkdir(parents=True, exist_ok=True)
    figs = {}
    sim_r, stag_r = data["simultaneous_result"], data["staggered_result"]
    figs["fig4_throughput_simultaneous"] = plots.throughput(sim_r.trace("throughput"), title="Fig. 4: simultaneous start, per 300 ms")
    figs["fig5_events_simultaneous"] = plots.event_raster(
        sim_r.trace("events"), kinds=["dupack", "fast_retransmit", "timeout"], title="Fig. 5: duplicate ACKs and losses per stream"
    )
    cap = data["simultaneous_capture"].trace("capture")
    figs["fig6_first_rtt_simultaneous"] = _figure_first_rtt(cap, "Figs. 6–7: send times within the RTT (simultaneous start)")
    loss = cap.filter(pl.col("retransmit") == 1)
    if loss.height:
        t = float(loss["time_s"].min()) - RTT_S
        start = max(0.0, round(t - 0.6, 2))
        figs["fig7_bursts_10ms"] = plots.throughput(cap, 0.010, start_s=start, end_s=start + 0.9, title="Fig. 7: 10 ms bins around the first loss")
    gaps = _gap_growth(cap, data["simultaneous_capture"].flows)
    fig, (ax,) = new_figure()
    ax.plot(gaps["rtt_index"], gaps["gap_s"] * 1e3, "o-")
    ax.set_xlabel("RTT index since the first data packet")
    ax.set_ylabel("send-time gap, last − first stream (ms)")
    ax.set_title("Fig. 8: gap between the first and last stream per RTT")
    figs["fig8_send_gap"] = fig
    figs["fig9_throughput_staggered"] = plots.throughput(stag_r.trace("throughput"), title="Fig. 9: staggered start (i·75 ms), per 300 ms")
    figs["fig10_first_rtt_staggered"] = _figure_first_rtt(
        data["staggered_capture"].trace("capture"), "Fig. 10: staggered start, bursts within the RTT"
    )
    buf = pl.DataFrame(data["buffers"]).select("buffer_pkts", "seed", "jain", "util")
    figs["buffer_sensitivity_jain"] = plots.sweep(
        buf, "buffer_pkts", "jain", xlabel="bottleneck buffer (packets)", ylabel="Jain index (per-stream mean)", logx=True,
        title="Fairness vs bottleneck buffer (simultaneous start)",
    )
    figs["buffer_sensitivity_util"] = plots.sweep(
        buf, "buffer_pkts", "util", xlabel="bottleneck buffer (packets)", ylabel="goodput / 1 Gb/s", logx=True,
        title="Utilisation vs bottleneck buffer (simultaneous start)",
    )
    write_figures(figs, out)
    result = checks(data)
    _report(data, result, figs).write(out / "report.md")
    write_results_json(data, result, out / "results.json")
    return result


def _report(data: dict[str, Any], result: list[Check], figs: dict[str, Any]) -> Report:
    """report.md: the paper's findings, the comparisons beyond it, every run, the buffer
    sensitivity and the list of figures."""
    plan = data["plan"]
    report = Report("Study 000 reproduced: parallel BIC streams on a long fat pipe")
    report.paragraph(
        f"Seeds {', '.join(map(str, plan['seeds']))}; {plan['duration_s']:g} s simulated per run; "
        f"fairness and utilisation over {plan['window'][0]:g}–{plan['window'][1]:g} s; bottleneck buffer {shipped_buffer()} "
        "(the paper does not give it: see the sensitivity table). Scenarios: `scenarios/p0_parallel_bic/`."
    )
    report.heading("The paper's findings")
    report.checks([c for c in result if c.paper])
    report.paragraph("Each finding with the paper's own sentence (seed `000_dc74dff776e003ff.txt`):")
    report.findings([c for c in result if c.paper])
    firsts = [r["first_loss_s"] for r in data["simultaneous"]]
    report.paragraph(
        "Not yet checked (issue 18): the paper's streams are equal until ≈ 5 s (§4.1 ¶1: "
        "\"5秒付近までは全ての ストリームがほぼ同じ流量である.\"); the simultaneous runs' first loss "
        "comes at " + ", ".join(f"{t:.2f}" for t in firsts) + " s (per seed; see the per-run table)."
    )
    report.heading("Beyond the paper")
    full = Plan.make(quick=False)
    if plan["duration_s"] < full.duration_s:
        span, full_span = plan["window"][1] - plan["window"][0], full.window[1] - full.window[0]
        report.paragraph(
            f"Quick run: the remedies are judged over {span:g} s, less than they need to settle (the full run "
            f"judges {full_span:g} s); `tcplab reproduce` exits 0 on the paper's findings alone."
        )
    report.checks([c for c in result if not c.paper], header=("section", "remedy", "measured", ""))
    report.heading("Per run")
    runs = []
    for name in ("simultaneous", "staggered", "decp", "harmonizer"):
        for r in data[name]:
            runs.append(
                (name, r["seed"], f"{r['jain']:.4f}", f"{r['util']:.3f}", _mbps(r), r["start_order"], r["first_loss_order"], f"{r['first_loss_s']:.2f}")
            )
    for r in data["cubic_staggered"]:
        runs.append(("staggered, CUBIC", r["seed"], f"{r['jain']:.4f}", f"{r['util']:.3f}", _mbps(r), "", "", ""))
    report.table(
        ("experiment", "seed", "Jain", "utilisation", "per-stream Mb/s", "start order", "first-loss order", "first loss (s)"),
        runs,
    )
    report.heading("Buffer sensitivity (simultaneous start)")
    buf = pl.DataFrame(data["buffers"])
    sizes = []
    for b in sorted(buf["buffer_pkts"].unique().to_list()):
        part = buf.filter(pl.col("buffer_pkts") == b).sort("seed")
        sizes.append((b, ", ".join(f"{x:.3f}" for x in part["jain"]), ", ".join(f"{x:.3f}" for x in part["util"])))
    report.table(("buffer (pkts)", "Jain per seed", "utilisation per seed"), sizes)
    report.heading("Figures")
    report.bullets(f"`{name}.png` / `.svg`" for name in figs)
    return report


def _mbps(row: dict[str, Any]) -> str:
    """A run's per-stream mean throughputs, Mb/s, comma-separated."""
    return ", ".join(f"{m:.0f}" for m in row["means_mbps"])


def reproduce(out: str | Path, quick: bool = False, progress: Callable[[str], None] = lambda _: None) -> list[Check]:
    """Run study 000 and write figures and report.md into `out`; returns the checks."""
    data = experiment(Plan.make(quick), progress)
    return write_report(data, Path(out))
