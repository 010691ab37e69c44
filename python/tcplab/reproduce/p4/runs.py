"""Study 004's runs: the points (`Spec`), run through the shared runner on the sweep runner,
their summary, and the traced runs at the sender (Table 2 and Figs. 3–4).

A point (`Spec`) is one setting of the shipped `atm.toml` (or `tcp_vs_tcp.toml`): MSS, socket
buffer, the UBR cell buffer the port gets, the CBR rate and unit, the discard policy. Points
are run as one zipped sweep axis per group of points that set the same keys; two points that
resolve to the same scenario are run once (an effective buffer f·B is the same run as a
configured buffer f·B). A run's throughput is netperf's: bytes delivered in the 10 s ×8/10 s.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce.p4.atm import cells_per_packet, ceiling_mbps, deadlock_mbps, link_deadlock_mbps, window_bytes
from tcplab.reproduce.p4.constants import (
    CRITERIA,
    DEADLOCK_FRACTION,
    DURATION_S,
    KEYS,
    METRICS,
    PORT,
    PORT_NAME,
    PORT_TAP,
    PROFILE,
    SENDER_TAP,
    SENDER_TCP,
    STALL_S,
    STUDY,
    TRACE_OVERRIDES,
    WARMUP_S,
)
from tcplab.reproduce.runner import run_points
from tcplab.reproduce.scenarios import study_scenario

__all__ = ["Spec", "analyse_trace", "cells_per_wall_s", "cells_through", "key", "lookup", "run_specs", "summarise", "table2_traces", "traced_run"]


@dataclasses.dataclass(frozen=True)
class Spec:
    """One point: a setting of the shipped scenario."""

    mss: int
    sock: int
    """Socket buffer (send and receive), bytes as configured (K = 1024, README A7)."""
    cells: int
    """UBR cell buffer the port gets (an effective buffer already applied)."""
    cbr_mbps: float = 60.0
    unit: str = "cell"
    discard: str = "tail-drop"
    epd: int = 0
    """EPD threshold, cells (with discard = "epd")."""
    scenario: str = "atm"
    burst: int = 1
    """CBR cells per burst (1: evenly spaced, the shipped reading; README A4)."""

    def overrides(self) -> dict[str, Any]:
        """The dotted overrides that make this point of the shipped scenario."""
        # The profile applies BSD's rule (rounded up to whole MSS; below one MSS, the MSS
        # shrinks to the buffer).
        buf = self.sock
        o: dict[str, Any] = {f"{SENDER_TCP}.mss": self.mss, f"{SENDER_TCP}.sndbuf": f"{buf}B", f"{SENDER_TCP}.rcvbuf": f"{buf}B",
                             f"{PORT}.cells": self.cells}
        if self.scenario == "atm":
            o[f"{PORT}.cbr"] = f"{round(self.cbr_mbps, 4):g}Mbps"
            if self.unit != "cell":
                o[f"{PORT}.cbr_unit"] = self.unit
            if self.burst > 1:
                o[f"{PORT}.cbr_burst"] = self.burst
        if self.discard != "tail-drop":
            o[f"{PORT}.discard"] = self.discard
        if self.discard == "epd":
            o[f"{PORT}.epd_threshold"] = self.epd
        return o

    @property
    def ceiling(self) -> float:
        """UBR's ceiling at this point (Mb/s of payload; all flows together)."""
        return ceiling_mbps(self.cbr_mbps if self.scenario == "atm" else 0.0, self.mss, self.unit)


def run_specs(specs: Iterable[Spec], seeds: Sequence[int], *, out: Path | None = None, workers: int | None = None,
              cluster: Any = None, name: str = "p4", tcp: Mapping[str, Any] | None = None,
              extra: Mapping[str, Any] | None = None) -> pl.DataFrame:
    """Run every point over `seeds` through the shared runner (stores in `out/<scenario>/`);
    one row per (point, seed) with the point's fields, `throughput_mbps` (all flows), the
    counters of `METRICS` and `wall_time_s`. Points that resolve to the same overrides run
    once. `tcp` adds keys to every run's `[defaults.tcp]` after `PROFILE` (a mechanism mapped
    by `p4.depth`), `extra` further overrides for every run (e.g. `hosts.1.jitter`). Raises
    RunsFailed if a run failed."""
    unique = list(dict.fromkeys(specs))
    if not unique:
        return pl.DataFrame()
    points = [(study_scenario(STUDY, s.scenario), s.overrides()) for s in unique]
    table = run_points(points, seeds, overrides={"defaults.tcp": {**PROFILE, **(tcp or {})}, "trace": {}, **(extra or {})},
                       metrics=METRICS, out=out, workers=workers, cluster=cluster, name=name)
    at = [unique[i] for i in table["index"]]
    fields = pl.DataFrame({f.name: [getattr(s, f.name) for s in at] for f in dataclasses.fields(Spec)})
    t = fields.hstack(table.select(pl.col("seed").cast(pl.Int64), "wall_time_s", *METRICS))
    return t.with_columns((pl.col("delivered") * 8 / DURATION_S / 1e6).alias("throughput_mbps"),
                          (pl.col("least_delivered") * 8 / DURATION_S / 1e6).alias("least_flow_mbps"))


