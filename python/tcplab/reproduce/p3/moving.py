"""Block F, beyond the slides: ImTCP and ImTCP-bg when the bottleneck moves.

The slides add ImTCP-bg's RTT rule because 「ImTCP の計測結果が信頼できない場合がある」 (S4 L60);
issue 35 asks how ImTCP-bg reacts when the measurement is wrong because the bottleneck moves.
`moving.toml`: background.toml's path with a second 100 Mb/s hop (r2 → r3) after the Dummynet;
the first hop carries a 30 Mb/s UDP CBR throughout (free 70 Mb/s, the tight link), and from
MOVE_S four window-limited TCP flows cross the second hop only, so the tight link moves there and
the path's free bandwidth falls to about 30 Mb/s, below the search range ImTCP has settled on.
The truth is the path's (`analysis.avail.path_truth`: per 10 ms the least over the two hops).

Two checks, both beyond the slides (not counted), with criteria fixed before the runs:
- ImTCP finds the new available bandwidth within a few measurements (F7's criterion, median
  results to come within ±10 % ≤ 5, on this step);
- ImTCP-bg stays a background transfer on the new bottleneck: its cross traffic loses at most
  DROP_MAX (F30's 5 %) of what it carries alone over the 20 s after the move, and less than
  beside Reno (paired by seed). Reno, TCP-LP and LEDBAT beside; the transient (the first
  TRANSIENT_S after the move) and the background flow's rate against the new free bandwidth
  reported. The second hop's buffer is mapped (HOP2_BUFFERS): at 250 packets its queue can hold
  30 ms, so the RTT rule (δ = 1.4 over 30 ms) can fire; at the shipped 50 it cannot (6 ms).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tcplab.analysis.avail import link_capacity, path_truth
from tcplab.reproduce.figures import new_figure
from tcplab.reproduce.findings import Check
from tcplab.reproduce.p3.checks import QUOTES, _ci, _mbps, f7
from tcplab.reproduce.p3.constants import CCS, DROP_MAX
from tcplab.reproduce.p3.marks import criteria, mark
from tcplab.reproduce.p3.stats import combine, order, threshold
from tcplab.reproduce.report import Report

__all__ = ["END_S", "HOOK", "HOP2_BUFFERS", "HOPS", "MOVE_S", "TRANSIENT_S", "background", "figure", "keep", "estimate_ratio", "points", "refind", "section", "windows"]

HOOK = "tcplab.reproduce.p3.moving:keep"
HOPS = ("r1->dn", "r2->r3")
"""The two hops the background flow crosses, in path order (both watched by moving.toml)."""
MOVE_S = 20.0
"""When the second hop's cross traffic starts (moving.toml)."""
END_S = 40.0
TRANSIENT_S = 2.0
"""The first seconds after the move, reported apart (the estimate still finding the new level)."""
HOP2_BUFFERS = (50, 250)
"""The second hop's buffer (packets): as the first hop's (shipped), and deep enough for the RTT rule."""
BIN_S = 0.1


