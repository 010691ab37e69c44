"""Study 002's figures and report.md, from the data `study.experiment` returns."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce.figures import new_figure, write_figures
from tcplab.reproduce.findings import Check
from tcplab.reproduce.p2.checks import SETUP, findings_table, fla_delayed
from tcplab.reproduce.p2.constants import COMET_READINGS, MAP_UNKNOWNS, NIC_SHIPPED, POS_IP_MBPS, SEED_FILE, STUDY
from tcplab.reproduce.report import Report

__all__ = ["report", "write_figures_p2"]


def _median(t: pl.DataFrame, col: str, **where: Any) -> float:
    """The median of `col` over the rows matching `where`; runs without the value (a measure of
    the first loss in a run without loss) are left out, and none at all gives NaN."""
    for k, v in where.items():
        t = t.filter(pl.col(k) == v)
    values = [x for x in t[col].to_list() if x is not None]
    return statistics.median(values) if values else float("nan")


def _fig_fla(fla: pl.DataFrame) -> Any:
    """Figs. 6–7: aggregate rate per i×j×k shape at 200 ms, one line per path loss."""
    fig, (ax,) = new_figure()
    shapes = fla.filter((pl.col("rtt_ms") == 200) & (pl.col("nic") == NIC_SHIPPED)).select("servers", "disks").unique(maintain_order=True).rows()
    for loss in sorted(set(fla["loss"].to_list())):
        ys = [_median(fla, "agg_mbps", servers=j, disks=k, loss=loss, rtt_ms=200, nic=NIC_SHIPPED) for j, k in shapes]
        ax.plot(range(len(shapes)), ys, "o-", label=f"path loss {loss:g}")
    ax.set_xticks(range(len(shapes)), [f"1×{j}×{k}" for j, k in shapes])
    ax.set_ylabel("aggregate rate, file bytes (Mb/s, median over seeds)")
    ax.set_title("Figs. 6–7: FLA, 200 ms, remote access")
    ax.legend(fontsize=8)
    return fig


def _fig_streams(fla: pl.DataFrame, loss: float) -> Any:
    """Figs. 9–10 in summary: each stream's completion time, per seed, for 1×2×1 and 1×4×2."""
    fig, (ax,) = new_figure()
    for x, (j, k) in enumerate(((2, 1), (4, 2))):
        part = fla.filter((pl.col("servers") == j) & (pl.col("disks") == k) & (pl.col("loss") == loss) & (pl.col("rtt_ms") == 200) & (pl.col("nic") == NIC_SHIPPED))
        for seed, fin in zip(part["seed"].to_list(), part["stream_finish_s"].to_list(), strict=True):
            ax.plot([x + 0.02 * seed] * len(fin), fin, "_", ms=12)
    ax.set_xticks([0, 1], ["1×2×1", "1×4×2"])
    ax.set_ylabel("stream completion time (s), one mark per stream and seed")
    ax.set_title(f"Stragglers: completion of each stream, path loss {loss:g}")
    return fig


def _fig_scaling(sc: pl.DataFrame) -> Any:
    """Fig. 11: IP rate over the bottleneck against the disk servers j (1×j×2)."""
    fig, (ax,) = new_figure()
    js = sorted(set(sc["servers"].to_list()))
    ax.plot(js, [_median(sc, "ip_mbps", servers=j) for j in js], "o-", label="median over seeds")
    for seed in sorted(set(sc["seed"].to_list())):
        part = sc.filter(pl.col("seed") == seed).sort("servers")
        ax.plot(part["servers"], part["ip_mbps"], ".", color="grey", ms=4)
    ax.axhline(POS_IP_MBPS, ls="--", color="k", lw=0.8, label=f"bottleneck {POS_IP_MBPS:.2f} Mb/s")
    ax.set_xlabel("disk servers j (1×j×2)")
    ax.set_ylabel("IP rate over the bottleneck (Mb/s)")
    ax.set_title("Fig. 11: SC2002, exclusive")
    ax.legend(fontsize=8)
    return fig


