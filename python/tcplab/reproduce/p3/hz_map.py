"""Beyond the slides (F18): the smallest HZ that keeps ImTCP's error within a stated bound, on
paths whose free bandwidth spans 10 Mb/s – 1 Gb/s, against the prediction from the timer grid.

The slides end the HZ discussion with 「計測精度・実行速度を考慮して *HZ* を決定する必要がある」
(S6 L113) and give no rule. With HZ the stage releases packets on a 1/HZ grid, so a stream's rate
is R_max/m for whole m, R_max = S·8·HZ (S = 1,500 B: 1.2 Mb/s at HZ 100, as S6 L95 gives). Near a
rate r the grid's step is about r²/R_max, half of it r/(2·R_max) relative: an error bound ε needs
R_max ≥ r/(2ε), i.e. HZ ≥ r/(2·ε·S·8) (EVIDENCE §4). The map runs `accuracy_udp.toml` with its
bottleneck at 20 Mb/s, 200 Mb/s and 2 Gb/s and a constant UDP CBR at half of it (free bandwidth
about 10, 100 and 1,000 Mb/s), over an HZ grid, and finds per path the smallest HZ from which
on every larger HZ of the grid keeps the mean (over seeds) of the per-seed median |Â − A|/A
within ε; the check is that it lies within one grid step of the prediction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p3.checks import errors, make
from tcplab.reproduce.p3.constants import PACKET_BITS
from tcplab.reproduce.p3.marks import criteria
from tcplab.reproduce.p3.stats import interval
from tcplab.reproduce.report import Report

__all__ = ["BOUND", "GRID", "PATHS", "f18", "points", "predicted_hz", "section", "smallest_hz"]

BOUND = 0.10
"""ε: the error bound (ours, F21's median criterion)."""
GRID = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000)
"""The HZ grid: 1-2-5 steps from 1 kHz (1.2 Mb/s·10 = R_max 12 Mb/s) to 1 MHz (12 Gb/s)."""
PATHS = {"20Mbps": "1Gbps", "200Mbps": "1Gbps", "2Gbps": "10Gbps"}
"""Bottleneck rate → the other links' rate: the shipped GbE where it is above the bottleneck,
10 Gb/s beside the 2 Gb/s bottleneck (else a GbE access link would be the bottleneck)."""
LINKS = (0, 1, 3, 4, 5)
"""accuracy_udp.toml's links other than the bottleneck (links.2, r1 → dn)."""
DURATION = "20s"
"""Block B's run length: 15 s of results after the 5 s start."""


def _bps(rate: str) -> float:
    value, unit = float(rate[:-4]), rate[-4:]
    return value * {"Mbps": 1e6, "Gbps": 1e9}[unit]


def points(hz: Sequence[int] = GRID) -> list[tuple[str, dict[str, Any], str, int]]:
    """(scenario, overrides, path, HZ) for every path × HZ."""
    out = []
    for rate, access in PATHS.items():
        half = f"{_bps(rate) / 2e6:g}Mbps"
        o: dict[str, Any] = {"links.2.rate": rate, "flows.1.cbr.schedule": [{"at": "0s", "rate": half}], "run.duration": DURATION}
        o.update({f"links.{i}.rate": access for i in LINKS})
        out += [("accuracy_udp", {**o, "defaults.tcp.hz": h}, rate, h) for h in hz]
    return out


def predicted_hz(free_bps: float, bound: float = BOUND) -> float:
    """HZ ≥ r/(2·ε·S·8): the timer grid's half step at `free_bps` within `bound`."""
    return free_bps / (2 * bound * PACKET_BITS)


def _medians(runs: Sequence[Mapping[str, Any]]) -> list[float]:
    return [float(np.median(e)) if len(e := errors(r)) else math.nan for r in runs]


