"""Study 000's unknowns mapped, not tuned: where each finding of the paper holds.

The paper gives neither the bottleneck buffer, nor the receivers' ACK behaviour (which
follows from `tcp_rmem` and the NIC's receive buffers, see EVIDENCE.md §4), nor BIC's
`initial_ssthresh` as it took effect, nor how far apart the four iperf processes started.
`run_map` runs the simultaneous and the staggered start over a grid of these, `MapPlan.seeds` seeds
per point, on the sweep runner (a local process pool or a Dask cluster; with a store, a rerun
resumes), each run measured in its worker (`runs.map_stats`), and judges each seed by the same
rules as the reproduction (`runs.judge`); `map_table` counts, per point, the seeds in which
each finding holds.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tcplab.reproduce.figures import new_figure
from tcplab.reproduce.p0.constants import ACK_POLICIES, FINDINGS, MAP_STARTS, SCENARIOS
from tcplab.reproduce.p0.runs import bottleneck_buffer_path, judge, map_stats, run_overrides
from tcplab.reproduce.runner import run_points

__all__ = ["MapPlan", "map_figure", "map_table", "point_label", "run_map"]


@dataclasses.dataclass(frozen=True)
class MapPlan:
    """The grid: bottleneck buffers (packets), ACK policies (keys of `ACK_POLICIES`), BIC
    initial_ssthresh values (segments; 0 = none), start skews (s) — the skews other than the
    first are run only at the first ACK policy and ssthresh — seeds, duration and window (s)."""

    buffers: tuple[int, ...]
    acks: tuple[str, ...]
    ssthresholds: tuple[int, ...]
    skews_s: tuple[float, ...]
    seeds: tuple[int, ...]
    duration_s: float
    window: tuple[float, float]

    @staticmethod
    def make(quick: bool) -> MapPlan:
        """The full map (≥ 10 seeds per point, the paper's 100 s) or a quick one."""
        acks = tuple(ACK_POLICIES)
        if quick:
            return MapPlan((250, 500, 1000), acks, (0, 100), (0.002,), (1, 2), 30.0, (9.9, 29.7))
        return MapPlan(
            (100, 250, 500, 1000, 2000, 4000), acks, (0, 100), (0.002, 0.0005, 0.005),
            tuple(range(1, 11)), 100.0, (9.9, 99.9),
        )

    def points(self) -> list[tuple[str, int, float, int]]:
        """(ack, ssthresh, skew_s, buffer) of every grid point, in run order."""
        pts = [(a, s, self.skews_s[0], b) for a, s, b in itertools.product(self.acks, self.ssthresholds, self.buffers)]
        pts += [(self.acks[0], self.ssthresholds[0], k, b) for k in self.skews_s[1:] for b in self.buffers]
        return pts


def _overrides(name: str, ack: str, ssthresh: int, skew_s: float, buffer: int) -> dict[str, Any]:
    """Scenario overrides for one grid point of shipped scenario `name`."""
    o: dict[str, Any] = {bottleneck_buffer_path(name): f"{buffer}pkts"}
    o.update(ACK_POLICIES[ack])
    o["defaults.tcp.bic.initial_ssthresh"] = ssthresh
    for i in range(4):
        o[f"hosts.{i}.start_skew"] = f"{skew_s * 1e6:g}us"
    return o


def run_map(plan: MapPlan, progress: Callable[[str], None] = lambda _: None, *, out: Path | None = None,
            workers: int | None = None, cluster: Any = None) -> list[dict[str, Any]]:
    """Run every point of the grid for every seed, both starts, on the sweep runner (stores in
    `out/<start>/` when `out` is given); one row per (point, seed): the point (ack, ssthresh,
    skew_s, buffer_pkts), the seed, the simultaneous run's Jain, utilisation and loss orders,
    the staggered run's Jain and utilisation, and the verdicts of `judge`."""
    points = plan.points()
    stats: dict[str, dict[tuple[int, int], dict[str, Any]]] = {}
    for name in MAP_STARTS:
        progress(f"map: {name} start, {len(points)} points × {len(plan.seeds)} seeds")
        table = run_points([(SCENARIOS / f"{name}.toml", _overrides(name, *p)) for p in points], plan.seeds,
                           overrides=run_overrides(plan.duration_s), hook=map_stats, hook_args={"window": list(plan.window)},
                           out=out, workers=workers, cluster=cluster, name=f"p0-map-{name}")
        stats[name] = {(r["index"], r["seed"]): r for r in table.iter_rows(named=True)}
    rows = []
    for i, (ack, ssthresh, skew, buffer) in enumerate(points):
        for seed in plan.seeds:
            sim, stag = (stats[name][(i, seed)] for name in MAP_STARTS)
            row = {"ack": ack, "ssthresh": ssthresh, "skew_s": skew, "buffer_pkts": buffer, "seed": seed}
            row.update({k: sim[k] for k in ("jain", "util", "first_loss_s", "first_loss_order", "start_order")})
            row.update(staggered_jain=stag["jain"], staggered_util=stag["util"])
            row.update(judge(sim, stag))
            rows.append(row)
    return rows


def point_label(ack: str, ssthresh: int, skew_s: float) -> str:
    """A legend label for one curve of the map."""
    return f"ACKs {ack}, ssthresh {ssthresh or 'none'}, skew {skew_s * 1e3:g} ms"


def map_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per grid point: how many seeds bear out each finding (`<key>` = count, `runs`), the
    number of findings held by a majority of seeds (`majority`), the simultaneous start's
    mean Jain, utilisation and first-loss time, and the staggered start's mean Jain and
    utilisation."""
    points: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        points.setdefault((r["ack"], r["ssthresh"], r["skew_s"], r["buffer_pkts"]), []).append(r)
    out = []
    for (ack, ssthresh, skew, buffer), runs in points.items():
        n = len(runs)
        counts = {k: sum(bool(r[k]) for r in runs) for k in FINDINGS}
        out.append(
            {
                "ack": ack,
                "ssthresh": ssthresh,
                "skew_s": skew,
                "buffer_pkts": buffer,
                "runs": n,
                **counts,
                "majority": sum(1 for c in counts.values() if 2 * c > n),
                "jain": float(np.mean([r["jain"] for r in runs])),
                "util": float(np.mean([r["util"] for r in runs])),
                "staggered_jain": float(np.mean([r["staggered_jain"] for r in runs])),
                "staggered_util": float(np.mean([r["staggered_util"] for r in runs])),
                "first_loss_s": float(np.nanmean([r["first_loss_s"] for r in runs])) if any(not math.isnan(r["first_loss_s"]) for r in runs) else math.nan,
            }
        )
    return out


def map_figure(table: Sequence[dict[str, Any]]) -> Figure:
    """One panel per finding: the share of seeds that bear it out against the bottleneck
    buffer, a curve per (ACK policy, ssthresh, skew)."""
    fig, axes = new_figure(len(FINDINGS), height=1.8 * len(FINDINGS) + 1.5)
    curves: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for p in table:
        curves.setdefault((p["ack"], p["ssthresh"], p["skew_s"]), []).append(p)
    markers = dict(zip(ACK_POLICIES, "os^", strict=True))
    for ax, (key, meaning) in zip(axes, FINDINGS.items(), strict=True):
        for i, ((ack, ssthresh, skew), pts) in enumerate(curves.items()):
            pts = sorted(pts, key=lambda p: p["buffer_pkts"])
            style = "--" if ssthresh else "-"
            # Curves that coincide stay visible: each is nudged by a small fixed offset.
            y = [p[key] / p["runs"] + 0.012 * (i - len(curves) / 2) for p in pts]
            ax.plot([p["buffer_pkts"] for p in pts], y, style, marker=markers.get(ack, "o"), ms=3.5, alpha=0.85,
                    label=point_label(ack, ssthresh, skew))
        ax.set_xscale("log")
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("share of seeds (nudged)")
        ax.set_title(meaning, fontsize=9)
    axes[-1].set_xlabel("bottleneck buffer (packets)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=7)
    return fig