def summarise(table: pl.DataFrame, by: Sequence[str] = KEYS) -> pl.DataFrame:
    """Per point: the mean throughput over the seeds (and its smallest and largest run), the
    ceiling, the share of it, the deadlock line and verdict (mean ≤ 2 % of the ceiling), the
    mean counters and the runs."""
    by = [c for c in by if c in table.columns]
    s = table.group_by(by, maintain_order=True).agg(
        pl.col("throughput_mbps").mean().alias("mbps"), pl.col("throughput_mbps").min().alias("mbps_min"),
        pl.col("throughput_mbps").max().alias("mbps_max"), pl.col("least_flow_mbps").mean(),
        pl.col("timeouts").mean(), pl.col("fast_retransmits").mean(), pl.col("cells_dropped").mean(),
        pl.col("cells_discarded").mean(), pl.col("frames_damaged").mean(), pl.col("frames_discarded").mean(),
        pl.col("segments").mean(), pl.len().alias("runs"))
    ceilings = [Spec(**{k: r[k] for k in KEYS}).ceiling for r in s.select(KEYS).iter_rows(named=True)] if s.height else []
    return s.with_columns(pl.Series("ceiling_mbps", ceilings, dtype=pl.Float64)).with_columns(
        (pl.col("mbps") / pl.col("ceiling_mbps")).alias("share"),
        (DEADLOCK_FRACTION * pl.col("ceiling_mbps")).alias("deadlock_line_mbps"),
        (pl.col("mbps") <= DEADLOCK_FRACTION * pl.col("ceiling_mbps")).alias("deadlock"),
        (pl.col("mbps") <= link_deadlock_mbps()).alias("deadlock_link"),
    )


def lookup(summary: pl.DataFrame) -> Mapping[tuple[Any, ...], dict[str, Any]]:
    """A summary's rows by their point (the `KEYS` values)."""
    return {tuple(r[k] for k in KEYS): r for r in summary.iter_rows(named=True)}


def key(s: Spec) -> tuple[Any, ...]:
    """A point's `KEYS` values (to look it up in `lookup`)."""
    return tuple(getattr(s, k) for k in KEYS)


def cells_through(table: pl.DataFrame) -> float:
    """UBR data cells the runs offered to the switch ports: segments sent × cells per full
    segment (every segment counted as full; the ACKs' cells left out)."""
    if table.height == 0:
        return 0.0
    return float((table["segments"] * pl.Series([cells_per_packet(m) for m in table["mss"]])).sum())


def cells_per_wall_s(table: pl.DataFrame) -> list[float]:
    """Per run, the UBR data cells it offered (as `cells_through`) per second of its own wall
    time: each run is one process on one core, so this is cells per wall second per core."""
    if table.height == 0:
        return []
    cells = table["segments"] * pl.Series([cells_per_packet(m) for m in table["mss"]])
    return [c / w for c, w in zip(cells.to_list(), table["wall_time_s"].to_list(), strict=True) if w and w > 0]


# ---- Table 2 and Figs. 3–4: traced runs at the sender ----------------------------------------