def _free(runs: Sequence[Mapping[str, Any]]) -> float:
    """The mean truth over the runs' measurements after the start (what the estimates aim at)."""
    t = [x for r in runs for x, s in zip((r.get("meas") or {}).get("truth_bps", []), (r.get("meas") or {}).get("start_s", [])) if s >= 5.0]
    return float(np.mean(t)) if t else math.nan


def smallest_hz(by_hz: Mapping[int, Sequence[Mapping[str, Any]]], bound: float = BOUND) -> int | None:
    """The smallest HZ of the grid from which on the mean of the per-seed median errors is within
    `bound` at every larger HZ too (None: not even at the largest; a HZ with no result is not)."""
    found = None
    for h in sorted(by_hz, reverse=True):
        m, _, _ = interval(_medians(by_hz[h]))
        if math.isnan(m) or m > bound:
            break
        found = h
    return found


def f18(by_path: Mapping[str, Mapping[int, Sequence[Mapping[str, Any]]]], bound: float = BOUND) -> list[Check]:
    """Per path: the smallest HZ within `bound` against `predicted_hz` of its free bandwidth;
    pass when it is the grid's first HZ at or above the prediction or a neighbour of it, FAIL
    when further, not exercised when no HZ of the grid meets the bound. Beyond the paper."""
    out = []
    for path, by_hz in by_path.items():
        grid = sorted(by_hz)
        free = _free([r for h in grid for r in by_hz[h]])
        pred = predicted_hz(free, bound)
        at = next((i for i, h in enumerate(grid) if h >= pred), len(grid) - 1)
        found = smallest_hz(by_hz, bound)
        meds = {h: interval(_medians(by_hz[h]))[0] for h in grid}
        if found is None:
            status = "not exercised"
        else:
            status = "pass" if abs(grid.index(found) - at) <= 1 else "FAIL"
        seeds = len(next(iter(by_hz.values()), []))
        shown = ", ".join(f"{h:,}: {100 * v:.1f} %" for h, v in meds.items())
        measured = (f"bottleneck {path}, free {free / 1e6:.1f} Mb/s: smallest HZ within {100 * bound:g} % "
                    f"{'none' if found is None else f'{found:,}'}, predicted {pred:,.0f} (grid {grid[at]:,}); "
                    f"mean median error over {seeds} seeds by HZ — {shown}")
        out.append(make("F18", status, f"the smallest HZ keeping the median error within {100 * bound:g} % is the timer grid's prediction "
                        "r/(2·ε·S·8) within one grid step (ours)", measured,
                        {"path": path, "free_bps": free, "predicted_hz": pred, "smallest_hz": found,
                         "median_error": {str(h): v for h, v in meds.items()}}, figure="F18 (S6, beyond)", paper=False))
    return out


def section(rep: Report, checks: Sequence[Check]) -> None:
    """The map as a table in report.md."""
    rows = [c for c in checks if c.values.get("id") == "F18"]
    if not rows:
        return
    rep.heading("Beyond the slides: the smallest HZ per path (F18)", 3)
    rep.paragraph("「計測精度・実行速度を考慮して *HZ* を決定する必要がある」 (S6 L113). `accuracy_udp.toml` with the bottleneck "
                  "at each rate and a constant CBR at half of it, 20 s per run; the smallest HZ of the grid from which on the mean "
                  f"per-seed median error stays within {100 * BOUND:g} % (ours), against HZ ≥ r/(2·ε·S·8) (EVIDENCE §4).")
    criteria(rep, rows)
    grid = sorted({int(h) for c in rows for h in c.values["median_error"]})
    rep.table(("bottleneck", "free Mb/s", "predicted HZ", "smallest HZ", "verdict", *(f"{h:,}" for h in grid)),
              [(c.values["path"], f"{c.values['free_bps'] / 1e6:.1f}", f"{c.values['predicted_hz']:,.0f}",
                "none" if c.values["smallest_hz"] is None else f"{c.values['smallest_hz']:,}", c.values["status"],
                *(f"{100 * c.values['median_error'].get(str(h), math.nan):.1f} %" for h in grid)) for c in rows])
