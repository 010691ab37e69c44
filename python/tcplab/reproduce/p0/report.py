"""Study 000's figures and report.md, from the data `study.experiment` returns."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from tcplab import analysis, plots
from tcplab.reproduce.figures import new_figure, write_figures
from tcplab.reproduce.findings import Check
from tcplab.reproduce.p0.constants import FINDINGS, RTT_S
from tcplab.reproduce.p0.map import map_figure, map_table, point_label
from tcplab.reproduce.p0.runs import judge, shipped_buffer
from tcplab.reproduce.report import Report

__all__ = ["report", "write_figures_p0"]


def _figure_first_rtt(capture: pl.DataFrame, title: str) -> Any:
    """Figs. 6/10: each stream's data packets in one RTT window, as a raster."""
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


def _figure_gaps(rounds: list[dict[str, Any]]) -> Any:
    """Fig. 8: per seed, the gap between the first and the last stream of the first round,
    round by round up to the first loss."""
    fig, (ax,) = new_figure()
    for r in rounds:
        ax.plot(range(len(r["gaps_s"])), np.array(r["gaps_s"]) * 1e3, "o-", ms=3, label=f"seed {r['seed']}")
    ax.set_yscale("log")
    ax.set_xlabel("round (burst) since the first data packet, up to the first loss")
    ax.set_ylabel("send-time gap, last − first stream (ms)")
    ax.set_title("Fig. 8: gap between the first and last stream per round")
    ax.legend(fontsize=7, ncol=2)
    return fig


def write_figures_p0(data: dict[str, Any], out: Path) -> dict[str, Any]:
    """Draw and write every figure into `out`; returns them by name."""
    figs: dict[str, Any] = {}
    sim_r, stag_r = data["simultaneous_result"], data["staggered_result"]
    cap = sim_r.trace("capture")
    figs["fig4_sending_rate_simultaneous"] = plots.throughput(
        cap, RTT_S, title="Fig. 4: simultaneous start, sending rate at the TAPEE tap per 300 ms"
    )
    figs["fig4_goodput_simultaneous"] = plots.throughput(sim_r.trace("throughput"), title="Fig. 4 (receivers): goodput per 300 ms")
    figs["fig5_events_simultaneous"] = plots.event_raster(
        sim_r.trace("events"), kinds=["dupack", "fast_retransmit", "timeout"], end_s=20.0,
        title="Fig. 5: duplicate ACKs and losses per stream (first 20 s)",
    )
    early = cap.filter(pl.col("time_s") < 20.0)
    figs["fig6_first_rtt_simultaneous"] = _figure_first_rtt(early, "Figs. 6–7: send times within the RTT (simultaneous start)")
    loss = early.filter(pl.col("retransmit") == 1)
    if loss.height:
        start = max(0.0, round(float(loss["time_s"].min()) - RTT_S - 0.6, 2))
        figs["fig7_bursts_10ms"] = plots.throughput(early, 0.010, start_s=start, end_s=start + 0.9, title="Fig. 7: 10 ms bins around the first loss")
    figs["fig8_send_gap"] = _figure_gaps(data["simultaneous_rounds"])
    figs["fig9_throughput_staggered"] = plots.throughput(stag_r.trace("throughput"), title="Fig. 9: staggered start (i·75 ms), goodput per 300 ms")
    figs["fig10_first_rtt_staggered"] = _figure_first_rtt(
        data["staggered_capture"].trace("capture"), "Fig. 10: staggered start, bursts within the RTT"
    )
    figs["map_findings"] = map_figure(map_table(data["map"]))
    write_figures(figs, out)
    return figs


def report(data: dict[str, Any], result: list[Check], figs: dict[str, Any], captures: list[Path]) -> Report:
    """report.md: the paper's findings, the comparisons beyond it, the map of the unknowns,
    every run, and the lists of figures and captures."""
    plan = data["plan"]
    rep = Report("Study 000 reproduced: parallel BIC streams on a long fat pipe")
    rep.paragraph(
        f"Seeds {', '.join(map(str, plan['seeds']))}; {plan['duration_s']:g} s simulated per run; "
        f"fairness and utilisation over {plan['window'][0]:g}–{plan['window'][1]:g} s; bottleneck buffer {shipped_buffer()} "
        "(the paper does not give it: see the map). Scenarios: `scenarios/p0_parallel_bic/`; their README gives "
        "every assumption and its evidence. A finding holds when more than half of the seeds bear it out."
    )
    rep.paper_findings(result, "000_dc74dff776e003ff.txt")
    rep.heading("Inputs taken from the paper")
    rep.checks([c for c in result if c.figure.endswith("(input)")], header=("figure", "input", "measured", ""))
    rep.heading("Beyond the paper")
    rep.checks([c for c in result if not c.paper and not c.figure.endswith("(input)")], header=("section", "remedy", "measured", ""))
    _repeated_section(rep, data)
    _map_section(rep, data)
    rep.heading("Per run")
    runs = []
    for name in ("simultaneous", "staggered", "decp", "harmonizer", "cubic_staggered"):
        for r in data[name]:
            runs.append((
                name.replace("cubic_staggered", "staggered, CUBIC"), r["seed"], f"{r['jain']:.4f}", f"{r['util']:.3f}",
                ", ".join(f"{m:.0f}" for m in r["means_mbps"]), "".join(map(str, r["start_order"])),
                "".join(map(str, r["first_loss_order"])), _t(r["first_loss_s"]),
            ))
    rep.table(("experiment", "seed", "Jain", "utilisation", "per-stream Mb/s", "start order", "first-loss order", "first loss (s)"), runs)
    rep.heading("Figures")
    rep.bullets(f"`{name}.png` / `.svg`" for name in figs)
    rep.heading("Header captures")
    rep.paragraph(f"The TAPEE tap's first {plan['capture_s']:g} s at seed {plan['seeds'][0]}, per case (Wireshark opens them):")
    rep.bullets(f"`captures/{p.name}`" for p in captures)
    return rep