def traced_run(spec: Spec, seed: int) -> dict[str, Any]:
    """Run one point with the sender's capture and analyse it (`analyse_trace`)."""
    from tcplab.run import run

    r = run(str(study_scenario(STUDY, spec.scenario)), seed=seed,
            overrides={"defaults.tcp": dict(PROFILE), **spec.overrides(), **TRACE_OVERRIDES})
    events = r.trace("events")
    names = events["kind_name"].to_list() if events.height else []
    flow = r.flows.row(0, named=True)
    port = r.queues.filter(pl.col("name") == PORT_NAME).row(0, named=True)
    capture = r.trace("capture")
    out = analyse_trace(capture.filter(pl.col("tap") == SENDER_TAP), [t for t, k in zip(events["time_s"].to_list(), names, strict=True) if k == "timeout"],
                        window_bytes(spec.sock, spec.mss), spec.mss, capture.filter(pl.col("tap") == PORT_TAP))
    out.update({"seed": seed, "sock": spec.sock, "cells": spec.cells, "mbps": flow["bytes_delivered"] * 8 / DURATION_S / 1e6,
                "timeouts": flow["timeouts"], "fast_retransmits": flow["fast_retransmits"], "cells_dropped": port["cells_dropped"],
                "deadlock": flow["bytes_delivered"] * 8 / DURATION_S / 1e6 <= deadlock_mbps(spec.cbr_mbps, spec.mss, spec.unit)})
    return out