def _readings(comet: pl.DataFrame) -> list[tuple[str, dict[str, Any]]]:
    """The Comet Drop readings `comet` has rows of (--quick runs two), in COMET_READINGS order."""
    present = set(comet["reading"].to_list())
    return [(r, meta) for r, meta in COMET_READINGS.items() if r in present]


def _fig_comet(comet: pl.DataFrame) -> Any:
    """Fig. 12: rate against RTT through Comet Drop, per reading."""
    fig, (ax,) = new_figure()
    rtts = sorted(set(comet["rtt_ms"].to_list()))
    for r, meta in _readings(comet):
        ax.plot(rtts, [_median(comet, "agg_mbps", reading=r, rtt_ms=x) for x in rtts], "o-", label=meta["label"])
    ax.set_yscale("log")
    ax.set_xlabel("RTT through Comet Drop (ms)")
    ax.set_ylabel("rate, file bytes (Mb/s, median)")
    ax.set_title("Fig. 12: 1×1×1 against delay")
    ax.legend(fontsize=7)
    return fig


def _fig_traced(loss: float, seed: int = 1) -> Any:
    """Figs. 9–10: the 1×2×1 transfer of `fla_traced.toml` (seed `seed`, path loss `loss`) as the
    paper's tcpdump shows it — each stream's sequence number against time, and its outstanding
    data (highest sequence sent − highest ACK, at the sender's NIC) with the sender's cwnd."""
    import tcplab
    from tcplab.reproduce.p2.runs import CAPTURED
    from tcplab.reproduce.scenarios import study_scenario

    r = tcplab.run(study_scenario(STUDY, "fla_traced"), seed=seed, overrides={**CAPTURED, "emulators.0.loss": loss})
    cap, cwnd = r.traces["capture"], r.traces["cwnd"]
    fig, (ax_seq, ax_out) = new_figure(2, sharex=True)
    for f, name in zip(r.flows["id"].to_list(), ("disk1", "disk2"), strict=False):
        c = cap.filter(pl.col("flow") == f).sort("time_s", maintain_order=True)
        data = c.filter((pl.col("dir") == 0) & (pl.col("len") > 0))
        acks = c.filter(pl.col("dir") == 1).select("time_s", pl.col("ack").cum_max().alias("acked"))
        top = data.select("time_s", (pl.col("seq") + pl.col("len")).cum_max().alias("top"))
        out = top.join_asof(acks, on="time_s").with_columns(pl.col("acked").fill_null(1))
        step = max(1, out.height // 4000)
        thin = out.gather_every(step)
        line, = ax_seq.plot(thin["time_s"], thin["top"] / 1e6, lw=0.8, label=name)
        ax_out.plot(thin["time_s"], (thin["top"] - thin["acked"]) / 1e6, lw=0.6, color=line.get_color(), label=f"{name}: outstanding")
        w = cwnd.filter(pl.col("flow") == f)
        w = w.gather_every(max(1, w.height // 4000))
        ax_out.plot(w["time_s"], w["cwnd_bytes"] / 1e6, lw=0.6, ls=":", color=line.get_color(), label=f"{name}: cwnd")
    ax_seq.set_ylabel("sequence number (MB)")
    ax_seq.set_title(f"Figs. 9–10: 1×2×1 over the FLA path, path loss {loss:g}, seed {seed}")
    ax_seq.legend(fontsize=8)
    ax_out.set_ylabel("outstanding data, cwnd (MB)")
    ax_out.set_xlabel("time (s)")
    ax_out.legend(fontsize=7, ncol=2)
    return fig


def write_figures_p2(data: dict[str, Any], out: Path) -> dict[str, Any]:
    """Draw and write every figure into `out`; returns them by name."""
    figs = {
        "fig6_fla_aggregate": _fig_fla(fla_delayed(data)),
        "fig9_stream_completion": _fig_streams(fla_delayed(data), max(data["plan"]["fla_losses"])),
        "fig9_10_traced": _fig_traced(max(data["plan"]["fla_losses"])),
        "fig11_scaling": _fig_scaling(data["sc"]),
        "fig12_delay": _fig_comet(data["comet"]),
    }
    write_figures(figs, out)
    return figs


def report(data: dict[str, Any], result: list[Check], figs: dict[str, Any]) -> Report:
    """report.md: the paper's findings (every one, not-run ones included), the set-up sentences,
    the NIC-queue reading both ways, every point's medians, the figures."""
    plan = data["plan"]
    rep = Report("Study 002 reproduced: the Data Reservoir over a 200 ms path")
    rep.paragraph(
        f"Seeds {', '.join(map(str, plan['seeds']))}; scenarios `scenarios/p2_data_reservoir/` (README: every value with the "
        "paper's sentence, every assumption with its evidence; EVIDENCE.md and FINDINGS.md beside them). Rates are file bytes "
        "over the time taken (the paper's §4 s1) unless named IP (bytes over the bottleneck) or L2 (IP + 14 bytes per packet). "
        "An order holds in ≥ 80 % of seeds with the medians further apart than the larger IQR; a level holds with the median "
        "in its band and the band wider than the IQR (decided before the runs, FINDINGS.md). Findings whose mechanism is not "
        "built are listed as NOT RUN and count as not holding."
    )
    rep.paper_findings(result, SEED_FILE)
    rep.heading("Calibrations (reported, not judged)")
    rep.paragraph("A number of the paper that calibrates an unknown the paper does not describe; it is not counted above.")
    rep.checks([c for c in result if not c.paper], header=("figure", "the paper", "measured", "near"))
    rows = findings_table()
    rep.heading("Set-up sentences (no check)")
    rep.bullets(f"{f} ({rows[f]['place']}): 「{rows[f]['quote']}」 — {rows[f]['gist']}" for f in SETUP)
    _copy_section(rep, data)
    _nic_section(rep, data)
    _map_section(rep, data)
    _slow_start_section(rep, data)
    _coupled_section(rep, data)
    rep.heading("Every point (medians over seeds)")
    fla = fla_delayed(data)
    points = fla.select("servers", "disks", "loss", "rtt_ms", "nic").unique(maintain_order=True).rows()
    rep.table(("shape", "path loss", "RTT (ms)", "NIC queue", "aggregate Mb/s", "IP Mb/s", "avg/peak", "stream CV", "stragglers", "retx rate", "RTOs"), [
        (f"1×{j}×{k}", f"{p:g}", rtt, nic, *(f"{_median(fla, c, servers=j, disks=k, loss=p, rtt_ms=rtt, nic=nic):.3g}"
                                           for c in ("agg_mbps", "ip_mbps", "avg_over_peak", "stream_cv", "tail", "retx_rate", "timeouts")))
        for j, k, p, rtt, nic in points])
    every = data["fla"].filter((pl.col("servers") == 4) & (pl.col("disks") == 2) & (pl.col("rtt_ms") == 200) & (pl.col("nic") == NIC_SHIPPED))
    growth = every.with_columns(pl.col("s_ss_growth").list.drop_nulls().list.mean().alias("ss_growth"))
    rep.table(("1×4×2, 200 ms: receiver ACKs", "path loss", "aggregate Mb/s", "slow-start growth per RTT", "last/median completion", "retx rate"), [
        (ack, f"{p:g}", *(f"{_median(growth, c, ack=ack, loss=p):.3g}" for c in ("agg_mbps", "ss_growth", "last_over_median", "retx_rate")))
        for ack in ("delayed", "every") for p in sorted(set(every.filter(pl.col("ack") == ack)["loss"].to_list()))])
    sc = data["sc"]
    rep.table(("1×j×2, j", "IP Mb/s", "utilisation", "stream CV", "retx rate"), [
        (j, f"{_median(sc, 'ip_mbps', servers=j):.1f}", f"{_median(sc, 'ip_mbps', servers=j) / POS_IP_MBPS:.3f}",
         f"{_median(sc, 'stream_cv', servers=j):.3f}", f"{_median(sc, 'retx_rate', servers=j):.2e}") for j in sorted(set(sc["servers"].to_list()))])
    sh = data["shared"]
    rep.table(("cross flows beside 1×26×2", "Data Reservoir Mb/s", "bottleneck IP Mb/s", "stream CV"), [
        (n, f"{_median(sh, 'agg_mbps', cross=n):.1f}", f"{_median(sh, 'ip_mbps', cross=n):.1f}", f"{_median(sh, 'stream_cv', cross=n):.3f}")
        for n in sorted(set(sh["cross"].to_list()))])
    comet = data["comet"]
    rep.table(("Comet Drop reading", *(f"{r} ms" for r in sorted(set(comet["rtt_ms"].to_list())))), [
        (meta["label"], *(f"{_median(comet, 'agg_mbps', reading=r, rtt_ms=x):.3g}" for x in sorted(set(comet["rtt_ms"].to_list()))))
        for r, meta in _readings(comet)])
    rep.paragraph(f"{data['sc_full_label']}: IP {_median(data['sc_full'], 'ip_mbps'):.1f} Mb/s, L2 {_median(data['sc_full'], 'l2_mbps'):.1f} Mb/s, "
                  f"aggregate {_median(data['sc_full'], 'agg_mbps'):.1f} Mb/s over {_median(data['sc_full'], 'span_s'):.0f} s simulated.")
    rep.heading("Wall time")
    batch = data.get("batch")
    if batch is not None:
        rep.paragraph(f"{data['wall_s']:.1f} s of wall time for the runs: {batch['executed']:,} runs executed on one pool "
                      f"({batch['run_s']:.1f} worker seconds), {batch['reused']:,} found in the store. Worker seconds per experiment "
                      "(a run two experiments share counts in both):")
    rep.table(("experiment", "runs", "worker s"), [(k, v["runs"], f"{v['run_s']:.1f}") for k, v in data["walls"].items()])
    rep.heading("Figures")
    rep.bullets(f"`{name}.png` / `.svg`" for name in figs)
    return rep


def _nic_section(rep: Report, data: dict[str, Any]) -> None:
    """A12 both ways: the senders' NIC queue as shipped (356 packets; a refused segment kept
    unsent and the window reduced, as Linux 2.4) and unlimited (never refused), at 200 ms for the
    largest shape."""
    fla = fla_delayed(data)
    rep.heading("The senders' NIC queue, both readings (A12)")
    rep.paragraph(
        "Linux 2.4.17 gives an Ethernet device 100 packets of queue (`ether_setup`) and the FLA hosts' GA620 driver (acenic) a "
        "256-entry TX ring (`TX_RING_ENTRIES`), and a segment its qdisc refuses is not "
        "lost: `tcp_write_xmit` stops with the segment unsent and `tcp_transmit_skb` calls `tcp_enter_cwr` (ssthresh halved). "
        "The linux-2.4.18 profile does the same (`tcp.local_congestion = \"cwr\"`: the refused segment goes later, the "
        "window is cut once per window, nothing is retransmitted for it). The shipped scenarios keep the 356 packets; the "
        "other reading has no limit, so the sender is never refused. Every finding above is judged at the shipped reading; "
        "this table gives the other beside it."
    )
    unl = fla.filter(pl.col("nic") == "unlimited")
    if not unl.height:
        return
    j, k = unl["servers"][0], unl["disks"][0]
    rows = []
    for p in sorted(set(unl["loss"].to_list())):
        for nic in (NIC_SHIPPED, "unlimited"):
            rows.append((f"1×{j}×{k}", f"{p:g}", nic, *(f"{_median(fla, c, servers=j, disks=k, loss=p, rtt_ms=200, nic=nic):.3g}"
                                                      for c in ("agg_mbps", "ip_mbps", "stream_cv", "tail", "retx_rate"))))
    rep.table(("shape", "path loss", "NIC queue", "aggregate Mb/s", "IP Mb/s", "stream CV", "stragglers", "retx rate"), rows)


def _map_section(rep: Report, data: dict[str, Any]) -> None:
    """The unknowns mapped one at a time on FLA's 1×4×2 at 200 ms, beside the shipped value, with
    the measures the lossy findings read (F9's stragglers, F24/F34's CV, F8's retransmissions)."""
    rep.heading("The unknowns mapped one at a time (1×4×2, 200 ms)")
    if "map" not in data:
        rep.paragraph("The full plan maps the bottleneck's buffer (A3) and the iSCSI command window (A14) here, beside the "
                      "shipped values (a report table, no finding is judged on it); --quick does not run it.")
        return
    fla, mp = fla_delayed(data), data["map"]
    rep.paragraph("Each unknown at its other values with the others as shipped; the shipped value's row is the FLA runs' own. "
                  "Medians over the seeds. A finding judged above holds or fails at the shipped value only; these rows say "
                  "whether its measure moves across the unknown's range.")
    rows = []
    for u, (label, _, values) in MAP_UNKNOWNS.items():
        for p in sorted(set(mp["loss"].to_list())):
            shipped = [f"{_median(fla, c, servers=4, disks=2, loss=p, rtt_ms=200, nic=NIC_SHIPPED):.3g}" for c in ("agg_mbps", "stream_cv", "tail", "retx_rate")]
            rows.append((label, "shipped", f"{p:g}", *shipped))
            for v in values:
                rows.append((label, str(v), f"{p:g}", *(f"{_median(mp, c, unknown=u, value=str(v), loss=p):.3g}" for c in ("agg_mbps", "stream_cv", "tail", "retx_rate"))))
    rep.table(("unknown", "value", "path loss", "aggregate Mb/s", "stream CV", "stragglers", "retx rate"), rows)


def _copy_section(rep: Report, data: dict[str, Any]) -> None:
    """Fig. 3: the conventional copy with the destination's file at each mapped position."""
    t = data["copy"]
    rep.heading("Fig. 3: the conventional copy through page caches")
    rep.paragraph("netcat moving 1 GB over GbE from one Linux 2.4.18 host's disk to another's through both page caches "
                  "(`fs_copy.toml`; read-ahead, bdflush's 40 %/60 % dirty limits, kupdate), the source's file at its disk's outer "
                  "edge and the destination's at each mapped position (not given); medians over seeds.")
    rep.table(("destination's file (0 outer … 1 inner)", "peak 1 s bin Mb/s", "average Mb/s", "average/peak", "netcat done (s)"), [
        (f"{p:g}", *(f"{_median(t, c, dst_position=p):.3g}" for c in ("peak_mbps", "avg_mbps", "avg_over_peak", "finish_s")))
        for p in sorted(set(t["dst_position"].to_list()))])


def _slow_start_section(rep: Report, data: dict[str, Any]) -> None:
    """Beyond the paper: the slow-start overshoot (§5 s7) against Limited Slow Start, HighSpeed TCP and HyStart."""
    from tcplab.reproduce.p2.runs import SLOW_STARTS
    if "slow_start" not in data:
        rep.heading("Beyond the paper: the slow-start overshoot")
        rep.paragraph("The full plan compares the shipped NewReno's slow start with Limited Slow Start, HighSpeed TCP and "
                      "HyStart here (a report table, no finding is judged on it); --quick does not run it.")
        return
    t = data["slow_start"].with_columns(
        pl.col("s_cwnd_first_loss").list.drop_nulls().list.max().alias("first_loss_cwnd_max"),
        pl.col("s_cwnd_first_loss").list.drop_nulls().list.min().alias("first_loss_cwnd_min"))
    rep.heading("Beyond the paper: the slow-start overshoot")
    rep.paragraph("§5 s7 blames the loss that ends slow start for the streams' later imbalance. FLA's 1×4×2 at 200 ms with the "
                  "shipped NewReno, with RFC 3742's Limited Slow Start (the era's remedy; max_ssthresh 100 segments, the RFC's "
                  "suggestion), with HighSpeed TCP (RFC 3649) over Limited Slow Start (proposed together in 2003) and with CUBIC's "
                  "HyStart (today's Linux), medians over seeds.")
    rep.table(("slow start", "path loss", "aggregate Mb/s", "avg/peak", "stream CV", "last/median completion", "stragglers",
               "largest / smallest cwnd at the first loss (MB)", "retx rate"), [
        (SLOW_STARTS[v][0], f"{p:g}", *(f"{_median(t, c, variant=v, loss=p):.3g}" for c in ("agg_mbps", "avg_over_peak", "stream_cv", "last_over_median", "tail")),
         f"{_median(t, 'first_loss_cwnd_max', variant=v, loss=p) / 1e6:.2f} / {_median(t, 'first_loss_cwnd_min', variant=v, loss=p) / 1e6:.2f}",
         f"{_median(t, 'retx_rate', variant=v, loss=p):.2e}")
        for v in SLOW_STARTS for p in sorted(set(t["loss"].to_list()))])


def _coupled_section(rep: Report, data: dict[str, Any]) -> None:
    """Beyond the paper: the paper's future work, the stripe's windows controlled jointly."""
    from tcplab.reproduce.p2 import runs

    cols = ("loss", "seed", "agg_mbps", "avg_over_peak", "stream_cv", "stream_finish_s", "retx_rate")
    free = fla_delayed(data).filter((pl.col("servers") == 4) & (pl.col("disks") == 2) & (pl.col("rtt_ms") == 200) & (pl.col("nic") == NIC_SHIPPED))
    both = pl.concat([free.select(*cols).with_columns(mode=pl.lit("independent")), data["coupled"].select(*cols, "mode")])
    both = both.with_columns((pl.col("stream_finish_s").list.max() / pl.col("stream_finish_s").list.min()).alias("slow_over_fast"))
    rep.heading("Beyond the paper: the streams' windows controlled jointly")
    rep.paragraph("§7 s6's future work, two ways: `decp`, the remedy the same group published next (DECP, Kamezawa et al., "
                  "SC2004; the coordinator of study 000): every 300 ms the streams in congestion avoidance whose window is "
                  "above 1.1 × their mean are pulled down to it; `lia`, RFC 6356's coupled increase (MPTCP's linked "
                  "increases) over the four streams, on every ACK. FLA's 1×4×2 at 200 ms, medians over seeds (F25, F35).")
    modes = ("independent", *runs.COORDINATION)
    rep.table(("streams", "path loss", "aggregate Mb/s", "avg/peak", "stream CV", "slowest/fastest completion", "retx rate"), [
        (m, f"{p:g}", *(f"{_median(both, c, mode=m, loss=p):.3g}" for c in ("agg_mbps", "avg_over_peak", "stream_cv", "slow_over_fast", "retx_rate")))
        for p in sorted(set(both["loss"].to_list())) for m in modes if both.filter((pl.col("mode") == m) & (pl.col("loss") == p)).height])
    comp = data["competing"]
    rep.paragraph("Beside one competing bulk TCP flow on the SC2002 path (1×4×2, 150 s; 30 s with --quick), as shipped and with "
                  "the line at 100 Mb/s and a 2.5 MB buffer so that the five flows contend (--quick: the contended line only); "
                  "medians over seeds, Mb/s.")
    rep.table(("line", "streams", "competing flow", "the four streams"), [
        (line, m, f"{_median(comp, 'others_mbps', line=line, mode=m):.1f}", f"{_median(comp, 'agg_mbps', line=line, mode=m):.1f}")
        for line in runs.COMPETING_LINES if line in set(comp["line"].to_list()) for m in runs.COMPETING_MODES])