def keep(result: Any, measured: str | None = None) -> dict[str, Any]:
    """What one run gives the checks, as JSON text in the column `data`: `meas` (the measurement
    stage's results of `measured` with `truth_bps`, the path's free bandwidth over each one's
    span), `bins` (100 ms: time_s, truth_bps the path's, tight the hop that set it most often,
    bg / cross1 / cross2 the bit/s of the background flow on the second hop, the first hop's
    UDP, the second hop's TCP flows), `rates` (`windows` means of those), `capacity_bps`
    (the second hop's), `flows` (the summary's entries)."""
    s = result.summary
    names = {f["id"]: f["name"] for f in s["flows"]}
    end = float(s["sim_time_s"])
    table = path_truth(result, HOPS, measured=measured)
    per = round(BIN_S / float(s["link_usage"]["interval_s"]))
    nb = table.height // per
    avail = table["avail_bps"].to_numpy()[: nb * per].reshape(nb, per).mean(axis=1)
    tight = table["tight"].to_numpy()[: nb * per].reshape(nb, per)
    bins: dict[str, Any] = {"time_s": [round((i + 1) * BIN_S, 6) for i in range(nb)], "truth_bps": avail.tolist(),
                            "tight": [int(np.bincount(row).argmax()) for row in tight]}
    usage = result.trace("link_usage")
    t = usage["time_s"].to_numpy()
    idx = np.clip(np.ceil(t / BIN_S - 1e-9).astype(int) - 1, 0, nb - 1)
    flow = np.asarray([names[int(i)] for i in usage["flow"].to_numpy()], dtype=object)
    hop = usage["pipe_name"].to_numpy()
    b = usage["bytes"].to_numpy().astype(float)
    for key, on_hop, pick in (("bg", HOPS[1], lambda n: n == "bg"), ("cross1", HOPS[0], lambda n: n == "udp"),
                              ("cross2", HOPS[1], lambda n: n.startswith("y"))):
        k = (hop == on_hop) & np.asarray([pick(n) for n in flow], dtype=bool)
        bins[key] = (np.bincount(idx[k], weights=b[k], minlength=nb) * 8 / BIN_S).tolist()
    out: dict[str, Any] = {"flows": s["flows"], "sim_time_s": end, "capacity_bps": link_capacity(result, HOPS[1]), "bins": bins,
                           "rates": windows(bins)}
    if measured is not None:
        m = result.trace("measurements")
        mid = next(k for k, v in names.items() if v == measured)
        m = m.filter(m["flow"] == mid)
        cols = {c: m[c].to_list() for c in ("time_s", "start_s", "estimate_bps", "flag", "low_bps", "high_bps", "packets")}
        spans = list(zip(cols["start_s"], cols["time_s"], strict=True))
        cols["truth_bps"] = path_truth(result, HOPS, measured=measured, spans=spans)["avail_bps"].to_list() if spans else []
        out["meas"] = cols
    return {"data": json.dumps(out)}


def windows(bins: Mapping[str, Sequence[float]]) -> dict[str, dict[str, float]]:
    """Mean bit/s of each of `bins`' series (truth_bps, bg, cross1, cross2, those present) over
    `before` (5 s to the move), `transient` (the move to TRANSIENT_S after), `after` (from then
    to the end) and `moved` (the move to the end)."""
    t = np.asarray(bins["time_s"], dtype=float)
    spans = {"before": (5.0, MOVE_S), "transient": (MOVE_S, MOVE_S + TRANSIENT_S), "after": (MOVE_S + TRANSIENT_S, END_S), "moved": (MOVE_S, END_S)}
    out: dict[str, dict[str, float]] = {}
    for name, (a, z) in spans.items():
        k = (t > a + 1e-9) & (t <= z + 1e-9)
        out[name] = {key: float(np.mean(np.asarray(bins[key], dtype=float)[k])) if k.any() else math.nan
                     for key in ("truth_bps", "bg", "cross1", "cross2") if key in bins}
    return out


def points(buffers: Sequence[int] = HOP2_BUFFERS) -> list[tuple[str, dict[str, Any], str, int]]:
    """(scenario, overrides, controller or "alone", second hop's buffer): each of `CCS` on
    moving.toml (ImTCP-bg on ImTCP's stage, the others without it) and the cross traffic alone
    (moving_alone.toml), at each buffer."""
    out = []
    for q in buffers:
        o = {"queue(r2->r3)": f"{q}pkts"}
        out += [("moving", {**o, "flows.0.tcp.cc": c, "flows.0.tcp.variant": "imtcp" if c == "imtcp-bg" else "none"}, c, q) for c in CCS]
        out.append(("moving_alone", o, "alone", q))
    return out


def _case(buffer: int, reading: str) -> str:
    return f"hop-2 buffer {buffer} pkts" + ("" if reading == "shipped" else f", ImTCP-bg reading {reading}")