def analyse_trace(capture: pl.DataFrame, timeouts: list[float], window: int, mss: int,
                  port: pl.DataFrame | None = None) -> dict[str, Any]:
    """What Figs. 3–4 and §3.2 read from the sender's trace: new segments sent per ACK
    received, bytes each ACK acknowledges, the outstanding data after each ACK against the
    socket window, stalls (and whether a timeout ended them and whether the switch port was
    empty through them), whether a lost segment was sent with room left in the window, and
    (time, sequence) of every data segment (thinned to ≈ 3000).

    `port` is the capture of the tap on the switch port's link, in the port's direction: the
    frames that left the port towards the receiver (None: not tapped, no stall counted empty).
    The port is work-conserving — it sends a UBR cell in every slot CBR leaves free while it
    holds one — so it was empty through a stall exactly when nothing left it. The tap reports
    only the frames the receiver reassembles, not the cells of a damaged one; but the port is
    one FIFO fed by the sender alone, so once the last segment sent before the stall has left
    it whole, nothing (damaged frames included) is behind it. A stall is counted empty when that
    segment left the port before the stall began and no frame left it during the stall (after
    its last packet on the sender's link and before its next)."""
    c = capture.sort("time_s")
    data = c.filter((pl.col("dir") == 0) & (pl.col("len") > 0))
    acks = c.filter((pl.col("dir") == 1) & (pl.col("len") == 0))
    d_t, d_end = data["time_s"].to_list(), (data["seq"] + data["len"]).to_list()
    d_new = [int(x) == 0 for x in data["retransmit"].to_list()]
    a_t, a_ack = acks["time_s"].to_list(), acks["ack"].to_list()
    sends, acked, outstanding, at_edge = [], [], [], []
    j, high, prev_ack = 0, 0, None
    for i, (t, ack) in enumerate(zip(a_t, a_ack, strict=True)):
        while j < len(d_t) and d_t[j] <= t:
            high = max(high, d_end[j])
            j += 1
        nxt = a_t[i + 1] if i + 1 < len(a_t) else float("inf")
        k, n = j, 0
        while k < len(d_t) and d_t[k] <= nxt:
            n += d_new[k]
            k += 1
        advances = prev_ack is not None and ack > prev_ack
        if advances and t > WARMUP_S and nxt - t < 0.01:
            sends.append(n)
            acked.append(ack - prev_ack)
            after = max(high, max(d_end[j:k], default=high)) - ack
            outstanding.append((t, after))
            at_edge.append(after >= window)
        prev_ack = ack if prev_ack is None else max(prev_ack, ack)
    # Stalls: nothing on the link either way for STALL_S; ended by a timeout if one fired at its end.
    times = c["time_s"].to_list()
    stalls = [(a, b) for a, b in zip(times, times[1:], strict=False) if b - a >= STALL_S]
    ended = [any(abs(b - t) <= 1e-3 for t in timeouts) for _, b in stalls]
    empty = []
    if port is not None:
        out_t = sorted(port["time_s"].to_list())
        out_at = {}  # (seq, len) of each data frame → the times it left the port
        for t, s, n in port.filter((pl.col("dir") == 0) & (pl.col("len") > 0)).select("time_s", "seq", "len").iter_rows():
            out_at.setdefault((s, n), []).append(t)
        d_seq, d_len = data["seq"].to_list(), data["len"].to_list()
        for a, b in stalls:
            last = bisect.bisect_right(d_t, a) - 1  # the last segment sent before the stall
            drained = last < 0 or any(d_t[last] < t <= a for t in out_at.get((d_seq[last], d_len[last]), ()))
            empty.append(drained and bisect.bisect_right(out_t, a) == bisect.bisect_left(out_t, b))
    # Lost segments (each timeout's retransmission): was the socket window full when it was first sent?
    first_sent: dict[int, float] = {}
    for t, end, new in zip(d_t, d_end, d_new, strict=True):
        if new:
            first_sent.setdefault(end, t)
    room = []
    for t_out in timeouts:
        k = next((i for i, t in enumerate(d_t) if t >= t_out - 1e-6 and not d_new[i]), None)
        if k is None or d_end[k] not in first_sent:
            continue
        t_s = first_sent[d_end[k]]
        sent_high = max((e for t, e in zip(d_t, d_end, strict=True) if t <= t_s), default=0)
        last_ack = max((a for t, a in zip(a_t, a_ack, strict=True) if t < t_s), default=1)
        room.append(sent_high - last_ack < window)
    counted = [s for s in sends if s > 0]
    step = max(1, len(d_t) // 3000)
    return {
        "acks": len(sends), "sends_2": sum(s == 2 for s in counted) / max(1, len(counted)),
        "sends_3plus": sum(s >= 3 for s in counted) / max(1, len(counted)),
        "acked_2mss": sum(a == 2 * mss for a in acked) / max(1, len(acked)),
        "at_edge": sum(at_edge) / max(1, len(at_edge)), "max_outstanding": max((o for _, o in outstanding), default=0),
        "window": window, "stalls": len(stalls), "stalls_by_timeout": sum(ended), "stalls_empty": sum(empty),
        "port_frames": None if port is None else port.height, "stalled_s": sum(b - a for a, b in stalls),
        "losses_with_room": sum(room), "losses_checked": len(room), "final_seq": max(d_end, default=0),
        "seq_t": d_t[::step], "seq": d_end[::step], "out_t": [t for t, _ in outstanding], "out": [o for _, o in outstanding],
    }


def table2_traces(summary: pl.DataFrame, seeds: Sequence[int], cells: int, socks_kib: Sequence[int]) -> dict[str, Any]:
    """Table 2's two patterns traced: at `cells` (Table 2's assumed buffer) and at the scanned
    buffer nearest it where the smaller socket buffer is good (no cell lost) and the larger in
    deadlock — or, if no buffer shows that, collapsed (living on timeouts: the same
    stalls, less deep; README A10). Returns the buffers showing each pattern, the one traced
    for §3.2's mechanism and why, and each traced run's analysis by (cells, KiB)."""
    small, large = (k * 1024 for k in socks_kib)
    scan = summary.filter((pl.col("scenario") == "atm") & (pl.col("mss") == 1460) & (pl.col("cbr_mbps") == 60.0)
                          & (pl.col("unit") == "cell") & (pl.col("discard") == "tail-drop") & pl.col("sock").is_in([small, large]))
    row = {(r["cells"], r["sock"]): r for r in scan.iter_rows(named=True)}
    both = sorted(c for c in {c for c, _ in row} if (c, small) in row and (c, large) in row)
    good = [c for c in both if row[(c, small)]["cells_dropped"] == 0]
    pattern = {crit: [c for c in good if CRITERIA[crit](row[(c, large)])] for crit in ("deadlock", "collapse")}
    crit = "deadlock" if pattern["deadlock"] else "collapse"
    chosen = min(pattern[crit], key=lambda c: (abs(c - cells), c)) if pattern[crit] else None
    why = (f"the scanned buffer nearest {cells} where 25 KB loses nothing and 38 KB is in {crit}"
           + ("" if crit == "deadlock" else " — no scanned buffer gives 38 KB a deadlock") if chosen is not None
           else f"no scanned buffer shows the two patterns; Table 2's assumed {cells}")
    runs = {}
    for c in dict.fromkeys([cells, *([chosen] if chosen is not None else [])]):
        for k in socks_kib:
            runs[(c, k)] = [traced_run(Spec(mss=1460, sock=k * 1024, cells=c), s) for s in seeds]
    big = ("seq_t", "seq", "out_t", "out")
    plain = {f"{c} cells, {k} KB": [{n: v for n, v in r.items() if n not in big} for r in rs] for (c, k), rs in runs.items()}
    return {"pattern_cells": pattern, "chosen": chosen, "why": why, "cells": cells, "socks_kib": tuple(socks_kib), "runs": runs,
            "plain": plain, "scan": {c: {k: (row[(c, k * 1024)]["mbps"], row[(c, k * 1024)]["share"]) for k in socks_kib} for c in both}}