def _t(x: float) -> str:
    """A time in seconds, or "none"."""
    return "none" if math.isnan(x) else f"{x:.2f}"


def _repeated_section(rep: Report, data: dict[str, Any]) -> None:
    """First runs beside the next run of each seed, which starts from the route cache."""
    rep.heading("Repeated runs: the route-metric cache")
    rep.paragraph(
        "Linux 2.6.16 saves each connection's ssthresh in the route cache at close (`tcp_update_metrics`) and "
        "the next connection to the same host starts from it (`tcp_init_metrics`); with BIC's initial_ssthresh "
        "at 0 nothing overrides it, so a second iperf run within the cache's life starts differently (EVIDENCE.md §2). "
        "Each seed's first run below is followed by such a second run; the paper does not say which run its figures show."
    )
    verdicts = {"first run": [], "repeated run": []}  # type: dict[str, list[dict[str, bool]]]
    rows = []
    for k, (sim, stag) in enumerate(zip(data["simultaneous"], data["staggered"], strict=True)):
        wsim, wstag = data["simultaneous_repeated"][k], data["staggered_repeated"][k]
        verdicts["first run"].append(judge(sim, stag))
        verdicts["repeated run"].append(judge(wsim, wstag))
        rows.append((
            sim["seed"], f"{sim['jain']:.3f} → {wsim['jain']:.3f}", f"{_t(sim['first_loss_s'])} → {_t(wsim['first_loss_s'])}",
            f"{''.join(map(str, sim['first_loss_order']))} → {''.join(map(str, wsim['first_loss_order']))}",
            f"{stag['jain']:.4f} → {wstag['jain']:.4f}", f"{stag['util']:.3f} → {wstag['util']:.3f}",
            f"{_t(stag['first_loss_s'])} → {_t(wstag['first_loss_s'])}",
        ))
    rep.table(("seed", "simultaneous Jain", "first loss (s)", "loss order", "staggered Jain", "staggered util",
               "staggered first loss (s)"), rows)
    counts = [
        (run, *(f"{sum(v[key] for v in vs)}/{len(vs)}" for key in FINDINGS)) for run, vs in verdicts.items()
    ]
    rep.table(("", *FINDINGS.values()), counts)


def _map_section(rep: Report, data: dict[str, Any]) -> None:
    """The map of the unknowns: what was swept, where each finding holds, the full table."""
    mp = data["plan"]["map"]
    table = map_table(data["map"])
    rep.heading("Where each finding holds: the map of the unknowns")
    rep.paragraph(
        f"The simultaneous and the staggered start over bottleneck buffers {', '.join(map(str, mp['buffers']))} packets × receiver ACK "
        f"behaviour ({', '.join(mp['acks'])}) × BIC initial_ssthresh ({', '.join(str(s or 'none') for s in mp['ssthresholds'])}) "
        f"at a {mp['skews_s'][0] * 1e3:g} ms start skew"
        + (f", and skews {', '.join(f'{k * 1e3:g}' for k in mp['skews_s'][1:])} ms at the first ACK behaviour without ssthresh"
           if len(mp["skews_s"]) > 1 else "")
        + f"; {len(mp['seeds'])} seeds × {mp['duration_s']:g} s per point "
        f"(findings judged over {mp['window'][0]:g}–{mp['window'][1]:g} s). "
        "ACKs: `every` = each data segment ACKed while the receive window grows (tcp_rmem[2] unbounded, the shipped model); "
        "`every→delayed` = the same until rcv_ssthresh passes ⅜ of a 256 MB tcp_rmem[2], then every second segment; "
        "`delayed` = every second segment from the start (no window growth). See `map_findings.png`."
    )
    lines = []
    for key, meaning in FINDINGS.items():
        where = [p for p in table if 2 * p[key] > p["runs"]]
        lines.append(f"**{meaning}**: " + ("; ".join(
            f"{point_label(p['ack'], p['ssthresh'], p['skew_s'])}, {p['buffer_pkts']} pkts ({p[key]}/{p['runs']})" for p in where
        ) if where else "at no point of the map"))
    rep.bullets(lines)
    best = max(p["majority"] for p in table)
    tops = [p for p in table if p["majority"] == best]
    rep.paragraph(
        f"Most findings held at one point: {best} of {len(FINDINGS)}, at "
        + "; ".join(f"{point_label(p['ack'], p['ssthresh'], p['skew_s'])}, {p['buffer_pkts']} pkts" for p in tops) + "."
    )
    header = ("ACKs", "ssthresh", "skew (ms)", "buffer", *FINDINGS, "majority", "Jain", "util", "first loss (s)",
              "staggered Jain", "staggered util")
    rows = [
        (p["ack"], p["ssthresh"] or "none", f"{p['skew_s'] * 1e3:g}", p["buffer_pkts"],
         *(f"{p[k]}/{p['runs']}" for k in FINDINGS), p["majority"], f"{p['jain']:.3f}", f"{p['util']:.3f}",
         _t(p["first_loss_s"]), f"{p['staggered_jain']:.3f}", f"{p['staggered_util']:.3f}")
        for p in table
    ]
    rep.table(header, rows)