def refind(runs: Sequence[Any], buffer: int, reading: str = "shipped") -> Check:
    """F7's criterion on the move: the ImTCP-bg runs' results after MOVE_S (not counted)."""
    c = f7(runs, (MOVE_S,), END_S, f"moving bottleneck, {_case(buffer, reading)}")
    c.paper = False
    c.figure = f"F7 (beyond, block F), {_case(buffer, reading)}"
    c.values = {**c.values, "block": "F", "case": _case(buffer, reading), "buffer": buffer, "reading": reading}
    return c


def _rate(run: Any, window: str, key: str) -> float:
    return float(run["rates"][window].get(key, math.nan))


def estimate_ratio(run: Any, after: bool) -> float:
    """The median estimate over the path's truth of a run's results that start before the move
    (from 5 s) or, with `after`, TRANSIENT_S after it (NaN without one)."""
    m = run.get("meas") or {}
    st = np.asarray(m.get("start_s", []), dtype=float)
    est, tr = np.asarray(m.get("estimate_bps", []), dtype=float), np.asarray(m.get("truth_bps", []), dtype=float)
    k = (st >= MOVE_S + TRANSIENT_S) if after else ((st >= 5.0) & (st < MOVE_S))
    k &= tr > 0
    return float(np.median(est[k] / tr[k])) if k.any() else math.nan


def background(by_cc: Mapping[str, Sequence[Any]], alone: Sequence[Any], buffer: int, reading: str = "shipped") -> Check:
    """ImTCP-bg on the new bottleneck: the second hop's cross traffic with each controller
    against alone over `moved` (paired by seed); ImTCP-bg's drop ≤ DROP_MAX and below Reno's."""
    drop = {c: [1 - _rate(w, "moved", "cross2") / _rate(a, "moved", "cross2") for w, a in zip(runs, alone, strict=True)]
            for c, runs in by_cc.items()}
    first = {c: [1 - _rate(w, "transient", "cross2") / _rate(a, "transient", "cross2") for w, a in zip(runs, alone, strict=True)]
             for c, runs in by_cc.items()}
    free = [_rate(a, "after", "truth_bps") for a in alone]
    ratio = {c: [_rate(w, "after", "bg") / f for w, f in zip(runs, free, strict=True)] for c, runs in by_cc.items()}
    before = {c: [_rate(w, "before", "bg") for w in runs] for c, runs in by_cc.items()}
    a = threshold(drop["imtcp-bg"], DROP_MAX)
    b = order([x - y for x, y in zip(drop["reno"], drop["imtcp-bg"], strict=True)])
    status = combine(a, b)
    f2 = lambda x: f"{x:.2f}"  # noqa: E731
    measured = (f"{_case(buffer, reading)}: the new bottleneck's cross traffic alone {_ci([_rate(r, 'moved', 'cross2') for r in alone], _mbps)} "
                f"over {MOVE_S:g}–{END_S:g} s; its drop beside " + ", ".join(f"{c} {_ci(v)}" for c, v in drop.items())
                + f" (ImTCP-bg ≤ {DROP_MAX:.0%}: {a}; below Reno's: {b}); in the first {TRANSIENT_S:g} s beside "
                + ", ".join(f"{c} {_ci(v)}" for c, v in first.items())
                + f"; background rate / the new free bandwidth ({_ci(free, _mbps)}) after {MOVE_S + TRANSIENT_S:g} s: "
                + ", ".join(f"{c} {_ci(v, f2)}" for c, v in ratio.items())
                + "; before the move: " + ", ".join(f"{c} {_ci(v, _mbps)}" for c, v in before.items())
                + f"; ImTCP's estimate over the path's truth, median per seed: before the move {_ci([estimate_ratio(r, False) for r in by_cc['imtcp-bg']], f2)}, "
                f"after {_ci([estimate_ratio(r, True) for r in by_cc['imtcp-bg']], f2)}")
    quote, place = QUOTES["F10"]
    return Check(figure=f"block F (beyond): the bottleneck moves, {_case(buffer, reading)}",
                 claim=f"when the bottleneck moves, ImTCP-bg stays a background transfer on the new one: its cross traffic loses "
                       f"≤ {DROP_MAX:.0%} over the {END_S - MOVE_S:g} s after the move, less than beside Reno (paired; ours)",
                 measured=measured, passed=status == "pass", paper=False,
                 values={"id": "moving", "status": status, "block": "F", "case": _case(buffer, reading), "buffer": buffer,
                         "reading": reading, "drop": drop, "transient_drop": first,
                         "ratio_to_free": ratio, "free_after_bps": free},
                 quote=quote, location=place, exercised=True, inconclusive=status == "inconclusive")


