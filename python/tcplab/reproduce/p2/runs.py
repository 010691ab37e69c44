"""Study 002's experiments as points of the shipped scenarios, run through the shared runner
(one resumable store for the whole study, `out/runs/`, so that a run two experiments share —
the slow-start comparison's NewReno rows are Figs. 6–8's 1×4×2 runs — runs once; a local pool
or a Dask cluster), each run measured in the worker by `measures.run_measures`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce import runner
from tcplab.reproduce.p2.constants import BOTTLENECK, COMET_READINGS, MAP_UNKNOWNS, NIC_SHIPPED, STUDY
from tcplab.reproduce.scenarios import study_scenario

__all__ = ["IPV6", "run_ipv6", "COPY_POSITIONS", "run_fs_copy", "COMPETING_LINES", "COMPETING_MODES", "COORDINATION", "run_competing", "run_coupled", "PROCESSING_LIMITS", "SLOW_STARTS", "run_comet_limit", "run_slow_start", "run_comet", "run_disk_only", "run_fla", "run_local", "run_path_1x1x1", "run_sc2002", "run_traced"]

HOOK = "tcplab.reproduce.p2.measures:run_measures"


TRACED = {"trace.cwnd": True, "trace.events": True}
"""The traces the per-stream readings need (`streams`); observing a run does not change it."""


def _run(scenario: str, points: Sequence[Mapping[str, Any]], seeds: Sequence[int], *, bottleneck: str | None, name: str,
         out: Path | None = None, workers: int | None = None, cluster: Any = None, overrides: Mapping[str, Any] | None = None,
         traced: bool = False) -> pl.DataFrame:
    """`points` of `scenario` over `seeds`; with `traced`, the cwnd and events traces on and the
    per-stream readings taken (`measures.run_measures` with rtt_s "srtt-min")."""
    path = study_scenario(STUDY, scenario)
    args: dict[str, Any] = {"bottleneck": bottleneck}
    if traced:
        overrides = {**TRACED, **(overrides or {})}
        args["rtt_s"] = "srtt-min"
    return runner.run_points([(path, dict(p)) for p in points], seeds, overrides=overrides, hook=HOOK,
                             hook_args=args, out=out, shared_store=True,
                             workers=workers, cluster=cluster, name=f"p2-{name}")


def _label(table: pl.DataFrame, points: Sequence[Mapping[str, Any]], labels: Mapping[str, Sequence[Any]]) -> pl.DataFrame:
    """Add a column per label (its value for each row's point)."""
    return table.with_columns(pl.Series(k, [v[i] for i in table["index"].to_list()]) for k, v in labels.items())


PLACEMENTS = ("sequential", "scattered")
"""F4: the file's stripe units one after another on each disk (as shipped), or each at its own
slot drawn over the whole disk (`flows.reservoir.placement`)."""


def run_local(seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """Fig. 4: `local_gbe.toml` (1×4×2 local access over GbE, 1 GB) as shipped, and with the
    file scattered over the disks (F4)."""
    points = [{"flows.0.reservoir.placement": p} for p in PLACEMENTS]
    t = _run("local_gbe", points, seeds, bottleneck=None, name="local", **kw)
    return _label(t, points, {"placement": list(PLACEMENTS)})


IPV6 = {"defaults.tcp.ip_version": 6, "defaults.tcp.mss": 1440}
"""F10: the FLA path over IPv6 — 40-byte IP headers and the MSS that fits the same 1500-byte
MTU (1440, against IPv4's 1460 as shipped); everything else as shipped (the paper's IPv6 runs
took a partly different route, which this does not model: F10 asks what the protocol alone
does)."""


def run_ipv6(losses: Sequence[float], seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """F10: FLA's 1×4×2 at 200 ms at each path loss over IPv6 (`IPV6`); the IPv4 runs are
    Figs. 6–8's."""
    points = [fla_point(4, 2, p, 200, NIC_SHIPPED) | IPV6 for p in losses]
    t = _run("fla", points, seeds, bottleneck=BOTTLENECK, name="ipv6", **kw)
    return _label(t, points, {"loss": list(losses)})


COPY_POSITIONS = (0.0, 0.5, 1.0)
"""Fig. 3: where the destination's copy lies on its disk (0 = outer edge, as shipped and as the
source's; 1 = inner edge) — not given, mapped: the destination disk writes at its zone's media
rate, which decides whether its dirty limit fills."""


def run_fs_copy(seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """Fig. 3 (F2): `fs_copy.toml` — netcat copying 1 GB over GbE through both hosts' page
    caches — with the destination's copy at each of `COPY_POSITIONS`."""
    points = [{"flows.0.fs_copy.dst_position": p} for p in COPY_POSITIONS]
    path = study_scenario(STUDY, "fs_copy")
    out, workers, cluster = kw.get("out"), kw.get("workers"), kw.get("cluster")
    t = runner.run_points([(path, dict(p)) for p in points], seeds, hook="tcplab.reproduce.p2.measures:copy_measures", hook_args={},
                          out=out, shared_store=True, workers=workers, cluster=cluster, name="p2-fs-copy")
    return _label(t, points, {"dst_position": list(COPY_POSITIONS)})


def run_disk_only(seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """F22 (and F4's disk-bound reading): one disk server's disks alone — 1×1×2 local access on
    10 Gb/s links (the network far above two disks' media rate), the file at the outer and at
    the inner edge, and scattered over the disks."""
    keys = [(0.0, "sequential"), (1.0, "sequential"), (0.0, "scattered")]
    points = [{"links.0.rate": "10Gbps", "links.1.rate": "10Gbps", "flows.0.reservoir.servers": 1, "flows.0.reservoir.file": "256MiB",
               "flows.0.reservoir.file_position": p, "flows.0.reservoir.placement": pl_, "links.0.queue_a": "unlimited"} for p, pl_ in keys]
    t = _run("local_gbe", points, seeds, bottleneck=None, name="disk-only", **kw)
    return _label(t, points, {"file_position": [k[0] for k in keys], "placement": [k[1] for k in keys]})


ACKS = {"delayed": 2, "every": 1}
"""F30's receivers: Linux 2.4's delayed ACK (every 2 full segments, as the profile) or an ACK
for every segment (`defaults.tcp.delack_segments`)."""


def fla_point(servers: int, disks: int, loss: float, rtt_ms: int, nic: str, ack: str = "delayed") -> dict[str, Any]:
    """The FLA scenario as 1×`servers`×`disks`, random loss `loss` on the POS line, RTT `rtt_ms`,
    the senders' NIC queue as shipped (`nic` NIC_SHIPPED) or "unlimited", the receivers' ACKs
    `ack` (`ACKS`)."""
    one_way = rtt_ms / 2 - 0.02
    return {"flows.0.reservoir.servers": servers, "flows.0.reservoir.disks": disks, "emulators.0.loss": loss,
            "links.1.delay": f"{one_way:g}ms", "links.0.queue_a": nic, "defaults.tcp.delack_segments": ACKS[ack]}


def run_fla(shapes: Sequence[tuple[int, int]], losses: Sequence[float], rtts_ms: Sequence[int], seeds: Sequence[int], *,
            extra_losses: Sequence[float] | None = None, **kw: Any) -> pl.DataFrame:
    """Figs. 6–8 (and F24/F32's RTT comparison): every shape × loss at 200 ms, and the last
    shape (1×4×2) × loss at the other RTTs and, at 200 ms and each of `extra_losses` (default
    `losses`), with the NIC queue unlimited (A12) and with an ACK for every segment (F30);
    traced for the per-stream readings."""
    extra = losses if extra_losses is None else extra_losses
    last = shapes[-1]
    keys = [(j, k, p, rtts_ms[0], NIC_SHIPPED, "delayed") for (j, k) in shapes for p in losses]
    keys += [(*last, p, rtt, NIC_SHIPPED, "delayed") for rtt in rtts_ms[1:] for p in losses]
    keys += [(*last, p, rtts_ms[0], "unlimited", "delayed") for p in extra]
    keys += [(*last, p, rtts_ms[0], NIC_SHIPPED, "every") for p in extra]
    points = [fla_point(*key) for key in keys]
    t = _run("fla", points, seeds, bottleneck=BOTTLENECK, name="fla", traced=True, **kw)
    return _label(t, points, {"servers": [k[0] for k in keys], "disks": [k[1] for k in keys], "loss": [k[2] for k in keys],
                              "rtt_ms": [k[3] for k in keys], "nic": [k[4] for k in keys], "ack": [k[5] for k in keys]})


CAPTURED = {"taps.0.pcap": False, "taps.1.pcap": False, "taps.0.trace": True, "taps.1.trace": True}
"""fla_traced.toml's taps as the reproduction reads them: the capture trace, no pcapng files."""


def run_traced(losses: Sequence[float], seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """Figs. 9–10 (F11, F30's ACK count): `fla_traced.toml` (1×2×1 with a tap at each sender's
    NIC) at each path loss, read from its capture trace."""
    points = [{"emulators.0.loss": p} for p in losses]
    t = _run("fla_traced", points, seeds, bottleneck=BOTTLENECK, name="traced", traced=True, overrides=CAPTURED, **kw)
    return _label(t, points, {"loss": list(losses)})


def run_path_1x1x1(losses: Sequence[float], seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """F21: Fig. 12's 1×1×1 over the SC2002 path model (`sc2002.toml` as 1×1×1, 1 GB) at each
    path loss, to set beside the same transfer through Comet Drop at 200 ms."""
    points = [{"flows.0.reservoir.servers": 1, "flows.0.reservoir.disks": 1, "flows.0.reservoir.file": "1GB", "emulators.0.loss": p}
              for p in losses]
    t = _run("sc2002", points, seeds, bottleneck=BOTTLENECK, name="path-1x1x1", traced=True, **kw)
    return _label(t, points, {"loss": list(losses)})


def run_map(losses: Sequence[float], seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """The map of the unknowns (`MAP_UNKNOWNS`): FLA's 1×4×2 at 200 ms with one unknown at each of
    its other values, at every path loss (the shipped values are the FLA runs' own points)."""
    keys = [(u, v, p) for u, (_, _, values) in MAP_UNKNOWNS.items() for v in values for p in losses]
    points = [fla_point(4, 2, p, 200, NIC_SHIPPED) | {MAP_UNKNOWNS[u][1]: v} for u, v, p in keys]
    t = _run("fla", points, seeds, bottleneck=BOTTLENECK, name="map", **kw)
    return _label(t, points, {"unknown": [k[0] for k in keys], "value": [str(k[1]) for k in keys], "loss": [k[2] for k in keys]})


def run_sc2002(servers: Sequence[int], duration_s: float, seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """Fig. 11: 1×j×2 exclusive for `duration_s` simulated seconds each (the file larger than any
    run moves)."""
    points = [{"flows.0.reservoir.servers": j, "run.duration": f"{duration_s:g}s"} for j in servers]
    t = _run("sc2002", points, seeds, bottleneck=BOTTLENECK, name="sc2002-scaling", **kw)
    return _label(t, points, {"servers": list(servers)})


def run_sc2002_full(seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """§4.2 / §7: the whole 51 GB transfer, 1×26×2, exclusive, as shipped."""
    return _run("sc2002", [{}], seeds, bottleneck=BOTTLENECK, name="sc2002-51GB", **kw)


def run_shared(cross: Sequence[int], duration_s: float, seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """§4.2 s6 (and F14): `sc2002_shared.toml` with `cross` background bulk TCP flows beside the
    1×26×2 streams, `duration_s` simulated seconds each (Fig. 11's scaling runs' duration, so
    its j = 26 point is the same run without them)."""
    points = [{"flows.1.count": n, "run.duration": f"{duration_s:g}s"} for n in cross]
    t = _run("sc2002_shared", points, seeds, bottleneck=BOTTLENECK, name="sc2002-shared", **kw)
    return _label(t, points, {"cross": list(cross)})


def run_comet(rtts_ms: Sequence[int], seeds: Sequence[int], readings: Sequence[str] = tuple(COMET_READINGS), **kw: Any) -> pl.DataFrame:
    """Fig. 12: 1×1×1 through Comet Drop at each RTT (delay = RTT/2 each way), per reading of
    `readings` (keys of COMET_READINGS; all by default)."""
    keys = [(r, rtt) for r in readings for rtt in rtts_ms]
    points = [dict(COMET_READINGS[r]["overrides"]) | {"emulators.0.delay": f"{rtt / 2:g}ms"} for r, rtt in keys]
    t = _run("comet", points, seeds, bottleneck=None, name="comet", traced=True, **kw)
    return _label(t, points, {"reading": [k[0] for k in keys], "rtt_ms": [k[1] for k in keys]})


SLOW_STARTS = {
    "newreno": ("Linux 2.4: NewReno, RFC 5681 slow start (as shipped)", {"defaults.tcp.cc": "newreno", "defaults.tcp.newreno.max_ssthresh": 0, "defaults.tcp.abc_limit": 0}),
    "lss": ("NewReno with Limited Slow Start (RFC 3742, max_ssthresh 100 segments)",
            {"defaults.tcp.cc": "newreno", "defaults.tcp.newreno.max_ssthresh": 100, "defaults.tcp.abc_limit": 0}),
    "highspeed": ("HighSpeed TCP (RFC 3649) with Limited Slow Start (RFC 3742, max_ssthresh 100 segments)",
                  {"defaults.tcp.cc": "highspeed", "defaults.tcp.highspeed.max_ssthresh": 100, "defaults.tcp.abc_limit": 0}),
    "cubic": ("CUBIC with HyStart (today's Linux answer; byte counting L = 1)", {"defaults.tcp.cc": "cubic", "defaults.tcp.newreno.max_ssthresh": 0, "defaults.tcp.abc_limit": 1}),
}
"""Beyond the paper: the slow-start overshoot that seeds the streams' imbalance (§5 s7), against
the remedies of the paper's era — RFC 3742's Limited Slow Start, and HighSpeed TCP (RFC 3649)
with it, as Floyd proposed the two together in 2003 (the paper cites neither; it cites
RFC 2581 and the window-tuning work of its refs. [9], [10]) — and today's (CUBIC's HyStart)."""


def run_slow_start(losses: Sequence[float], seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """FLA's 1×4×2 at 200 ms at each path loss with each slow start of `SLOW_STARTS`, traced."""
    keys = [(v, p) for v in SLOW_STARTS for p in losses]
    points = [fla_point(4, 2, p, 200, NIC_SHIPPED) | SLOW_STARTS[v][1] for v, p in keys]
    t = _run("fla", points, seeds, bottleneck=BOTTLENECK, name="slow-start", traced=True, **kw)
    return _label(t, points, {"variant": [k[0] for k in keys], "loss": [k[1] for k in keys]})


PROCESSING_LIMITS = ("400Mbps", "200Mbps", "100Mbps")
"""F19: Comet Drop's processing limit (unknown, mapped): a rate limit in the data direction, i.e.
32.9k, 16.4k and 8.2k full-size (1,518-byte) frames per second; as shipped it forwards at line
rate."""


def run_comet_limit(limits: Sequence[str], rtts_ms: Sequence[int], seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """F19: `comet.toml` as shipped with each processing limit at each RTT (the unlimited runs
    are Fig. 12's)."""
    keys = [(lim, rtt) for lim in limits for rtt in rtts_ms]
    points = [{"emulators.0.rate": lim, "emulators.0.delay": f"{rtt / 2:g}ms"} for lim, rtt in keys]
    t = _run("comet", points, seeds, bottleneck=None, name="comet-limit", **kw)
    return _label(t, points, {"limit": [k[0] for k in keys], "rtt_ms": [k[1] for k in keys]})


COORDINATION = {
    "decp": [{"kind": "decp", "flows": ["dr"], "interval": "300ms", "tolerance": 0.1}],
    "lia": [{"kind": "lia", "flows": ["dr"]}],
}
"""The paper's future work, joint window control of the stripe's streams (§7 s6), two ways:
`decp`, the equalise-toward-the-mean remedy the same group published next (DECP, Kamezawa et
al., SC2004; study 000's coordinator: every 300 ms the streams in congestion avoidance above
1.1 × the mean window are pulled down to the mean); `lia`, RFC 6356's coupled increase over
the streams (MPTCP's linked increases, on every ACK)."""


def run_coupled(losses: Sequence[float], seeds: Sequence[int], **kw: Any) -> pl.DataFrame:
    """F25/F35: FLA's 1×4×2 at 200 ms at each path loss with the streams' windows coordinated
    each way of `COORDINATION` (column `mode`); the independent runs are Figs. 6–8's."""
    keys = [(m, p) for m in COORDINATION for p in losses]
    points = [{**fla_point(4, 2, p, 200, NIC_SHIPPED), "coordinators": COORDINATION[m]} for m, p in keys]
    t = _run("fla", points, seeds, bottleneck=BOTTLENECK, name="coupled", traced=True, **kw)
    return _label(t, points, {"mode": [k[0] for k in keys], "loss": [k[1] for k in keys]})


COMPETING_MODES = ("independent", *COORDINATION)
"""F35's competing-flow runs: the streams independent, then each coordination."""


COMPETING_LINES = {"599.04Mbps": {}, "100Mbps": {"links.2.rate": "100Mbps", "links.2.queue": "2.5MB"}}
"""F35's lines for the competing-flow runs: the SC2002 path as shipped (which four streams and
one competing flow do not fill in 150 s: the competing flow's rate is its own slow start's
whatever the streams do), and the same path with the line at 100 Mb/s and a buffer of one
bandwidth-delay product (2.5 MB), where the five flows contend — beyond the paper, chosen so
that the comparison can tell."""


def run_competing(duration_s: float, seeds: Sequence[int], *, lines: Sequence[str] = tuple(COMPETING_LINES), **kw: Any) -> pl.DataFrame:
    """F35's second half: 1×4×2 beside one competing bulk TCP flow on the SC2002 path
    (`sc2002_shared.toml` with 4 servers and 1 cross flow), `duration_s` simulated seconds,
    with the streams independent and coordinated each way (column `mode`), on each of `lines`
    (names of `COMPETING_LINES`, all by default; column `line`)."""
    unknown = [line for line in lines if line not in COMPETING_LINES]
    if unknown:
        raise ValueError(f"lines: {unknown} not among COMPETING_LINES {list(COMPETING_LINES)}")
    keys = [(line, m) for line in lines for m in COMPETING_MODES]
    points = [{"flows.0.reservoir.servers": 4, "flows.1.count": 1, "run.duration": f"{duration_s:g}s",
               "coordinators": COORDINATION.get(m, []), **COMPETING_LINES[line]} for line, m in keys]
    t = _run("sc2002_shared", points, seeds, bottleneck=BOTTLENECK, name="competing", **kw)
    return _label(t, points, {"line": [k[0] for k in keys], "mode": [k[1] for k in keys]})