def section(rep: Report, checks: Sequence[Check]) -> None:
    """Block F in report.md: what was run, the criteria, each case's two checks."""
    rows = [c for c in checks if c.values.get("block") == "F"]
    if not rows:
        return
    rep.heading("Beyond the slides: the bottleneck moves (block F)", 3)
    rep.paragraph("「ImTCP の計測結果が信頼できない場合がある」 (S4 L60). `moving.toml`: the background flow crosses two 100 Mb/s "
                  "hops; the first carries a 30 Mb/s UDP CBR throughout (free 70 Mb/s), and from 20 s four TCP flows with 64 KB "
                  "windows (RTT 30 ms) cross the second only, so the tight link moves there and the path's free bandwidth falls to "
                  "about 30 Mb/s, below ImTCP's search range. The truth is the path's: per 10 ms the least over the two hops. "
                  "`moving_alone.toml` is the cross traffic alone. Each controller on the same seeds; the second hop's buffer as "
                  "the first's (50 packets: 6 ms, below the RTT rule's 12 ms) and 250 packets (30 ms, where the rule can fire); "
                  "ImTCP-bg's other RTT reading (`stage`, as block D's map) beside the shipped one.")
    criteria(rep, rows)
    rep.table(("case", "check", "measured", "verdict"),
              [(c.values["case"], "re-find (F7's criterion)" if c.values.get("id") == "F7" else "background on the new bottleneck",
                c.measured, mark(c)) for c in rows])


def figure(moving: Mapping[int, Mapping[str, Sequence[Any]]]) -> Any:
    """Seed 1 (the first run) at the first buffer: the path's truth, ImTCP's estimates and
    ImTCP-bg's rate against Reno's, and the second hop's cross traffic beside each and alone."""
    if not moving:
        return None
    runs = moving[min(moving)]
    fig, (top, bottom) = new_figure(2, sharex=False)
    r = runs["imtcp-bg"][0]
    b, m = r["bins"], r.get("meas") or {}
    t = np.asarray(b["time_s"])
    top.plot(t, np.asarray(b["truth_bps"]) / 1e6, lw=0.8, color="0.5", label="path truth A (100 ms)")
    if m.get("time_s"):
        top.plot(m["time_s"], np.asarray(m["estimate_bps"]) / 1e6, "o", ms=2, ls="", label="ImTCP estimate")
    for cc in ("imtcp-bg", "reno"):
        top.plot(t, np.asarray(runs[cc][0]["bins"]["bg"]) / 1e6, lw=0.7, label=f"{cc} rate")
    top.axvline(MOVE_S, color="k", lw=0.5, ls=":")
    top.set_ylabel("Mb/s")
    top.set_title(f"The bottleneck moves at {MOVE_S:g} s (seed {r['seed']}, hop-2 buffer {min(moving)} pkts)")
    top.legend(fontsize=7)
    for cc in ("alone", "imtcp-bg", "reno"):
        bottom.plot(t, np.asarray(runs[cc][0]["bins"]["cross2"]) / 1e6, lw=0.7, label=f"hop-2 cross traffic, {cc}")
    bottom.set_xlim(MOVE_S - 2, END_S)
    bottom.set_xlabel("time (s)")
    bottom.set_ylabel("Mb/s")
    bottom.legend(fontsize=7)
    return fig
